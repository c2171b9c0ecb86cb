"""Integration tests of efu --module udp with efu-udpgen on 127.0.0.1 (no Kafka: --broker none).

  efu_udp_integration.py clean-link|skip-every|sweep-short|gso-gro|receive-threads|gro-overflow|
                         live-kernel-drops --port P

Environment: EFU_BUILD_DIR (bin/efu, bin/efu-udpgen), EFU_SOURCE_DIR; PYTHONPATH with tests/
(support) and scripts/udp_sweep (the udp link tools' efu_link and sweep, which these tests
drive), as ctest sets it. Exit 0 = pass.
"""
from __future__ import annotations

import argparse
import csv
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import efu_link
from support.checks import check, finish
from support.efu import BUILD, SOURCE, Efu, binary
from support.loss import lost_datagrams, rejected_datagrams
from support.waits import wait_until

# A rate efu sustains on a loaded 2-core box (see the toolchain notes: the sender alone manages
# ~0.3 Mpps at 1472 B on loopback). Small generator batches and a deep ring give efu slack when
# another process takes its core for a few ms.
COUNT = 1_000_000
SIZE = 1472
RATE_PPS = 100_000
GEN_SMOOTH = ["--batch", "16"]
EFU_SLACK = ["--ring-size", "65536"]

def start_efu(port: int, tmp: Path, extra: list[str]) -> Efu:
    """efu --module udp --broker none on 127.0.0.1:port, ready once every receive thread's
    socket is bound (SO_REUSEPORT binds them one after another: traffic that started between
    two binds would see the kernel move flows from one socket to another)."""
    sockets = int(extra[extra.index("--receive-threads") + 1]) if "--receive-threads" in extra else 1
    return Efu(["--module", "udp", "--broker", "none", "--bind", "127.0.0.1", "--port", str(port),
                "--stats-interval", "1", "--log-level", "warn", *extra], tmp,
               binary_path=binary("efu", BUILD), ready_udp_port=port, ready_sockets=sockets,
               ready_timeout_s=20)


def kill_and_show_log(efu: Efu):
    """After a failure: efu killed, the end of its log printed."""
    efu.kill()
    print(efu.log()[-3000:])


def burst_while_stopped(efu: Efu, bins, port: int, gen_args: list[str]) -> dict:
    """An efu-udpgen burst while efu is stopped (SIGSTOP), so its socket buffer overflows."""
    os.kill(efu.pid, signal.SIGSTOP)
    try:
        return efu_link.run_udpgen(bins, port, gen_args, timeout_s=60)
    finally:
        os.kill(efu.pid, signal.SIGCONT)


def run_efu_and_gen(port: int, gen_args: list[str], tmp: Path,
                    efu_extra: list[str] = ()) -> tuple[dict, dict]:
    bins = efu_link.Binaries.find(BUILD)
    efu = start_efu(port, tmp, EFU_SLACK + list(efu_extra))
    try:
        gen = efu_link.run_udpgen(bins, port, gen_args + GEN_SMOOTH, timeout_s=120)
        stats = efu.stop(timeout_s=30)
    except BaseException:
        kill_and_show_log(efu)
        raise
    print(f"efu-udpgen: {gen}")
    print("efu stats: " + ", ".join(f"{k}={v}" for k, v in sorted(stats.items())
                                    if k.startswith(("udp.", "receive.", "process."))))
    check_loss_accounting(stats, [gen])
    return gen, stats


def host_drops_of(stats: dict) -> int:
    """Datagrams efu's host lost or rejected: the plugin never saw them."""
    return lost_datagrams(stats) + rejected_datagrams(stats)


# The kernel coalesces at most this many datagrams into one UDP GRO buffer (UDP_GRO_CNT_MAX).
MAX_GRO_SEGMENTS = 64


def check_loss_accounting(stats: dict, gens: list[dict], gro: bool = False) -> int:
    """Whatever the load: the sequence numbers account for every datagram sent (arrived, lost,
    or after the last one that arrived: a dropped tail is invisible to sequence numbers, `tail`
    = numbers sent or skipped beyond udp.expected), and what never reached the plugin is what
    efu's host counted as dropped. With UDP GRO the kernel drops whole coalesced buffers and
    counts one drop per buffer, so receive.dropped.kernel then bounds the datagrams lost from
    below and 64 times it from above. Returns the datagrams the host lost."""
    host_drops = host_drops_of(stats)
    sent = sum(g["packets"] for g in gens)
    skipped = sum(g["skipped"] for g in gens)
    packets = stats.get("udp.packets", 0)
    tail = sent + skipped - stats.get("udp.expected", 0)
    check(tail >= 0 and (host_drops != 0 or tail == 0),
          f"numbers after the last arrival {tail}: >= 0, and 0 without host drops")
    check(packets + stats.get("udp.lost", 0) + tail == sent + skipped,
          f"udp.packets {packets} + udp.lost {stats.get('udp.lost')} + tail {tail} == sent "
          f"{sent} + skipped {skipped}")
    lost_by_host = sent - packets
    if not gro:
        check(lost_by_host == host_drops,
              f"udp.packets {packets} + host drops {host_drops} == sent {sent}")
    else:
        kernel = stats.get("receive.dropped.kernel", 0)
        other = host_drops - kernel
        check(other + kernel <= lost_by_host <= other + MAX_GRO_SEGMENTS * kernel,
              f"datagrams lost by the host {lost_by_host} within [{other + kernel}, "
              f"{other + MAX_GRO_SEGMENTS * kernel}] (GRO: kernel drops count buffers)")
    if host_drops != 0:
        print(f"note: efu's host lost {lost_by_host} datagram(s) (counted: {host_drops}); the exact "
              "per-datagram checks are relaxed to the accounting above")
    return lost_by_host


def test_clean_link(port: int, tmp: Path):
    # Accounting, not a loss-free rate (that is a benchmark's result): run_efu_and_gen checks
    # that what a loaded machine drops is counted; the rest must arrive intact and in order.
    gen, stats = run_efu_and_gen(
        port, ["--count", str(COUNT), "--size", str(SIZE), "--rate-pps", str(RATE_PPS)], tmp,
        efu_extra=["--verify-payload", "on"])
    check(gen["packets"] == COUNT, f"efu-udpgen sent {gen['packets']} == {COUNT}")
    check(stats.get("udp.bytes") == stats.get("udp.packets", 0) * SIZE,
          f"udp.bytes {stats.get('udp.bytes')} == udp.packets x {SIZE}")
    if host_drops_of(stats) == 0:
        check(stats.get("udp.packets") == COUNT, f"udp.packets {stats.get('udp.packets')} == {COUNT}")
        check(stats.get("udp.expected") == COUNT, f"udp.expected {stats.get('udp.expected')} == {COUNT}")
        check(stats.get("udp.lost") == 0, f"udp.lost {stats.get('udp.lost')} == 0")
    for name in ("udp.out_of_order", "udp.duplicates", "udp.restarts", "udp.runts", "udp.corrupted"):
        check(stats.get(name) == 0, f"{name} {stats.get(name)} == 0")


def test_skip_every(port: int, tmp: Path):
    count, k = COUNT, 1000
    gen, stats = run_efu_and_gen(
        port, ["--count", str(count), "--size", str(SIZE), "--rate-pps", str(RATE_PPS),
               "--skip-every", str(k)], tmp)
    # The range sent is count + skipped numbers; floor(range / k) of them are skipped.
    seq_range = count + gen["skipped"]
    check(gen["skipped"] == seq_range // k, f"skipped {gen['skipped']} == floor({seq_range} / {k})")
    check(gen["skipped"] == 1001, f"skipped {gen['skipped']} == 1001 (range 1001001)")
    if host_drops_of(stats) == 0:
        check(stats.get("udp.packets") == count, f"udp.packets {stats.get('udp.packets')} == {count}")
        check(stats.get("udp.lost") == gen["skipped"],
              f"udp.lost {stats.get('udp.lost')} == skipped {gen['skipped']}")
        check(stats.get("udp.expected") == seq_range,
              f"udp.expected {stats.get('udp.expected')} == {seq_range}")


def test_sweep_short(port: int, tmp: Path):
    out = tmp / "sweep"
    r = subprocess.run([str(SOURCE / "scripts" / "udp-sweep"), "--short", "--build", str(BUILD),
                        "--port", str(port), "--out", str(out)],
                       capture_output=True, text=True, timeout=120)
    print(r.stdout + r.stderr)
    check(r.returncode == 0, f"udp-sweep --short exit code {r.returncode} == 0")
    csv_path, png_path = out / "udp-sweep.csv", out / "udp-sweep.png"
    check(csv_path.is_file(), f"{csv_path} exists")
    if csv_path.is_file():
        with open(csv_path) as f:
            reader = csv.DictReader(f)
            rows = list(reader)
            header = reader.fieldnames or []
        import sweep
        check(header == sweep.COLUMNS, f"CSV columns {header} == {sweep.COLUMNS}")
        check([int(r["size"]) for r in rows] == sweep.SHORT_SIZES,
              f"one row per size: {[r.get('size') for r in rows]} == {sweep.SHORT_SIZES}")
        for row in rows:
            empty = [k for k, v in row.items() if v in ("", None)]
            check(not empty, f"size {row['size']}: no empty column {empty}")
            check(int(row["received_packets"]) > 0, f"size {row['size']}: received packets > 0")
    check(png_path.is_file() and png_path.stat().st_size > 1000, f"{png_path} is a non-trivial file")
    if png_path.is_file():
        check(png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", "PNG magic bytes")


def flows_by_port(stats: dict) -> dict[int, dict]:
    """The udp.flow.N.* counters of each tracked flow, keyed by the sender's source port."""
    flows: dict[int, dict] = {}
    slots = {m.group(1) for k in stats if (m := re.fullmatch(r"udp\.flow\.(\d+)\.packets", k))}
    for n in sorted(slots, key=int):
        prefix = f"udp.flow.{n}."
        if stats.get(prefix + "packets", 0) == 0:
            continue  # a slot no sender took
        flow = {k[len(prefix):]: v for k, v in stats.items() if k.startswith(prefix)}
        flows[int(flow["source.port"])] = flow
    return flows


def check_flows(stats: dict, gens: list[dict], sizes: list[int], gro: bool = False):
    """Each sender is one flow, accounted on its own: what it sent arrived, in order, and its
    loss is exactly what it left out, unless the host dropped datagrams (then they are in the
    totals and the per-flow loss is at least the skips)."""
    host_lost = check_loss_accounting(stats, gens, gro)
    check(stats.get("udp.flows") == len(gens), f"udp.flows {stats.get('udp.flows')} == {len(gens)}")
    check(stats.get("udp.untracked.packets", 0) == 0, "no untracked datagrams")
    flows = flows_by_port(stats)
    for g, size in zip(gens, sizes):
        f = flows.get(g["source_port"])
        name = f"flow from port {g['source_port']} (size {size})"
        check(f is not None, f"{name} is tracked")
        if f is None:
            continue
        check(f["source.family"] == 4 and f["source.address_low"] == 0x7F000001,
              f"{name}: source 127.0.0.1 ({f['source.family']}, {f['source.address_low']})")
        # In order on its path through efu: nothing is late, nothing doubled, nothing corrupted.
        for k in ("out_of_order", "duplicates", "restarts", "runts", "corrupted"):
            check(f.get(k, 0) == 0, f"{name}: {k} {f.get(k, 0)} == 0")
        check(f["bytes"] == f["packets"] * size, f"{name}: bytes {f['bytes']} == packets x {size}")
        check(f["packets"] + f["lost"] == f["expected"],
              f"{name}: packets {f['packets']} + lost {f['lost']} == expected {f['expected']}")
        if host_lost == 0:
            check(f["expected"] == g["packets"] + g["skipped"],
                  f"{name}: expected {f['expected']} == sent {g['packets']} + skipped {g['skipped']}")
            check(f["packets"] == g["packets"], f"{name}: packets {f['packets']} == sent {g['packets']}")
            check(f["lost"] == g["skipped"], f"{name}: lost {f['lost']} == skipped {g['skipped']}")
        else:
            # Some of this flow's datagrams may be among the host's drops: its loss is its skips
            # plus at most all of them, counting a dropped tail as lost too.
            tail = g["packets"] + g["skipped"] - f["expected"]
            check(g["skipped"] <= f["lost"] + tail <= g["skipped"] + host_lost,
                  f"{name}: skipped {g['skipped']} <= lost {f['lost']} + tail {tail} <= skipped + "
                  f"datagrams the host lost {host_lost}")
    for k in ("packets", "bytes", "expected", "lost", "out_of_order", "duplicates"):
        total = sum(f.get(k, 0) for f in flows.values())
        check(stats.get(f"udp.{k}") == total, f"udp.{k} {stats.get(f'udp.{k}')} == sum of flows {total}")


def run_efu_and_gens(port: int, gen_args: list[list[str]], tmp: Path,
                     efu_extra: list[str]) -> tuple[list[dict], dict]:
    bins = efu_link.Binaries.find(BUILD)
    efu = start_efu(port, tmp, EFU_SLACK + ["--rcvbuf", "12000000", "--verify-payload", "on"] +
                    list(efu_extra))
    try:
        gens = efu_link.run_udpgens(bins, port, gen_args, timeout_s=120)
        stats = efu.stop(timeout_s=30)
    except BaseException:
        kill_and_show_log(efu)
        raise
    for g in gens:
        print(f"efu-udpgen: {g}")
    print("efu stats: " + ", ".join(f"{k}={v}" for k, v in sorted(stats.items())
                                    if v and k.startswith(("udp.", "receive.", "process."))))
    return gens, stats


def test_gso_gro(port: int, tmp: Path):
    # efu-udpgen --gso into efu --gro on: the kernel carries up to 64 datagrams per buffer both
    # ways, and efu must hand the plugin each datagram on its own, with its size and sequence
    # number (--verify-payload checks every byte). Four senders at once, so buffers of different
    # sizes interleave: 8972 and 1472 B (7 and 44 per 64 KB), 3000 B (21 per buffer, 63000 B: not
    # a divisor of the 64 KB slot), 100 B (64, the segment limit). Counts that are not multiples
    # of the generator's 64-datagram batch end each sender with a short GSO message.
    sizes = [8972, 1472, 3000, 100]
    counts = [20_003, 40_001, 30_007, 60_011]
    gen_args = []
    for size, count in zip(sizes, counts):
        args = ["--gso", "--size", str(size), "--count", str(count), "--rate-pps", "25000"]
        if size == 3000:
            args += ["--skip-every", "97"]  # known loss in one flow only
        gen_args.append(args)
    gens, stats = run_efu_and_gens(port, gen_args, tmp, ["--gro", "on"])
    for g, count in zip(gens, counts):
        check(g["packets"] == count, f"efu-udpgen size {g['size']} sent {g['packets']} == {count}")
        check(g["messages"] < g["packets"],
              f"efu-udpgen size {g['size']}: {g['messages']} GSO messages < {g['packets']} datagrams")
    check(stats.get("receive.gro.buffers", 0) > 0, "efu received coalesced GRO buffers")
    check(stats.get("receive.gro.buffers", 0) < stats.get("receive.packets", 0),
          f"fewer GRO buffers {stats.get('receive.gro.buffers')} than datagrams "
          f"{stats.get('receive.packets')}")
    check(stats.get("receive.truncated", 0) == 0, "nothing truncated")
    check_flows(stats, gens, sizes, gro=True)


def test_receive_threads(port: int, tmp: Path):
    # 4 senders (4 source ports) into --receive-threads 2 --processing-threads 2: the kernel
    # spreads the flows over the two sockets (SO_REUSEPORT), the plugin's route key keeps each
    # flow on one processing thread. Every datagram counted once, each flow in order, each flow's
    # loss exact (one sender leaves out every 50th number), the summed counters right.
    sizes = [1472, 1472, 1472, 1472]
    count = 50_000
    gen_args = [["--size", "1472", "--count", str(count), "--rate-pps", "25000", "--batch", "16"]
                for _ in sizes]
    gen_args[2] += ["--skip-every", "50"]
    gens, stats = run_efu_and_gens(port, gen_args, tmp,
                                   ["--receive-threads", "2", "--processing-threads", "2"])
    per_thread = stats.get("receive.rx0.packets", 0) + stats.get("receive.rx1.packets", 0)
    check(per_thread == stats.get("receive.packets"),
          f"receive.rx0.packets + receive.rx1.packets {per_thread} == receive.packets "
          f"{stats.get('receive.packets')}")
    kernel = stats.get("receive.rx0.dropped.kernel", 0) + stats.get("receive.rx1.dropped.kernel", 0)
    check(kernel == stats.get("receive.dropped.kernel", 0),
          f"per-thread kernel drops {kernel} == receive.dropped.kernel")
    check(stats.get("process.packets", 0) + stats.get("receive.dropped.ring_full", 0)
          == stats.get("receive.packets"), "every received datagram processed or counted")
    # Which socket a flow lands on is the kernel's hash: both threads busy is likely, not certain.
    print(f"receive threads: rx0 {stats.get('receive.rx0.packets', 0)}, "
          f"rx1 {stats.get('receive.rx1.packets', 0)} datagrams")
    check_flows(stats, gens, sizes)


def test_gro_overflow(port: int, tmp: Path):
    # efu --gro on, stopped (SIGSTOP) while an efu-udpgen --gso burst overflows its small socket
    # buffer: the kernel drops whole coalesced buffers. The sequence numbers still account for
    # every datagram, and receive.dropped.kernel (one per dropped buffer) bounds the datagrams
    # lost from below and 64 times it from above.
    bins = efu_link.Binaries.find(BUILD)
    efu = start_efu(port, tmp, ["--gro", "on", "--rcvbuf", "300000", "--ring-size", "65536"])
    try:
        gen = burst_while_stopped(efu, bins, port, ["--gso", "--size", "8972", "--count", "5000"])
        stats = efu.stop(timeout_s=30)
    except BaseException:
        kill_and_show_log(efu)
        raise
    print(f"efu-udpgen: {gen}")
    print("efu stats: " + ", ".join(f"{k}={v}" for k, v in sorted(stats.items())
                                    if v and k.startswith(("udp.", "receive."))))
    kernel = stats.get("receive.dropped.kernel", 0)
    check(kernel > 0, f"the burst overflowed the socket: receive.dropped.kernel {kernel} > 0")
    lost = check_loss_accounting(stats, [gen], gro=True)
    print(f"datagrams lost {lost} in {kernel} dropped buffer(s)")


def prometheus_value(url: str, name: str) -> int | None:
    """One sample's value from efu's /metrics, or None if it is not there (yet)."""
    with urllib.request.urlopen(url, timeout=5) as r:
        for line in r.read().decode().splitlines():
            # name{labels} value, or name value
            if line.startswith((name + " ", name + "{")):
                return int(float(line.rsplit(None, 1)[1]))
    return None


def test_live_kernel_drops(port: int, tmp: Path):
    # Kernel drops are read from the socket (SO_MEMINFO) by efu's stats thread and counted by
    # the receive thread: they must show while efu runs, not only in the final stats at stop.
    # efu is stopped (SIGSTOP) while a burst overflows its small socket buffer, then goes on;
    # the drop count must reach /metrics with no further datagram sent, and the final stats
    # must account for every datagram.
    bins = efu_link.Binaries.find(BUILD)
    metrics_port = port + 100
    url = f"http://127.0.0.1:{metrics_port}/metrics"
    name = "efu_receive_dropped_kernel_total"
    efu = start_efu(port, tmp, ["--rcvbuf", "300000", "--ring-size", "65536",
                                "--metrics", f"127.0.0.1:{metrics_port}"])
    try:
        wait_until(lambda: prometheus_value(url, name) is not None, 20,
                            "efu's /metrics to list receive.dropped.kernel", efu.proc)
        check(prometheus_value(url, name) == 0, "no kernel drops before the burst")
        gen = burst_while_stopped(efu, bins, port, ["--size", "8972", "--count", "2000",
                                                    "--batch", "16"])
        live = 0
        deadline = time.monotonic() + 20  # bounded: the count shows within a few stats intervals
        while time.monotonic() < deadline and live == 0:
            live = prometheus_value(url, name) or 0
            time.sleep(0.1)
        stats = efu.stop(timeout_s=30)
    except BaseException:
        kill_and_show_log(efu)
        raise
    print(f"efu-udpgen: {gen}")
    final = stats.get("receive.dropped.kernel", 0)
    check(live > 0, f"kernel drops seen in /metrics while efu ran: {live} > 0")
    check(live <= final, f"the live count {live} <= the final count {final}")
    check(final == live, f"no datagram was sent after the burst, so nothing was dropped after "
          f"the live count: final {final} == live {live}")
    check_loss_accounting(stats, [gen])


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("case", choices=["clean-link", "skip-every", "sweep-short", "gso-gro",
                                    "receive-threads", "gro-overflow", "live-kernel-drops"])
    p.add_argument("--port", type=int, required=True)
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="udp-it-") as tmp:
        {"clean-link": test_clean_link, "skip-every": test_skip_every,
         "sweep-short": test_sweep_short, "gso-gro": test_gso_gro,
         "receive-threads": test_receive_threads,
         "gro-overflow": test_gro_overflow, "live-kernel-drops": test_live_kernel_drops}[a.case](a.port, Path(tmp))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
