#!/usr/bin/env python3
"""efficiency_bench: efu's CPU per readout end to end, and the highest rate it takes without loss.

The figure to compare with other event-formation systems, in one command. For each detector,
efu (release build, --broker none: efu's receive and processing, not Kafka's threads; every efu
thread pinned to --efu-cpu, so the receive and processing threads share one core) is fed over
loopback by the detector's own generator (on --gen-cpu), --gen-batch datagrams per send call
(64 by default), full packets. The CAEN and CDT generators run with --replay-pulses 4: they
compute four pulses' neutrons and then resend those packets (computing every neutron, they top
out at 16-52 k packets/s here, below what efu takes; replaying, at 120-130 k). Multi-Blade's does
not (see DETECTORS), so its figures stay lower bounds where efu kept up:

1. Saturation: the generator as fast as it can for --duration s. Reported: packets/s and
   readouts/s efu processed, whole-process CPU per readout (every efu thread), and per thread:
   the processing thread, the receive thread, the rest (stats, the main thread); the processing
   thread's busy time per readout (process.busy_ns: the work itself); what was lost.
2. The highest rate without loss: fixed rates from the saturation rate down in steps of
   --step (10 % of it by default), --search-duration s each, until a run loses nothing. If the
   saturation run lost nothing, efu kept up with the generator and that rate is reported as a
   lower bound ('>=').

Every run's accounting (sent = processed + lost, efu/ops/loss.h) is checked and printed; a
benchmark reports, it does not assert. Results: a Markdown table on stdout, and with --json
every run's figures.

  benchmarks/host/efficiency_bench.py --build build-hw
  benchmarks/host/efficiency_bench.py --build build-hw --detectors loki,freia --json out.json
"""

import argparse
import json
import pathlib
import sys

import efu_bench_run

ROOT = pathlib.Path(__file__).resolve().parents[2]
CAEN = ROOT / "modules/caen/configs"


# The ESS generators compute every neutron as they send (16-52 k packets/s here, below what efu
# takes): they generate REPLAY pulses and then send those pulses' packets again and again
# (--replay-pulses), so sending is their only cost. Not for Multi-Blade: its clustering orders
# hits by time, and a replay's times jump back by four pulses each round, so every replayed hit
# would take the late-hit path (hits.late) and the figure would not be the ordered stream's.
REPLAY = ["--replay-pulses", "4"]


def caen(name):
    # 7440 neutrons a pulse: 20 full packets of 372 readouts (24 B each, 8972 B).
    return {"module": "caen", "efu_args": ["--geometry", str(CAEN / f"{name}.json")],
            "gen": "efu-caen-gen",
            "gen_args": ["--geometry", str(CAEN / f"{name}.json"), "--neutrons-per-pulse", "7440",
                         *REPLAY],
            "readouts": "readouts.received"}


# Per detector: plugin, its options, generator, its options, and the readouts-parsed counter.
DETECTORS = {
    # Freia, the shipped default: 1490 neutrons a pulse, 6 readouts each, 447 readouts a packet.
    "freia": {"module": "multiblade", "efu_args": [], "gen": "efu-multiblade-gen",
              "gen_args": ["--neutrons-per-pulse", "1490"], "readouts": "readouts.received"},
    "loki": caen("loki"),
    "bifrost": caen("bifrost"),
    "cspec": caen("cspec"),
    "miracles": caen("miracles"),
    # DREAM, the shipped default: 560 readouts of 16 B a packet, 20 packets a pulse.
    "dream": {"module": "cdt", "efu_args": [], "gen": "efu-cdt-gen",
              "gen_args": ["--neutrons-per-pulse", "11200", *REPLAY],
              "readouts": "readouts.received"},
    # The udp instrument: 8972-byte datagrams; its 'readout' is a datagram (udp.packets).
    "udp": {"module": "udp", "efu_args": [], "gen": "efu-udpgen",
            "gen_args": ["--size", "8972", "--stats-interval", "0"], "readouts": "udp.packets"},
}


def with_efu_args(detector, args):
    """The detector's recipe with --efu-arg appended to its efu options."""
    return {**detector, "efu_args": detector["efu_args"] + args.efu_arg}


def zero_loss_rate(args, det, saturation):
    """The highest rate that lost nothing, stepping down from the saturation rate; (rate, runs,
    lower_bound)."""
    if saturation["lost"] == 0:
        return saturation["pps"], [], True
    runs = []
    top = saturation["sent_pps"]
    fraction = 1.0 - args.step
    while fraction > 0.05:
        rate = int(top * fraction)
        r = efu_bench_run.run(args.build, with_efu_args(DETECTORS[det], args), rate,
                              args.search_duration,
                              args.efu_cpu, args.gen_cpu, gen_batch=args.gen_batch)
        r["detector"] = det
        runs.append(r)
        print(f"  {det} at {rate:,} pkts/s: processed {r['pps']:,.0f}/s, lost {r['lost']}",
              file=sys.stderr)
        if r["lost"] == 0 and r["accounted"]:
            return r["pps"], runs, False
        fraction -= args.step
    return float("nan"), runs, False


def row(det, sat, best, lower_bound):
    per_packet = sat["readouts"] / sat["processed"] if sat["processed"] else float("nan")
    bound = ">= " if lower_bound else ""
    return (f"| {det} | {per_packet:.0f} | {sat['pps']:,.0f} | {sat['pps'] * per_packet / 1e6:.2f} | "
            f"{sat['lost']:,} of {sat['sent']:,} | **{sat['all_ns_per_readout']:.1f}** | "
            f"{sat['proc_ns_per_readout']:.1f} | {sat['rx_ns_per_readout']:.1f} | "
            f"{sat['other_ns_per_readout']:.1f} | {sat['busy_ns_per_readout']:.1f} | "
            f"{bound}{best:,.0f} | {bound}{best * per_packet / 1e6:.2f} | "
            f"{'yes' if sat['accounted'] else 'NO'} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=str(ROOT / "build"), help="build dir (Release)")
    p.add_argument("--detectors", default=",".join(DETECTORS),
                   help=f"comma-separated, of: {', '.join(DETECTORS)}")
    p.add_argument("--duration", type=float, default=5, help="seconds of the saturation run")
    p.add_argument("--search-duration", type=float, default=3,
                   help="seconds of each fixed-rate run of the zero-loss search")
    p.add_argument("--step", type=float, default=0.1,
                   help="the search's step, a fraction of the saturation rate")
    p.add_argument("--gen-batch", type=int, default=64,
                   help="datagrams per send call of the generators (1..1024)")
    p.add_argument("--efu-cpu", type=int, default=0)
    p.add_argument("--gen-cpu", type=int, default=1)
    p.add_argument("--json", help="write every run's figures here")
    p.add_argument("--efu-arg", action="append", default=[], metavar="ARG",
                   help="one more efu option for every run, e.g. --efu-arg=--full-ring=drop "
                        "(repeatable)")
    args = p.parse_args()
    dets = args.detectors.split(",")
    for det in dets:
        if det not in DETECTORS:
            sys.exit(f"efficiency_bench: --detectors: '{det}' is not known; expected one of "
                     f"{', '.join(DETECTORS)}")
    if not 1 <= args.gen_batch <= 1024:
        sys.exit(f"efficiency_bench: --gen-batch: '{args.gen_batch}' is out of range; "
                 "expected 1..1024")
    if not 0 < args.step < 1:
        sys.exit(f"efficiency_bench: --step: '{args.step}' is not a fraction; expected 0 < step < 1")
    load_before = efu_bench_run.load_average()
    lines = ["| detector | readouts/packet | saturation pkts/s | M readouts/s | lost | "
             "all threads ns/readout | proc | rx | other | busy | zero-loss pkts/s | "
             "zero-loss M readouts/s | accounted |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    runs = []
    for det in dets:
        sat = efu_bench_run.run(args.build, with_efu_args(DETECTORS[det], args), 0,
                                args.duration, args.efu_cpu,
                                args.gen_cpu, gen_batch=args.gen_batch)
        sat["detector"] = det
        runs.append(sat)
        print(f"{det} saturation: {sat['pps']:,.0f} pkts/s, all threads "
              f"{sat['all_ns_per_readout']:.1f} ns/readout, lost {sat['lost']}", file=sys.stderr)
        best, search, lower_bound = zero_loss_rate(args, det, sat)
        runs += search
        lines.append(row(det, sat, best, lower_bound))
    load_after = efu_bench_run.load_average()
    print("\n".join(lines))
    print(f"\nload average before: {' '.join(load_before)}, after: {' '.join(load_after)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": sys.argv, "load_before": load_before, "load_after": load_after,
                       "runs": runs}, f, indent=1)


if __name__ == "__main__":
    main()
