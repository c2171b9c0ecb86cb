"""udp-sweep: efu --module udp against efu-udpgen over a range of datagram sizes (Table 3
of the UDP measurements in docs/architecture.md §9), on 127.0.0.1. Writes <out>/udp-sweep.csv and
<out>/udp-sweep.png (rate, PER, CPU). See docs/udp-link-test.md."""
from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from pathlib import Path

import efu_link  # beside this file: a script's own directory is on the import path

STUDY_SIZES = [64, 128, 256, 472, 772, 1000, 1472, 1700, 1800, 1900, 2000, 2200, 2972, 4472,
               5972, 8972]
SHORT_SIZES = [64, 1472, 8972]
PER_FLOOR = 1e-9  # where PER 0 is drawn on the log axis

COLUMNS = [
    "size", "sent_packets", "sent_bytes", "offered_gbps", "offered_pps", "received_packets",
    "received_bytes", "received_gbps", "received_pps", "expected", "lost", "per", "per_sent", "out_of_order",
    "duplicates", "dropped_kernel", "dropped_ring_full", "rx_user_pct", "rx_sys_pct",
    "proc_user_pct", "proc_sys_pct", "efu_total_pct", "softirq_pct", "host_system_pct",
    "elapsed_s", "theory_10gbe_gbps", "threads",
]


def parse_args(argv):
    p = argparse.ArgumentParser(prog="udp-sweep", description=__doc__)
    p.add_argument("--sizes", help="comma-separated user data sizes (default: the 16 of the UDP "
                   "measurements in docs/architecture.md §9)")
    vol = p.add_mutually_exclusive_group()
    vol.add_argument("--packets", type=int, help="datagrams per size")
    vol.add_argument("--bytes", type=float, help="user data bytes per size (default 2e9)")
    rate = p.add_mutually_exclusive_group()
    rate.add_argument("--rate-gbps", type=float, help="paced offered rate (default: unthrottled)")
    rate.add_argument("--rate-pps", type=float, help="paced offered rate in datagrams/s")
    p.add_argument("--out", type=Path, default=Path("udp-sweep-out"), help="output directory")
    p.add_argument("--short", action="store_true",
                   help="CI mode: 3 sizes, 20000 datagrams each at 50000/s (< 60 s)")
    p.add_argument("--build", type=Path, default=efu_link.repo_root() / "build",
                   help="build directory with bin/efu and bin/efu-udpgen")
    p.add_argument("--port", type=int, default=19400, help="UDP port on 127.0.0.1")
    p.add_argument("--efu-args", default="", help="extra efu arguments, e.g. '--cpu rx=1,proc=0'")
    p.add_argument("--udpgen-args", default="", help="extra efu-udpgen arguments, e.g. '--cpu 0'")
    a = p.parse_args(argv)
    if a.short:
        a.sizes = a.sizes or ",".join(map(str, SHORT_SIZES))
        if a.packets is None and a.bytes is None:
            a.packets = 20000
        if a.rate_gbps is None and a.rate_pps is None:
            a.rate_pps = 50000
    try:
        a.size_list = [int(s) for s in a.sizes.split(",")] if a.sizes else STUDY_SIZES
    except ValueError:
        p.error(f"--sizes: '{a.sizes}' is not a comma-separated list of integers")
    for s in a.size_list:
        if not 8 <= s <= 65507:
            p.error(f"--sizes: '{s}' is out of range; expected 8..65507")
    if a.packets is None and a.bytes is None:
        a.bytes = 2e9
    return a


def measure(bins, a, size: int, workdir: Path) -> dict:
    count = a.packets if a.packets else max(1, int(a.bytes // size))
    gen_args = ["--size", str(size), "--count", str(count), *a.udpgen_args.split()]
    if a.rate_gbps:
        gen_args += ["--rate-gbps", str(a.rate_gbps)]
    if a.rate_pps:
        gen_args += ["--rate-pps", str(a.rate_pps)]
    efu = efu_link.Efu(bins, a.port, workdir / f"stats-{size}.json", a.efu_args.split(),
                       log=workdir / f"efu-{size}.log")
    try:
        cpu = efu_link.CpuWindow(efu.pid)
        cpu.start()
        gen = efu_link.run_udpgen(bins, a.port, gen_args, timeout_s=600)
        time.sleep(0.3)  # let efu drain what is queued before the CPU window closes
        cpu.stop()
        stats = efu.stop()
    except BaseException:
        efu.kill()
        raise
    elapsed = gen["elapsed_s"] or 1e-9
    received = stats.get("udp.packets", 0)
    received_bytes = stats.get("udp.bytes", 0)
    expected = stats.get("udp.expected", 0)
    lost = stats.get("udp.lost", 0)
    rx_u, rx_s = cpu.pct("efu-rx")
    all_u, all_s = cpu.pct("")
    proc_u, proc_s = all_u - rx_u, all_s - rx_s
    return {
        "size": size,
        "sent_packets": gen["packets"],
        "sent_bytes": gen["bytes"],
        "offered_gbps": gen["gbps"],
        "offered_pps": gen["pps"],
        "received_packets": received,
        "received_bytes": received_bytes,
        "received_gbps": received_bytes * 8 / elapsed / 1e9,
        "received_pps": received / elapsed,
        "expected": expected,
        "lost": lost,
        "per": lost / expected if expected else 1.0,
        # Tail loss is invisible to sequence accounting; against what was sent it is not.
        "per_sent": (gen["packets"] - (expected - lost)) / gen["packets"] if gen["packets"] else 0.0,
        "out_of_order": stats.get("udp.out_of_order", 0),
        "duplicates": stats.get("udp.duplicates", 0),
        "dropped_kernel": stats.get("receive.dropped.kernel", 0),
        "dropped_ring_full": stats.get("receive.dropped.ring_full", 0),
        "rx_user_pct": rx_u, "rx_sys_pct": rx_s,
        "proc_user_pct": proc_u, "proc_sys_pct": proc_s,
        "efu_total_pct": all_u + all_s,
        "softirq_pct": cpu.softirq_pct, "host_system_pct": cpu.system_pct,
        "elapsed_s": elapsed,
        "theory_10gbe_gbps": efu_link.theoretical_user_gbps(size),
        "threads": ";".join(f"{k}:{u:.3f}/{s:.3f}" for k, (u, s) in sorted(cpu.threads.items())),
    }


def plot(rows: list[dict], png: Path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [r["size"] for r in rows]
    fig, (ax1, ax2, ax3) = plt.subplots(3, 1, figsize=(8, 11), sharex=True)
    fine = sorted(set(list(range(8, 9001, 8)) + sizes))
    ax1.plot(fine, [efu_link.theoretical_user_gbps(s) for s in fine], "k--", lw=1,
             label="10 GbE user-data limit")
    ax1.plot(sizes, [r["offered_gbps"] for r in rows], "s-", label="offered (efu-udpgen)")
    ax1.plot(sizes, [r["received_gbps"] for r in rows], "o-", label="received (efu udp)")
    ax1.set_ylabel("user data rate [Gb/s]")
    ax1.legend(loc="lower right")
    ax1.grid(alpha=0.3)
    pers = [r["per"] if r["per"] > 0 else PER_FLOOR for r in rows]
    ax2.semilogy(sizes, pers, "o-", color="tab:red")
    zero = [s for s, r in zip(sizes, rows) if r["per"] == 0]
    if zero:
        ax2.semilogy(zero, [PER_FLOOR] * len(zero), "o", mfc="white", color="tab:red",
                     label=f"PER 0 (drawn at {PER_FLOOR:g})")
        ax2.legend(loc="upper right")
    ax2.set_ylabel("packet error ratio (lost / expected)")
    ax2.grid(alpha=0.3, which="both")
    ax3.plot(sizes, [r["rx_user_pct"] + r["rx_sys_pct"] for r in rows], "o-", label="efu-rx total")
    ax3.plot(sizes, [r["rx_sys_pct"] for r in rows], "v--", label="efu-rx system")
    ax3.plot(sizes, [r["proc_user_pct"] + r["proc_sys_pct"] for r in rows], "s-",
             label="other efu threads")
    ax3.plot(sizes, [r["softirq_pct"] for r in rows], "^-", label="host softirq (all CPUs)")
    ax3.set_ylabel("CPU load [% of one core]")
    ax3.set_xlabel("user data per datagram [bytes]")
    ax3.legend(loc="upper right")
    ax3.grid(alpha=0.3)
    fig.suptitle("efu udp link test on 127.0.0.1")
    fig.tight_layout()
    fig.savefig(png, dpi=100)


def main(argv=None) -> int:
    a = parse_args(argv)
    bins = efu_link.Binaries.find(a.build)
    for w in efu_link.tuning_warnings("127.0.0.1"):
        print(f"udp-sweep: warning: {w}", file=sys.stderr)
    a.out.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="udp-sweep-") as tmp:
        for size in a.size_list:
            row = measure(bins, a, size, Path(tmp))
            rows.append(row)
            print(f"udp-sweep: size={size} offered={row['offered_gbps']:.3f} Gb/s "
                  f"received={row['received_gbps']:.3f} Gb/s {row['received_pps']:.0f} pps "
                  f"PER={row['per']:.3g} rx_cpu={row['rx_user_pct'] + row['rx_sys_pct']:.0f}% "
                  f"softirq={row['softirq_pct']:.0f}%", file=sys.stderr)
    csv_path = a.out / "udp-sweep.csv"
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    png_path = a.out / "udp-sweep.png"
    plot(rows, png_path)
    print(f"udp-sweep: wrote {csv_path} and {png_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
