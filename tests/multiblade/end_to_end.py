#!/usr/bin/env python3
"""End to end: efu-multiblade-gen -> efu --module multiblade -> Kafka -> this consumer.

Variants: clean and faults (Freia, time ordered), and for Freia's and Estia's geometry (the
shipped facility-format configs): ordered, shuffled (readouts in random order inside every
packet) and delayed (a fifth of the readouts held back into later packets, by up to 200 us of
detector time, inside efu's 1 ms reorder window). Estia runs 4 output queues on 2 processing
threads (each ring's cassettes on its own queue).

Asserts, against the generator's ground truth and summary:
- every ground-truth neutron arrives exactly once, with its pulse time and pixel exactly and its
  time of flight within TOF_TOLERANCE_NS;
- no other events arrive (noise hits are single-channel, single-plane and alone in their time
  group, so they are rejected as no_match_* and counted, never turned into events);
- ev44 message_ids are consecutive;
- efu's final counters (--stats-json) equal what the generator sent, fault by fault.

Every wait is bounded; nothing asserts on elapsed time.
"""
import argparse
import bisect
import os
import sys
import uuid

from support.checks import check, finish, require
from support.e2e import (check_events_against_truth, check_host_accounting, events_of, read_truth,
                         run_efu_and_generator)
from support.kafka import read_events, read_topic
from streaming_data_types import deserialise_da00

# The generator writes each neutron's prompt (centre-wire) hit at the neutron time and all other
# hits 0..jitter later, so the event time (earliest hit) is the neutron time up to ESS tick
# quantisation: the generator picks the tick whose time (as efu converts it, truncated to the ns
# as the facility does) is nearest, which is within half a tick (<= 5.7 ns). Pulse times sit
# exactly on ticks, and the truth file holds the converted pulse time.
TOF_TOLERANCE_NS = 6
# A jumbo datagram's payload (8972 B) after the 30-byte ESS header, in 20-byte VMM3a readouts.
MAX_READOUTS_PER_PACKET = (8972 - 30) // 20

VARIANTS = {
    # name: (config file, generator disorder flags, generator queues, processing threads)
    "clean": ("freia.json", [], 2, 1),
    "faults": ("freia.json", [], 2, 1),
    "gso": ("freia.json", [], 2, 1),
    # Every malformed kind, oversize and empty included, as extra datagrams between the good
    # packets of the stream (in the same sendmmsg batches, so in efu's recvmmsg batches too):
    # through recvmmsg, through --gro on (the generator sends GSO), and with two receive threads.
    "neighbours": ("freia.json", [], 2, 1),
    "neighbours_gro": ("freia.json", [], 2, 1),
    "neighbours_rx2": ("freia.json", [], 2, 2),
    "freia_ordered": ("freia.json", [], 3, 1),
    "freia_shuffled": ("freia.json", ["--shuffle"], 3, 1),
    "freia_delayed": ("freia.json", ["--delay-fraction", "0.2", "--max-delay-ns", "200000"], 3, 1),
    "estia_ordered": ("estia.json", [], 4, 2),
    "estia_shuffled": ("estia.json", ["--shuffle"], 4, 2),
    "estia_delayed": ("estia.json", ["--shuffle", "--delay-fraction", "0.2",
                                     "--max-delay-ns", "200000"], 4, 2),
    # efu --histograms: the live histograms of two processing threads, summed over every window,
    # equal the histograms of the ev44 events consumed.
    "live_histograms": ("freia.json", [], 3, 2),
}

# The live histograms' binning in the live_histograms variant: 200 TOF bins over one 14 Hz pulse
# period, and pixel ids 1..70000 (any event beyond either range is in its counter, checked too).
LIVE_TOF_BINS = 200
LIVE_TOF_MAX_NS = 71428571
LIVE_PIXELS = 70000
LIVE_PULSES = 5


def check_live_histograms(broker, topic, events, stats):
    """The da00 messages of `topic`, decoded with the facility's package and summed bin by bin
    over every window and thread, equal the histograms of the ev44 `events`; what lies outside
    the ranges is in the two counters."""
    arrays = read_topic(broker, topic, deserialise_da00)
    check(len(arrays) == 2 * stats.get("histograms.published", 0),
          "live messages %d == 2 x histograms.published %d"
          % (len(arrays), stats.get("histograms.published", 0)))
    by_source = {}
    for a in arrays:
        by_source.setdefault(a.source_name, []).append(a)
    require(sorted(by_source) == ["multiblade_pixels", "multiblade_tof"],
            "live sources %s" % sorted(by_source))
    # Edges as efu --help documents them: edge[i] = floor(i * max / bins).
    edges = [i * LIVE_TOF_MAX_NS // LIVE_TOF_BINS for i in range(LIVE_TOF_BINS + 1)]
    want_tof = [0] * LIVE_TOF_BINS
    want_pixels = [0] * LIVE_PIXELS
    beyond = out_of_range = 0
    for _, tof, pixel in events:
        if tof < LIVE_TOF_MAX_NS:
            want_tof[bisect.bisect_right(edges, tof) - 1] += 1
        else:
            beyond += 1
        if 1 <= pixel <= LIVE_PIXELS:
            want_pixels[pixel - 1] += 1
        else:
            out_of_range += 1
    got = {}
    for source, axis, size in (("multiblade_tof", "frame_time", LIVE_TOF_BINS),
                               ("multiblade_pixels", "pixel_id", LIVE_PIXELS)):
        total = [0] * size
        for a in by_source[source]:
            variables = {v.name: v for v in a.data}
            require(sorted(variables) == sorted([axis, "signal"]),
                    "%s variables %s" % (source, sorted(variables)))
            signal = variables["signal"]
            require(list(signal.axes) == [axis] and len(signal.data) == size,
                    "%s signal axes %s, %d bins" % (source, list(signal.axes), len(signal.data)))
            if source == "multiblade_tof":
                require([int(e) for e in variables[axis].data] == edges,
                        "frame_time edges are floor(i * max / bins)")
            for i, c in enumerate(signal.data):
                total[i] += int(c)
        got[source] = total
    check(got["multiblade_tof"] == want_tof,
          "summed live TOF histogram equals the ev44 events' (%d vs %d events)"
          % (sum(got["multiblade_tof"]), sum(want_tof)))
    check(got["multiblade_pixels"] == want_pixels,
          "summed live pixel histogram equals the ev44 events' (%d vs %d events)"
          % (sum(got["multiblade_pixels"]), sum(want_pixels)))
    check(stats.get("histograms.tof.beyond_range", 0) == beyond,
          "histograms.tof.beyond_range %d == %d" % (stats.get("histograms.tof.beyond_range", 0), beyond))
    check(stats.get("histograms.pixels.out_of_range", 0) == out_of_range,
          "histograms.pixels.out_of_range %d == %d"
          % (stats.get("histograms.pixels.out_of_range", 0), out_of_range))
    check(stats.get("histograms.published", 0) >= 2, "at least two windows published")
    print("ok live histograms: %d windows, %d events in the TOF histogram, %d in the pixel one"
          % (len(arrays) // 2, sum(want_tof), sum(want_pixels)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--broker", required=True)
    ap.add_argument("--source-dir", required=True)
    # gso: the generator sends UDP GSO messages and efu receives with --gro on, so efu gets
    # coalesced buffers of packets of several sizes (full 8972 B packets, shorter ones at each
    # pulse end; 8972 does not divide the 64 KB buffer) and must hand each packet over on its own.
    ap.add_argument("--variant", choices=sorted(VARIANTS), default="clean")
    args = ap.parse_args()

    config_file, disorder, queues, threads = VARIANTS[args.variant]
    config = os.path.join(args.source_dir, "modules", "multiblade", "configs", config_file)
    gen = ["--pulses", "28", "--neutrons-per-pulse", "1500", "--noise-per-pulse", "100",
           "--queues", str(queues), "--shape", "uniform", "--rate-pps", "3000", "--seed", "42",
           "--geometry", config] + disorder
    neighbours = args.variant.startswith("neighbours")
    if args.variant == "faults":
        gen += ["--fault-fraction", "0.25", "--fault-kinds", "cookie,truncated,version,corrupt"]
    if neighbours:
        gen += ["--fault-fraction", "0.3", "--fault-kinds",
                "cookie,truncated,version,corrupt,empty,oversize"]
    gro = args.variant in ("gso", "neighbours_gro")
    if gro:
        gen += ["--gso"]
    live = args.variant == "live_histograms"
    live_topic = "e2e_live_%d_%s" % (os.getpid(), uuid.uuid4().hex[:8])
    live_args = ["--histograms", live_topic, "--histogram-pulses", str(LIVE_PULSES),
                 "--histogram-tof-bins", str(LIVE_TOF_BINS),
                 "--histogram-tof-max-ns", str(LIVE_TOF_MAX_NS),
                 "--histogram-pixels", str(LIVE_PIXELS)] if live else []
    run = run_efu_and_generator(
        args.build_dir, args.broker, "mb_" + args.variant,
        # The wall-clock cluster timeout (200 ms) is for a stream that pauses; here a generator or
        # efu thread descheduled that long on a loaded machine would split neutrons that straddle
        # packets, so it is out of reach (flush at the stop still closes every group). Its own
        # behaviour is a unit test (PipelineTest.TickClosesGroupsIdleForTheTimeout).
        ["--module", "multiblade", "--geometry", config, "--processing-threads", str(threads),
         "--cluster-timeout-ms", "600000"]
        + (["--gro", "on"] if gro else [])
        + (["--receive-threads", "2"] if args.variant == "neighbours_rx2" else [])
        + live_args,
        "efu-multiblade-gen", gen)
    sent, stats = run["sent"], run["stats"]
    faults = sent["faults"]

    def expect(name, want):
        got = stats.get(name, 0)
        check(got == want, "counter %s = %d, expected %d" % (name, got, want))

    corrupt = faults.get("corrupt", 0)
    drops = check_host_accounting(stats, sent["packets"], gro=gro)
    # Each malformed neighbour in its own counter, whatever the host lost besides.
    expect("receive.dropped.empty", faults.get("empty", 0))
    expect("receive.truncated", faults.get("oversize", 0))
    if drops == 0:  # what each packet carried, counter by counter
        expect("receive.packets", sent["packets"] - faults.get("empty", 0) - faults.get("oversize", 0))
        expect("parser.essheader.packets", sent["data_packets"] + corrupt)
        expect("parser.essheader.errors.cookie", faults.get("cookie", 0))
        expect("parser.essheader.errors.version", faults.get("version", 0))
        expect("parser.essheader.errors.length", faults.get("truncated", 0))
        expect("parser.essheader.errors.sequence", 0)
        expect("readouts.received", sent["readouts"] + 5 * corrupt)
        expect("readouts.accepted", sent["readouts"])
        for reason in ["length", "fiber", "vmm", "channel", "time_fraction"]:
            expect("readouts.errors." + reason, faults.get("readout_" + reason, 0))
        expect("events.formed", sent["neutrons"])
        expect("events.rejected.no_match_strip", sent["noise_wire"])
        expect("events.rejected.no_match_wire", sent["noise_strip"])
        for reason in ["wire_gap", "strip_gap", "pixel", "wire_span_too_large",
                       "strip_span_too_large"]:
            expect("events.rejected." + reason, 0)
    # Delays stay inside the reorder window, so no hit is late and no event is split.
    expect("hits.late", 0)
    expect("hits.reorder_buffer_full", 0)
    if "--delay-fraction" in disorder:
        check(sent["delayed"] > 0, "the delayed variant delayed readouts")
    expect("kafka.delivery.failed", 0)
    if args.variant == "faults":
        check(sum(faults.values()) > 0, "the faults variant injected faults")
    if neighbours:
        for kind in ("cookie", "truncated", "version", "corrupt", "empty", "oversize"):
            check(faults.get(kind, 0) > 0, "the %s variant sent %s datagrams" % (args.variant, kind))
    if gro:
        buffers = stats.get("receive.gro.buffers", 0)
        check(0 < buffers < sent["packets"],
              "coalesced buffers %d: expected some, fewer than the %d packets" % (buffers, sent["packets"]))

    messages = read_events(args.broker, run["events_topic"])
    events = events_of(messages, "multiblade")
    truth = read_truth(run["truth_path"], sent["neutrons"])
    # Neutrons are >= 2 us apart, far more than the tolerance, so time order pairs them up.
    # A lost readout leaves the rest of its neutron to form at most two wrong events (the wires
    # or strips on either side of it), and a packet holds at most MAX_READOUTS_PER_PACKET.
    lost_packets = sent["packets"] - stats.get("process.packets", 0)
    check_events_against_truth(events, truth, drops, TOF_TOLERANCE_NS,
                               distorted_per_lost_packet=2 * MAX_READOUTS_PER_PACKET,
                               lost_packets=lost_packets)
    if live:
        check_live_histograms(args.broker, live_topic, events, stats)
    worst = 0
    if drops == 0:
        worst = max(abs(e[1] - t[1]) for e, t in zip(sorted(events), sorted(truth)))
    print("ok %s: %d neutrons in %d ev44 messages, worst tof error %d ns, %d packets, %d delayed, "
          "faults %s" % (args.variant, len(events), len(messages), worst, sent["packets"],
                         sent["delayed"], faults))


if __name__ == "__main__":
    main()
    sys.exit(finish())
