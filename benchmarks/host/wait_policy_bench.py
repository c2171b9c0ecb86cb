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
import pathlib
import statistics
import sys

import efu_bench_run

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


def policy_args(policy):
    """'adaptive' or 'spin', optionally '/US': that --receive-coalesce-us (efu's default else)."""
    name, _, coalesce = policy.partition("/")
    return ["--wait-policy", name] + (["--receive-coalesce-us", coalesce] if coalesce else [])


def run_one(args, det, rate, policy):
    r = efu_bench_run.run(args.build, DETECTORS[det], rate, args.duration, args.efu_cpu,
                          args.gen_cpu, efu_extra=policy_args(policy))
    r.update({
        "detector": det, "policy": policy,
        "target_ok": r["proc_cpu_ns"] <= 1.3 * r["busy_ns"] + 0.01 * r["window_s"] * 1e9,
    })
    return r


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
    load_before = efu_bench_run.load_average()
    runs = []
    for det in args.detectors.split(","):
        for rate in (int(r) for r in args.rates.split(",")):
            # The policies alternate within each repetition, so drift in the machine's load
            # touches both alike.
            for _ in range(args.repeat):
                for policy in args.policies.split(","):
                    r = run_one(args, det, rate, policy)
                    runs.append(r)
                    print(f"{det} {rate} {policy}: proc/busy {r['proc_over_busy']:.2f} "
                          f"all {r['all_ns_per_readout']:.1f} ns/readout "
                          f"busy {r['busy_ns_per_readout']:.1f} ns/readout "
                          f"{r['pps']:,.0f} pkts/s lost {r['lost']}", file=sys.stderr)
            for policy in args.policies.split(","):
                results.append(median_run([r for r in runs if r["detector"] == det and
                                           r["rate_pps"] == rate and r["policy"] == policy]))
    load_after = efu_bench_run.load_average()
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
