#!/usr/bin/env python3
"""Runs ring_bench and receive_bench with repetitions and prints efu-vs-reference ratios.

    compare.py [--bin DIR] [--repetitions N] [--min-time S] [--pin] [--json-dir DIR]
               [--receive-only] [--reuse-json] [--filter REGEX]

Both binaries run with interleaved, randomly ordered repetitions so that load from other
processes on a shared machine falls on both sides of a ratio alike. Figures are the medians over
the repetitions. Ratios are efu / reference: for rates above 1 is better for efu, for CPU per
packet below 1 is better for efu. Each ratio has a 95 % bootstrap interval over the
repetitions: how far this run's noise could move it.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys

PARTIAL = False  # --filter: some benchmarks were not run


def run(binary, repetitions, min_time, out_path, reuse=False, bench_filter=None):
    if reuse:  # --reuse-json: the figures of an earlier run, printed again
        with open(out_path, encoding="utf-8") as f:
            return json.load(f)
    cmd = [
        binary,
        f"--benchmark_repetitions={repetitions}",
        "--benchmark_enable_random_interleaving=true",
        "--benchmark_display_aggregates_only=true",  # the JSON keeps every repetition
        f"--benchmark_min_time={min_time}",
        f"--benchmark_out={out_path}",
        "--benchmark_out_format=json",
    ]
    if bench_filter:
        cmd.append(f"--benchmark_filter={bench_filter}")
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True, stdout=sys.stderr)
    with open(out_path, encoding="utf-8") as f:
        return json.load(f)


def medians(report):
    """run_name -> median aggregate (items_per_second and the user counters), with the
    repetitions themselves under "_repetitions" (for the interval of each ratio)."""
    out, reps = {}, {}
    for b in report["benchmarks"]:
        if b.get("error_occurred"):
            sys.exit(f"compare: {b['name']} failed: {b.get('error_message')}")
        name = b["run_name"].removesuffix("/real_time")
        if b.get("aggregate_name") == "median":
            out[name] = dict(b)
        elif b.get("run_type") == "iteration":
            reps.setdefault(name, []).append(b)
    for name, b in out.items():
        b["_repetitions"] = reps.get(name, [])
    return out


def ratio_interval(e_reps, r_reps, key, resamples=2000):
    """A 95 % bootstrap interval of median(efu) / median(reference) over the repetitions
    (seeded: the same JSON prints the same interval), or None without repetitions (JSON of an
    older compare.py, which kept only the aggregates). It says how far the noise of this run
    could move the ratio."""
    e = [b[key] for b in e_reps if key in b]
    r = [b[key] for b in r_reps if key in b]
    if len(e) < 3 or len(r) < 3:
        return None
    rng = random.Random(12)
    ratios = sorted(
        statistics.median(rng.choices(e, k=len(e))) / statistics.median(rng.choices(r, k=len(r)))
        for _ in range(resamples))
    return ratios[int(0.025 * resamples)], ratios[int(0.975 * resamples) - 1]


class Missing(Exception):
    """A row's benchmark was not run (--filter)."""


def pick(results, prefix):
    """The one result whose run name starts with `prefix` (the packet count Arg may change)."""
    found = [v for k, v in results.items() if k.startswith(prefix)]
    if not found and PARTIAL:
        raise Missing(prefix)
    if len(found) != 1:
        sys.exit(f"compare: expected one result named {prefix}*, found {len(found)}")
    return found[0]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--bin", default="/tmp/build-bench/bin", help="folder with the two binaries")
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.5, help="seconds per repetition")
    p.add_argument("--pin", action="store_true",
                   help="pin threads: ring producer 0 / consumer 1; sender 0, receiver 1, "
                        "consumer 0 (EFU_RING_CPUS, EFU_RX_CPUS)")
    p.add_argument("--json-dir", default="/tmp", help="where the raw JSON results go")
    p.add_argument("--receive-only", action="store_true", help="skip ring_bench")
    p.add_argument("--reuse-json", action="store_true",
                   help="do not run: print the results in --json-dir again")
    p.add_argument("--filter", default=None,
                   help="run only the receive_bench benchmarks matching this regex (with "
                        "--receive-only); rows whose benchmarks did not run are left out, e.g. "
                        "'drain/(baseline|baseline_rxq_ovfl|efu_nosender|efu_nosender_cold|"
                        "efu_inline)/payload:(64|8972)/gso:0' for the plain path's figures")
    a = p.parse_args()
    global PARTIAL
    PARTIAL = a.filter is not None
    os.makedirs(a.json_dir, exist_ok=True)

    if a.pin:
        os.environ["EFU_RING_CPUS"] = "0,1"
        os.environ["EFU_RX_CPUS"] = "0,1,0"
    load_before = os.getloadavg()[0]
    ring = {} if a.receive_only else medians(
        run(os.path.join(a.bin, "ring_bench"), a.repetitions, a.min_time,
            os.path.join(a.json_dir, "ring_bench.json"), a.reuse_json))
    recv = medians(run(os.path.join(a.bin, "receive_bench"), a.repetitions, a.min_time,
                       os.path.join(a.json_dir, "receive_bench.json"), a.reuse_json, a.filter))

    load_after = os.getloadavg()[0]

    rows = []

    def add(name, e_prefix, b_prefix, key, results=None):
        """A row: `key` of the benchmark named e_prefix* against that of b_prefix*."""
        results = recv if results is None else results
        try:
            e, b = pick(results, e_prefix), pick(results, b_prefix)
            rows.append((name, e[key], b[key],
                         ratio_interval(e.get("_repetitions", []), b.get("_repetitions", []),
                                        key)))
        except Missing:
            pass

    rate, cpu = "items_per_second", "rx_cpu_ns_per_pkt"
    for mode in ("single", "bulk64") if ring else ():
        add(f"ring {mode} items/s", f"ring/{mode}/efu", f"ring/{mode}/boost", rate, ring)
    for payload in (64, 8972):
        e, b = f"receive/efu/payload:{payload}/", f"receive/baseline/payload:{payload}/"
        add(f"rx {payload} B pkts/s", e, b, rate)
        add(f"rx {payload} B rx cpu ns/pkt", e, b, cpu)
        add(f"rx {payload} B pkts/call", e, b, "pkts_per_call")
    # Drain mode: a full socket queue every call, so the receive path's own cost and top rate.
    for payload in (64, 1472, 8972):
        b = f"drain/baseline/payload:{payload}/gso:0"
        e = f"drain/efu/payload:{payload}/gso:0"
        add(f"drain {payload} B pkts/s", e, b, rate)
        add(f"drain {payload} B rx cpu ns/pkt", e, b, cpu)
        # Where efu's extra cost goes: the bare loop asking for the sender's address too, and
        # that plus cycling through a pool as large as efu's.
        add(f"drain {payload} B bare+address ns/pkt", f"drain/baseline_name/payload:{payload}", b,
            cpu)
        add(f"drain {payload} B bare+addr+pool ns/pkt",
            f"drain/baseline_name_cycle/payload:{payload}", b, cpu)
        add(f"drain {payload} B efu vs bare+addr+pool", e,
            f"drain/baseline_name_cycle/payload:{payload}", cpu)
        # A plugin with uses_source = false (the ESS detectors): no sender asked for.
        q = f"drain/efu_nosender/payload:{payload}"
        add(f"drain {payload} B no-sender pkts/s", q, b, rate)
        add(f"drain {payload} B no-sender ns/pkt", q, b, cpu)
        # The same when each burst finds the processing thread asleep (its wake-up included).
        c = f"drain/efu_nosender_cold/payload:{payload}"
        add(f"drain {payload} B no-sender, cold pkts/s", c, b, rate)
        add(f"drain {payload} B no-sender, cold ns/pkt", c, b, cpu)
        # The bare loop with SO_RXQ_OVFL and control buffers (efu's receiver until it read
        # drops with SO_MEMINFO): what that cost it.
        add(f"drain {payload} B bare+SO_RXQ_OVFL ns/pkt",
            f"drain/baseline_rxq_ovfl/payload:{payload}", b, cpu)
        # What --batch-bytes changed: the same with 64 datagrams per call whatever their size.
        u = f"drain/efu_nosender_unbounded/payload:{payload}"
        add(f"drain {payload} B no-sender, batch-bytes 0 pkts/s", u, b, rate)
        add(f"drain {payload} B no-sender, batch-bytes 0 ns/pkt", u, b, cpu)
        # A consumer that naps instead of waiting as efu's processing thread does.
        add(f"drain {payload} B no-sender, napping consumer ns/pkt",
            f"drain/efu_nosender_nap/payload:{payload}", b, cpu)
        # efu's receive code alone (no hand-off to another core), and the bare loop writing 2
        # and 4 batches of slots in turn instead of 1 (the footprint that a hand-off brings).
        add(f"drain {payload} B efu code alone ns/pkt", f"drain/efu_inline/payload:{payload}", b,
            cpu)
        for k in (2, 4):
            add(f"drain {payload} B bare, {k} batches of slots ns/pkt",
                f"drain/baseline_cycle{k}/payload:{payload}", b, cpu)
    # UDP GRO: efu --gro on against the bare receiver without GRO, both fed by a GSO sender.
    for payload in (64, 1472, 8972):
        b = f"drain/baseline/payload:{payload}/gso:1"
        e = f"drain/efu_gro/payload:{payload}/gso:1"
        add(f"gro {payload} B pkts/s", e, b, rate)
        add(f"gro {payload} B rx cpu ns/pkt", e, b, cpu)
        add(f"gro {payload} B batch-bytes 0 ns/pkt",
            f"drain/efu_gro_unbounded/payload:{payload}/gso:1", b, cpu)
        # The bare GRO loop (no hand-off, the same first buffers every call): the least any GRO
        # receiver can cost on this machine, and efu's GRO path against it.
        g = f"drain/baseline_gro/payload:{payload}/gso:1"
        add(f"gro {payload} B bare GRO loop ns/pkt", g, b, cpu)
        add(f"gro {payload} B efu vs bare GRO loop ns/pkt", e, g, cpu)
        add(f"gro {payload} B no-sender vs bare GRO loop ns/pkt",
            f"drain/efu_gro_nosender/payload:{payload}/gso:1", g, cpu)
    # Several receive threads: aggregate drain rate of 2 against 1 (reference = 1 thread).
    for payload in (64, 8972):
        two = f"drain_threads/efu/payload:{payload}/threads:2"
        one = f"drain_threads/efu/payload:{payload}/threads:1"
        add(f"rx-threads {payload} B 2 vs 1 pkts/s", two, one, rate)
        add(f"rx-threads {payload} B 2 vs 1 ns/pkt", two, one, cpu)

    # The machine may be shared: the load says how much the figures can be trusted.
    # With --reuse-json the count is the JSON's, not this invocation's --repetitions.
    counts = {b.get("repetitions") for b in list(recv.values()) + list(ring.values())}
    repetitions = counts.pop() if len(counts) == 1 else a.repetitions
    print(f"\nmedians of {repetitions} repetitions (efu vs boost / recvmmsg-only baseline; "
          f"see the row names for other pairs); "
          f"1-min load average {load_before:.2f} before, {load_after:.2f} after, "
          f"{os.cpu_count()} CPUs, {'pinned' if a.pin else 'not pinned'}")
    print(f"{'measure':<44} {'efu':>14} {'reference':>14} {'efu/ref':>8} {'95% interval':>14}")
    for name, e, r, interval in rows:
        span = f"{interval[0]:.3f}-{interval[1]:.3f}" if interval else "-"
        print(f"{name:<44} {e:>14.4g} {r:>14.4g} {e / r:>8.3f} {span:>14}")
    for mode in ("receive", "drain"):
        for payload in (64, 8972):
            try:
                e = pick(recv, f"{mode}/efu/payload:{payload}/")
            except Missing:
                continue
            print(f"{mode} efu {payload} B: consumer cpu ns/pkt "
                  f"{e['consumer_cpu_ns_per_pkt']:.4g}, ring-full drops {e['ring_full_drops']:.0f}")


if __name__ == "__main__":
    main()
