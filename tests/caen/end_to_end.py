#!/usr/bin/env python3
"""End to end: efu-caen-gen -> efu --module caen -> Kafka -> this consumer, per instrument.

Asserts, against the generator's ground truth and summary:
- every ground-truth neutron arrives exactly once, with its pulse time, pixel and time of flight
  exactly (one readout is one neutron; the generator records the TOF as the ESS time it wrote);
- no other events arrive (noise readouts sum below efu's --amplitude-threshold and are counted
  as readouts.errors.amplitude_low);
- ev44 message_ids are consecutive;
- efu's final counters (--stats-json) equal what the generator sent, fault by fault.

BIFROST publishes one ev44 source per tube triplet ("arc=A;triplet=T", the facility file
writer's names): there every event must arrive under the source the generator's ground truth
names for its neutron, each source's message_ids must be consecutive, and nothing arrives under
efu's own --source. Its runs use two processing threads and put each readout in a random output
queue (--mix-queues), so that every source is written by both threads.

Every wait is bounded; nothing asserts on elapsed time.
"""
import argparse
import os
import sys

from collections import Counter

from support.checks import check, finish, require
from support.e2e import check_events_of_run, check_host_accounting, run_efu_and_generator
from support.kafka import read_events

# efu's own source (--source's default): BIFROST publishes nothing under it.
HOST_SOURCE = "caen"
BIFROST_SOURCES = {"arc=%d;triplet=%d" % (arc, triplet) for arc in range(5) for triplet in range(9)}


def bifrost_truth(path, neutrons):
    """(pulse time, TOF, pixel, source) per neutron from the generator's ground truth."""
    truth = []
    with open(path) as f:
        for line in f:
            if not line.startswith("#"):
                pulse, tof, pixel, source = line.split()
                truth.append((int(pulse), int(tof), int(pixel), source))
    require(len(truth) == neutrons, "truth file has %d of %d neutrons" % (len(truth), neutrons))
    return truth


def check_bifrost_sources(broker, run, sent, drops, faults):
    """Every event under its triplet's source, the source's message_ids consecutive (in the
    partition's order, which is the order efu queued them), against the ground truth."""
    messages = read_events(broker, run["events_topic"])
    require(len(messages) > 0, "ev44 messages read: %d" % len(messages))
    by_source = {}
    for m in messages:
        by_source.setdefault(m.source_name, []).append(m)
    check(HOST_SOURCE not in by_source, "no ev44 message under efu's own source %r" % HOST_SOURCE)
    unknown = sorted(set(by_source) - BIFROST_SOURCES)
    check(not unknown, "every source is a triplet's: unknown %s" % unknown[:5])
    gaps = {}
    for name, ms in sorted(by_source.items()):
        ids = [m.message_id for m in ms]
        if ids != list(range(ids[0], ids[0] + len(ids))):
            gaps[name] = ids[:20]
    check(not gaps, "message_ids consecutive in each of the %d sources (%d to %d messages each); "
          "not in: %s" % (len(by_source), min(len(v) for v in by_source.values()),
                          max(len(v) for v in by_source.values()), list(gaps.items())[:3]))
    events = []
    for m in messages:
        bounds = list(m.reference_time_index) + [len(m.time_of_flight)]
        for i, pulse in enumerate(m.reference_time):
            for k in range(bounds[i], bounds[i + 1]):
                events.append((int(pulse), int(m.time_of_flight[k]), int(m.pixel_id[k]),
                               m.source_name))
    truth = bifrost_truth(run["truth_path"], sent["neutrons"])
    got, want = Counter(events), Counter(truth)
    extra = got - want
    check(not extra, "every event (pulse, tof, pixel, source) is a true neutron under its "
          "triplet's source; %d are not, first: %s" % (sum(extra.values()), list(extra)[:3]))
    if drops == 0:
        missing = want - got
        check(not missing, "every neutron arrived; %d did not, first: %s"
              % (sum(missing.values()), list(missing)[:3]))
        check(set(by_source) == {t[3] for t in truth},
              "the sources are the truth's: %d of %d" % (len(by_source), len({t[3] for t in truth})))
    print("ok: bifrost, %d neutrons in %d ev44 messages under %d sources, %d packets, faults %s"
          % (len(events), len(messages), len(by_source), sent["packets"], faults))


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
    bifrost = args.instrument == "bifrost"
    if bifrost:
        gen += ["--mix-queues"]
    run = run_efu_and_generator(
        args.build_dir, args.broker, "caen_%s_%s" % (args.instrument, args.variant),
        ["--module", "caen", "--geometry", geometry, "--amplitude-threshold", str(threshold)]
        # With faults, two processing threads: packets are routed by output queue (3 queues).
        # BIFROST: always two, so that each triplet's source is written by both threads.
        + (["--processing-threads", "2"] if args.variant == "faults" or bifrost else [])
        # BIFROST: small ev44 messages, so each source has many ids to keep consecutive.
        + (["--ev44-max-bytes", "2048"] if bifrost else [])
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

    if bifrost:
        check_bifrost_sources(args.broker, run, sent, drops, faults)
    else:
        check_events_of_run(args.broker, run, sent, drops, HOST_SOURCE, args.instrument, faults)


if __name__ == "__main__":
    main()
    sys.exit(finish())
