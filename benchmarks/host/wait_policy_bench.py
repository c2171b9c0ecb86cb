#!/usr/bin/env python3
"""wait_policy_bench: a processing thread's CPU against its busy time, per wait policy and rate.

efu (release build, --broker none: no Kafka, so what is measured is efu's own receive and
processing) runs a detector plugin, fed on loopback by that detector's generator sending ONE
datagram per send call, evenly spaced (--batch 1, as a detector's electronics send), at each rate
and at saturation (the generator as fast as it can). For every (detector, rate) both wait
policies run back to back in the same session, so they are compared on the same machine state:

  - proc_cpu / busy: the processing thread's CPU (its schedstat run time) over the thread's busy
    time (process.busy_ns: from finding work to its lanes being empty again). Target:
    proc_cpu <= 1.3 * busy + 1 % of a core over the window.
  - all ns/readout: the CPU of every efu thread over the readouts efu parsed
    (readouts.received). Target at 20 k LoKI packets/s: <= 60 ns (the reference EFU: 57 ns).
  - busy ns/readout: the work itself (what a perfect wait would cost).

Placement: efu's threads all on --efu-cpu (receive and processing threads pinned with --cpu, the
rest by taskset), the generator on --gen-cpu. The window is from just before the generator starts
to 0.3 s after it ends (so an idle efu's ticks are in it, as they are in production).

Accounting: every datagram the generator sent is in receive.packets or receive.dropped.kernel,
and every one received is processed or in receive.dropped.ring_full (printed as 'lost' per run;
a benchmark reports, it does not assert).

  benchmarks/host/wait_policy_bench.py --build build --json out.json
  benchmarks/host/wait_policy_bench.py --detectors loki --rates 20000 --duration 5
"""

import argparse
import json
import os
import pathlib
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Per detector: plugin, plugin options, generator, its options, and the readouts-parsed counter.
# Neutrons per pulse are chosen so that every packet but a pulse's last is full: LoKI packs 372
# readouts of 24 B into 8972 B (20 full packets a pulse); multiblade 447 readouts of 20 B, 6 per
# neutron.
DETECTORS = {
    "loki": {
        "module": "caen",
        "efu_args": ["--geometry", str(ROOT / "modules/caen/configs/loki.json")],
        "gen": "efu-caen-gen",
        "gen_args": ["--geometry", str(ROOT / "modules/caen/configs/loki.json"),
                     "--neutrons-per-pulse", "7440"],
        "readouts": "readouts.received",
    },
    "multiblade": {
        "module": "multiblade",
        "efu_args": [],
        "gen": "efu-multiblade-gen",
        "gen_args": ["--neutrons-per-pulse", "1490"],
        "readouts": "readouts.received",
    },
}


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def threads(pid):
    """{tid: name} of a process."""
    out = {}
    for task in pathlib.Path(f"/proc/{pid}/task").iterdir():
        try:
            out[int(task.name)] = (task / "comm").read_text().strip()
        except OSError:
            pass  # the thread ended meanwhile
    return out


def cpu_ns(pid, tid):
    """Run time of one thread in ns (schedstat), or 0 if it is gone."""
    try:
        return int(pathlib.Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0])
    except OSError:
        return 0


def snapshot(pid):
    names = threads(pid)
    return {tid: (name, cpu_ns(pid, tid)) for tid, name in names.items()}


def wait_for_thread(pid, name, timeout_s=20):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if name in threads(pid).values():
            return True
        time.sleep(0.05)
    return False


def policy_args(policy):
    """'adaptive' or 'spin', optionally '/US': that --receive-coalesce-us (efu's default else)."""
    name, _, coalesce = policy.partition("/")
    return ["--wait-policy", name] + (["--receive-coalesce-us", coalesce] if coalesce else [])


def run_one(args, det, rate, policy, port):
    d = DETECTORS[det]
    bindir = pathlib.Path(args.build) / "bin"
    stats = tempfile.NamedTemporaryFile(prefix="wait_policy_", suffix=".json", delete=False).name
    cpu = str(args.efu_cpu)
    efu_cmd = ["taskset", "-c", cpu, str(bindir / "efu"), "--module", d["module"], *d["efu_args"],
               "--broker", "none", "--bind", "127.0.0.1", "--port", str(port),
               "--cpu", f"rx={cpu},proc={cpu}", *policy_args(policy),
               "--stats-json", stats, "--log-level", "warn"]
    efu = subprocess.Popen(efu_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        if not wait_for_thread(efu.pid, "efu-proc0"):
            raise RuntimeError(f"efu did not start: {efu_cmd}")
        time.sleep(0.5)  # past the start-up: the receive thread is in recvmmsg
        before = snapshot(efu.pid)
        t0 = time.monotonic()
        gen_cmd = ["taskset", "-c", str(args.gen_cpu), str(bindir / d["gen"]), *d["gen_args"],
                   "--port", str(port), "--batch", "1", "--duration", str(args.duration)]
        if rate > 0:
            gen_cmd += ["--rate-pps", str(rate)]
        gen = subprocess.run(gen_cmd, capture_output=True, text=True,
                             timeout=args.duration + 60)
        if gen.returncode != 0:
            raise RuntimeError(f"generator failed: {gen.stderr.strip()}")
        gen_s = time.monotonic() - t0
        time.sleep(0.3)
        after = snapshot(efu.pid)
        window_s = time.monotonic() - t0
    finally:
        efu.send_signal(signal.SIGINT)
        try:
            efu.wait(timeout=30)
        except subprocess.TimeoutExpired:
            efu.kill()
            efu.wait()
    with open(stats) as f:
        c = json.load(f)
    os.unlink(stats)
    sent = int(gen.stdout.split("sent ")[1].split(" ")[0])

    def delta(name):
        return sum(cpu - before.get(tid, (name, 0))[1]
                   for tid, (n, cpu) in after.items() if n == name)

    all_cpu = sum(cpu - before.get(tid, ("", 0))[1] for tid, (_, cpu) in after.items())
    readouts = c[d["readouts"]]
    busy = c["process.busy_ns"]
    proc = delta("efu-proc0")
    # efu's own loss totals (efu/loss.h; tests/support/loss.py reads the same gauges): this
    # script imports nothing of the tests', so that it runs as documented.
    lost = c["lost.datagrams"] + c["rejected.datagrams"]
    return {
        "detector": det, "rate_pps": rate, "policy": policy, "sent": sent,
        "processed": c["process.packets"], "lost": lost,
        "lost_kernel": c["receive.dropped.kernel"], "lost_ring_full": c["receive.dropped.ring_full"],
        "accounted": c["process.packets"] + lost == sent,
        "pps": c["process.packets"] / gen_s, "window_s": window_s,
        "readouts": readouts, "busy_ns": busy, "proc_cpu_ns": proc,
        "rx_cpu_ns": delta("efu-rx"), "all_cpu_ns": all_cpu,
        "sleeps": c["process.sleeps"],
        "proc_over_busy": proc / busy if busy else float("nan"),
        "target_ok": proc <= 1.3 * busy + 0.01 * window_s * 1e9,
        "all_ns_per_readout": all_cpu / readouts if readouts else float("nan"),
        "busy_ns_per_readout": busy / readouts if readouts else float("nan"),
        "proc_ns_per_readout": proc / readouts if readouts else float("nan"),
        "rx_ns_per_readout": delta("efu-rx") / readouts if readouts else float("nan"),
    }


def median_run(runs):
    """One row of medians: each figure the median of the runs' (all runs must meet the target,
    lost and sent are summed)."""
    out = dict(runs[0])
    for key, value in runs[0].items():
        if isinstance(value, float):
            out[key] = statistics.median(r[key] for r in runs)
    out["sleeps"] = int(statistics.median(r["sleeps"] for r in runs))
    out["target_ok"] = all(r["target_ok"] for r in runs)
    out["accounted"] = all(r["accounted"] for r in runs)
    out["sent"] = sum(r["sent"] for r in runs)
    out["lost"] = sum(r["lost"] for r in runs)
    return out


def table(results):
    lines = ["| detector | rate (pps) | policy | pkts/s | proc CPU / busy | target | "
             "all ns/readout | busy ns/readout | proc ns/readout | rx ns/readout | sleeps | sent | "
             "lost |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        rate = "saturation" if r["rate_pps"] == 0 else f"{r['rate_pps']:,}"
        lines.append(
            f"| {r['detector']} | {rate} | {r['policy']} | {r['pps']:,.0f} | "
            f"{r['proc_over_busy']:.2f} | {'ok' if r['target_ok'] else 'MISSED'} | "
            f"{r['all_ns_per_readout']:.1f} | {r['busy_ns_per_readout']:.1f} | "
            f"{r['proc_ns_per_readout']:.1f} | {r['rx_ns_per_readout']:.1f} | {r['sleeps']:,} | "
            f"{r['sent']:,} | "
            f"{r['lost']:,}{'' if r['accounted'] else ' (unaccounted!)'} |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=str(ROOT / "build"), help="build dir (Release)")
    p.add_argument("--detectors", default="multiblade,loki")
    p.add_argument("--rates", default="1000,5000,10000,20000,0",
                   help="packets/s, comma-separated; 0: saturation")
    p.add_argument("--policies", default="adaptive,spin",
                   help="wait policies, comma-separated, each optionally with '/US', a "
                        "--receive-coalesce-us (adaptive/0: without receive coalescing)")
    p.add_argument("--duration", type=float, default=5, help="seconds per run")
    p.add_argument("--repeat", type=int, default=1,
                   help="runs per detector, rate and policy; the table gives their medians")
    p.add_argument("--efu-cpu", type=int, default=0)
    p.add_argument("--gen-cpu", type=int, default=1)
    p.add_argument("--json", help="write every run's figures here")
    args = p.parse_args()
    for det in args.detectors.split(","):
        if det not in DETECTORS:
            sys.exit(f"wait_policy_bench: --detectors: '{det}' is not known; expected "
                     f"{', '.join(DETECTORS)}")
    results = []
    with open("/proc/loadavg") as f:
        load_before = f.read().split()[:3]
    runs = []
    for det in args.detectors.split(","):
        for rate in (int(r) for r in args.rates.split(",")):
            # The policies alternate within each repetition, so drift in the machine's load
            # touches both alike.
            for _ in range(args.repeat):
                for policy in args.policies.split(","):
                    r = run_one(args, det, rate, policy, free_udp_port())
                    runs.append(r)
                    print(f"{det} {rate} {policy}: proc/busy {r['proc_over_busy']:.2f} "
                          f"all {r['all_ns_per_readout']:.1f} ns/readout "
                          f"busy {r['busy_ns_per_readout']:.1f} ns/readout "
                          f"{r['pps']:,.0f} pkts/s lost {r['lost']}", file=sys.stderr)
            for policy in args.policies.split(","):
                results.append(median_run([r for r in runs if r["detector"] == det and
                                           r["rate_pps"] == rate and r["policy"] == policy]))
    with open("/proc/loadavg") as f:
        load_after = f.read().split()[:3]
    print(table(results))
    if args.repeat > 1:
        print(f"\n(median of {args.repeat} runs each, figure by figure; 'target' and 'lost' "
              "over all runs)")
    print(f"\nload average before: {' '.join(load_before)}, after: {' '.join(load_after)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": sys.argv, "load_before": load_before,
                       "load_after": load_after, "medians": results, "runs": runs}, f, indent=1)


if __name__ == "__main__":
    main()
