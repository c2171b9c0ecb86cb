#!/usr/bin/env python3
"""End to end: efu-caen-gen -> efu --module caen -> Kafka -> this consumer, per instrument.

Asserts, against the generator's ground truth and summary:
- every ground-truth neutron arrives exactly once, with its pulse time, pixel and time of flight
  exactly (one readout is one neutron; the generator records the TOF as the ESS time it wrote);
- no other events arrive (noise readouts sum below efu's --amplitude-threshold and are counted
  as readouts.errors.amplitude_low);
- ev44 message_ids are consecutive;
- efu's final counters (--stats-json) equal what the generator sent, fault by fault.

Every wait is bounded; nothing asserts on elapsed time.
"""
import argparse
import os
import sys

from support.checks import check, finish
from support.e2e import check_events_of_run, check_host_accounting, run_efu_and_generator


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--broker", required=True)
    ap.add_argument("--instrument", choices=["loki", "bifrost", "cspec", "miracles"], required=True)
    # gso: the generator sends UDP GSO messages and efu receives with --gro on.
    ap.add_argument("--variant", choices=["clean", "faults", "gso"], default="clean")
    args = ap.parse_args()

    geometry = os.path.join(args.source_dir, "modules", "caen", "configs", args.instrument + ".json")
    threshold = 200
    gen = ["--geometry", geometry, "--pulses", "28",
           "--neutrons-per-pulse", "3000", "--noise-per-pulse", "200", "--late-per-pulse", "40",
           "--noise-below", str(threshold), "--queues", "3", "--shape", "uniform",
           "--rate-pps", "3000", "--seed", "42"]
    if args.variant == "faults":
        gen += ["--fault-fraction", "0.25", "--fault-kinds", "cookie,truncated,version,type,corrupt"]
    if args.variant == "gso":
        gen += ["--gso"]
    run = run_efu_and_generator(
        args.build_dir, args.broker, "caen_%s_%s" % (args.instrument, args.variant),
        ["--module", "caen", "--geometry", geometry, "--amplitude-threshold", str(threshold)]
        # With faults, two processing threads: packets are routed by output queue (3 queues).
        + (["--processing-threads", "2"] if args.variant == "faults" else [])
        + (["--gro", "on"] if args.variant == "gso" else []),
        "efu-caen-gen", gen)
    sent, stats = run["sent"], run["stats"]
    check(sent["instrument"] == args.instrument, "generator ran %s" % sent["instrument"])
    check(sent["late"] > 0, "the generator sent previous-pulse neutrons")
    faults = sent["faults"]

    def expect(name, want):
        got = stats.get(name, 0)
        check(got == want, "counter %s = %d, expected %d" % (name, got, want))

    corrupt = faults.get("corrupt", 0)
    drops = check_host_accounting(stats, sent["packets"], gro=args.variant == "gso")
    expect("kafka.delivery.failed", 0)
    if args.variant == "faults":
        check(sum(faults.values()) > 0, "the faults variant injected faults")
    if args.variant == "gso":
        buffers = stats.get("receive.gro.buffers", 0)
        check(0 < buffers < sent["packets"],
              "coalesced buffers %d: expected some, fewer than the %d packets" % (buffers, sent["packets"]))
    if drops == 0:  # what each packet carried, counter by counter
        expect("receive.packets", sent["packets"])
        expect("parser.essheader.packets", sent["data_packets"] + corrupt)
        expect("parser.essheader.errors.cookie", faults.get("cookie", 0))
        expect("parser.essheader.errors.version", faults.get("version", 0))
        expect("parser.essheader.errors.type", faults.get("type", 0))
        expect("parser.essheader.errors.length", faults.get("truncated", 0))
        expect("parser.essheader.errors.sequence", 0)
        expect("readouts.received", sent["readouts"] + 6 * corrupt)
        expect("events.formed", sent["neutrons"])
        expect("readouts.errors.amplitude_low", sent["noise"])
        for reason in ["length", "fiber", "fen", "group", "pixel", "time_fraction", "amplitude_zero"]:
            expect("readouts.errors." + reason, faults.get("readout_" + reason, 0))
    for reason in ["truncated", "ring", "tof_negative", "tof_too_large", "amplitude_high",
                   "position", "calibration_group", "outside_interval"]:
        expect("readouts.errors." + reason, 0)

    check_events_of_run(args.broker, run, sent, drops, "caen", args.instrument, faults)


if __name__ == "__main__":
    main()
    sys.exit(finish())
