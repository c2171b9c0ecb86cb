#!/usr/bin/env python3
"""End to end: efu-cbm-gen -> efu --module cbm -> Kafka -> this consumer, per test config
(tests/cbm/e2e_<type>.json: EVENT_0D, EVENT_2D, IBM, BEER).

Each Topology entry is its own source on the events topic: ev44 for Schema ev44, da00 for
Schema da00. Asserts, against the generator's ground truth and summary:
- every ev44 event of every source arrives exactly once, with its pulse time, TOF and pixel,
  and no other; each source's message_ids are consecutive;
- every da00 histogram of every source, decoded with the facility's package
  (streaming_data_types.deserialise_da00), equals the generator's, in order, variable by
  variable and bin by bin (frame_time, signal, reference_time, frame_total and the timestamp);
- efu's final counters (--stats-json) equal what the generator sent, fault by fault: the header
  faults, the pulse-time difference, and each broken-readout reason of the corrupt fault.

Every wait is bounded; nothing asserts on elapsed time.
"""
import argparse
import json
import os
import sys
import tempfile

import numpy as np
from streaming_data_types import deserialise_da00, deserialise_ev44

from support.checks import check, finish, require
from support.e2e import check_events_against_truth, check_host_accounting, run_efu_and_generator
from support.kafka import check_kafka_accounting, read_topic

# Per config: the generator's readouts per pulse and pulses (small: each run takes seconds; 25
# pulses leave the last window of AggregatedFrames 2 and 3 partial, published at stop).
RUNS = {
    "0d": {"pulses": 25, "per_pulse": 300},
    "2d": {"pulses": 24, "per_pulse": 300},
    "ibm": {"pulses": 25, "per_pulse": 300},
    "beer": {"pulses": 24, "per_pulse": 300},
}
# The broken-readout reasons each config allows (the generator's --corrupt-kinds default) and
# the test expects to see at least once: every rejection class the plugin counts.
EXPECTED_REASONS = ["length", "fiber", "time_fraction", "type", "ring", "monitor_ring", "fen",
                    "channel", "tof_negative", "tof_too_large"]
REASONS_OF = {"0d": ["type_mismatch"], "2d": ["type_mismatch", "xpos", "ypos"],
              "ibm": ["type_mismatch"], "beer": ["xpos", "ypos"]}
HEADER_FAULTS = {"cookie": "cookie", "version": "version", "type": "type", "truncated": "length"}
# Every reason a readout is refused (readout_parser.h), each checked against what was sent.
READOUT_ERRORS = ["length", "truncated", "fiber", "time_fraction", "type", "ring", "monitor_ring",
                  "fen", "channel", "type_mismatch", "xpos", "ypos", "tof_negative",
                  "tof_too_large", "tof_before_offset", "tof_beyond_period"]


def decode(value):
    """ev44 or da00, by the FlatBuffers file identifier (bytes 4..8)."""
    kind = bytes(value[4:8])
    if kind == b"ev44":
        return ("ev44", deserialise_ev44(value))
    if kind == b"da00":
        return ("da00", deserialise_da00(value))
    return (kind.decode(errors="replace"), None)


def read_truth(path):
    """{source: [(pulse, tof, pixel)]} from the generator's ground-truth file."""
    truth = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            pulse, tof, pixel, source = line.split()
            truth.setdefault(source, []).append((int(pulse), int(tof), int(pixel)))
    return truth


def ev44_events(source, messages):
    ids = [m.message_id for m in messages]
    check(ids == list(range(ids[0], ids[0] + len(ids))),
          "%s: ev44 message_ids consecutive: %s" % (source, ids[:20]))
    events = []
    for m in messages:
        bounds = list(m.reference_time_index) + [len(m.time_of_flight)]
        for i, pulse in enumerate(m.reference_time):
            for k in range(bounds[i], bounds[i + 1]):
                events.append((int(pulse), int(m.time_of_flight[k]), int(m.pixel_id[k])))
    return events


def check_histograms(source, arrays, want):
    """Every da00 message of `source`, in order, against the generator's windows. Returns the
    sum of the frame totals the truth holds."""
    windows = want["windows"]
    require(len(arrays) == len(windows), "%s: %d da00 messages, expected %d"
            % (source, len(arrays), len(windows)))
    expected_types = {"frame_time": np.int32, "signal": np.int32, "reference_time": np.int32,
                      "frame_total": np.uint64}
    errors = []
    for n, (got, w) in enumerate(zip(arrays, windows)):
        where = "window %d" % n
        if got.timestamp_ns != w["timestamp_ns"]:
            errors.append("%s: timestamp %d, expected %d" % (where, got.timestamp_ns, w["timestamp_ns"]))
        variables = {v.name: v for v in got.data}
        if sorted(variables) != sorted(expected_types):
            errors.append("%s: variables %s" % (where, sorted(variables)))
        wanted = {"frame_time": want["frame_time"], "signal": w["signal"],
                  "reference_time": w["reference_time"], "frame_total": w["frame_total"]}
        for name, dtype in expected_types.items():
            v = variables.get(name)
            if v is None:
                continue
            target = np.array(wanted[name], dtype=dtype)
            if (isinstance(v.data, np.ndarray) and v.data.dtype == target.dtype
                    and v.data.shape == target.shape and np.array_equal(v.data, target)):
                continue
            first = ""
            if isinstance(v.data, np.ndarray) and v.data.shape == target.shape:
                diff = np.nonzero(v.data != target)[0]
                if len(diff):
                    first = "; first differing bin %d: %s, expected %s" % (
                        diff[0], v.data[diff[0]], target[diff[0]])
            errors.append("%s: %s (dtype %s, shape %s) differs from the truth (dtype %s, shape "
                          "%s)%s" % (where, name, getattr(v.data, "dtype", None),
                                     getattr(v.data, "shape", None), target.dtype, target.shape,
                                     first))
        if "signal" in variables and variables["signal"].unit != "A":
            errors.append("%s: signal unit %r, expected 'A'" % (where, variables["signal"].unit))
    check(not errors, "%s: %d da00 messages equal the truth bin by bin (timestamp, frame_time, "
                      "signal, reference_time, frame_total)%s"
          % (source, len(windows), "" if not errors else "; %d mismatches: %s"
             % (len(errors), errors[:5])))
    return sum(int(np.sum(w["frame_total"])) for w in windows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--broker", required=True)
    ap.add_argument("--type", choices=sorted(RUNS), required=True)
    args = ap.parse_args()

    config = os.path.join(args.source_dir, "tests", "cbm", "e2e_%s.json" % args.type)
    work = tempfile.mkdtemp(prefix="cbm_%s-histograms-" % args.type)
    histogram_path = os.path.join(work, "histograms.json")
    r = RUNS[args.type]
    gen = ["--geometry", config, "--pulses", str(r["pulses"]),
           "--neutrons-per-pulse", str(r["per_pulse"]), "--size", "2000",
           "--rate-pps", "2000", "--seed", "7", "--histogram-truth", histogram_path,
           "--fault-fraction", "0.5",
           # corrupt three times: it weighs the draw, so every broken-readout reason is made.
           "--fault-kinds", "cookie,truncated,version,type,corrupt,corrupt,corrupt",
           "--pulse-diff-fraction", "0.1"]
    run = run_efu_and_generator(
        args.build_dir, args.broker, "cbm_%s" % args.type,
        ["--module", "cbm", "--geometry", config, "--processing-threads", "1"],
        "efu-cbm-gen", gen)
    sent, stats = run["sent"], run["stats"]
    faults = sent["faults"]
    with open(histogram_path) as f:
        histograms = json.load(f)["sources"]

    def expect(name, want):
        got = stats.get(name, 0)
        check(got == want, "counter %s = %d, expected %d" % (name, got, want))

    drops = check_host_accounting(stats, sent["packets"])
    undelivered = check_kafka_accounting(stats)
    expect("kafka.delivery.failed", 0)
    for kind in ("cookie", "truncated", "version", "type", "corrupt", "pulse_time_diff"):
        check(faults.get(kind, 0) > 0, "the generator sent %s faults" % kind)
    corrupt = faults.get("corrupt", 0)
    readout_faults = sent["readout_faults"]
    check(sum(readout_faults.values()) == 5 * corrupt,
          "5 broken readouts per corrupt packet: %d for %d" % (sum(readout_faults.values()), corrupt))
    for reason in EXPECTED_REASONS + REASONS_OF[args.type]:
        check(readout_faults.get("readouts.errors." + reason, 0) > 0,
              "the generator sent readouts the plugin refuses as %s" % reason)
    beyond = sum(sent["beyond_period_by_source"].values())
    if drops == 0:  # what each packet carried, counter by counter
        expect("receive.packets", sent["packets"])
        expect("parser.essheader.packets", sent["data_packets"] + corrupt)
        for kind, counter in HEADER_FAULTS.items():
            expect("parser.essheader.errors." + counter, faults.get(kind, 0))
        expect("parser.essheader.errors.pulse_time_diff",
               faults.get("pulse_time_diff", 0) + sent["packets_rejected_pulse"])
        expect("parser.essheader.errors.sequence", 0)
        expect("readouts.received", sent["readouts"] + 5 * corrupt)
        for reason in READOUT_ERRORS:
            want = readout_faults.get("readouts.errors." + reason, 0)
            if reason == "tof_beyond_period":
                want += beyond
            expect("readouts.errors." + reason, want)
        for kind in ("event_0d", "event_2d", "ibm"):
            expect("readouts.accepted." + kind, sent["accepted_by_type"].get(kind, 0))
        expect("ev44.events", sent["events"])
        expect("histograms.published", sent["histogram_windows"])
        expect("histograms.skipped_empty", sent["histogram_skipped_empty"])
        expect("da00.messages", sent["histogram_windows"])
    expect("histograms.unpublished_no_pulse", 0)
    require(undelivered == 0, "every event delivered (lost.events %d)" % undelivered)

    # Everything on the events topic, per source, in order.
    by_source = {}
    for kind, msg in read_topic(args.broker, run["events_topic"], decode):
        require(kind in ("ev44", "da00"), "a %s message on the events topic" % kind)
        by_source.setdefault((kind, msg.source_name), []).append(msg)
    truth = read_truth(run["truth_path"])
    ev44_sources = sorted(s for k, s in by_source if k == "ev44")
    da00_sources = sorted(s for k, s in by_source if k == "da00")
    check(ev44_sources == sorted(truth), "ev44 sources %s, expected %s" % (ev44_sources, sorted(truth)))
    check(da00_sources == sorted(histograms), "da00 sources %s, expected %s"
          % (da00_sources, sorted(histograms)))
    events_total = 0
    for source, want in sorted(truth.items()):
        check(len(want) == sent["events_by_source"].get(source, 0),
              "%s: truth file has %d events, summary %d" % (source, len(want),
                                                           sent["events_by_source"].get(source, 0)))
        got = ev44_events(source, by_source.get(("ev44", source), []))
        check_events_against_truth(got, want, drops)
        events_total += len(got)
    if args.type in ("0d", "ibm"):
        check(beyond > 0, "the generator sent readouts beyond a histogram's period")
    binned_total = 0
    for source, want in sorted(histograms.items()):
        if drops == 0:
            binned_total += check_histograms(source, by_source.get(("da00", source), []), want)
    if drops == 0 and args.type in ("0d",):
        # A 0D histogram counts readouts: its frame totals are its binned readouts.
        check(binned_total == sent["histogram_binned"], "0D frame totals %d == binned readouts %d"
              % (binned_total, sent["histogram_binned"]))
    print("ok: cbm %s, %d events from %d ev44 sources, %d da00 histograms from %d sources, "
          "%d packets, faults %s, broken readouts %s"
          % (args.type, events_total, len(truth), sent["histogram_windows"], len(histograms),
             sent["packets"], faults, readout_faults))


if __name__ == "__main__":
    main()
    sys.exit(finish())
