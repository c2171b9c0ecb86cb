#!/usr/bin/env python3
"""End to end: efu-cdt-gen -> efu --module cdt -> Kafka -> this consumer, per instrument.

Asserts, against the generator's ground truth and summary:
- every ground-truth neutron arrives exactly once, with its pulse time, pixel and time of flight
  exactly (one readout is one neutron; the generator numbers pixels with its own layout, not
  efu's geometry, and records the TOF as the ESS time it wrote);
- neutrons of the previous pulse (sent with the next pulse's packets) get their TOF against the
  previous pulse;
- no other events arrive; ev44 message_ids are consecutive;
- efu's final counters (--stats-json) equal what the generator sent, fault by fault.
The clean variant draws neutrons uniformly over every module's channels, the faults variant a
ring on every module's face (efu-cdt-gen --shape ring).

Every wait is bounded; nothing asserts on elapsed time.
"""
import argparse
import os
import sys

from support.checks import check, finish
from support.e2e import check_events_of_run, check_host_accounting, run_efu_and_generator

FILES = {"dream": "DreamInst.json", "magic": "MagicInst.json", "heimdal": "HeimdalInst.json"}
# Every readout rejection efu counts (readouts.errors.<reason>); the generator's corrupt fault
# names the ones it makes readout_<reason>.
REASONS = ["length", "truncated", "ring", "fen", "unconfigured", "unit", "cassette", "index",
           "pixel", "time_fraction", "tof_negative", "tof_too_large"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--broker", required=True)
    ap.add_argument("--instrument", choices=sorted(FILES), required=True)
    ap.add_argument("--variant", choices=["clean", "faults"], default="clean")
    args = ap.parse_args()

    geometry = os.path.join(args.source_dir, "modules", "cdt", "configs", FILES[args.instrument])
    gen = ["--geometry", geometry, "--pulses", "28", "--neutrons-per-pulse", "3000",
           "--late-per-pulse", "40", "--queues", "3", "--rate-pps", "3000", "--seed", "42"]
    if args.variant == "faults":
        gen += ["--fault-fraction", "0.25", "--fault-kinds", "cookie,truncated,version,type,corrupt"]
        # The faults variant also draws a ring on every module's face (the clean one stays
        # uniform): each module type's shape path meets efu's geometry.
        gen += ["--shape", "ring"]
    run = run_efu_and_generator(
        args.build_dir, args.broker, "cdt_%s_%s" % (args.instrument, args.variant),
        ["--module", "cdt", "--geometry", geometry]
        # With faults, two processing threads: packets are routed by output queue (3 queues).
        + (["--processing-threads", "2"] if args.variant == "faults" else []),
        "efu-cdt-gen", gen)
    sent, stats = run["sent"], run["stats"]
    check(sent["instrument"] == args.instrument.upper(), "generator ran %s" % sent["instrument"])
    check(sent["late"] > 0, "the generator sent previous-pulse neutrons")
    faults = sent["faults"]

    def expect(name, want):
        got = stats.get(name, 0)
        check(got == want, "counter %s = %d, expected %d" % (name, got, want))

    corrupt = faults.get("corrupt", 0)
    drops = check_host_accounting(stats, sent["packets"])
    expect("kafka.delivery.failed", 0)
    if args.variant == "faults":
        check(sum(faults.values()) > 0, "the faults variant injected faults")
        check(corrupt > 0, "the faults variant sent corrupt readouts")
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
        for reason in REASONS:
            expect("readouts.errors." + reason, faults.get("readout_" + reason, 0))
    else:
        for reason in ["truncated", "index", "pixel", "tof_negative", "tof_too_large"]:
            expect("readouts.errors." + reason, 0)

    check_events_of_run(args.broker, run, sent, drops, "cdt", args.instrument, faults)


if __name__ == "__main__":
    main()
    sys.exit(finish())
