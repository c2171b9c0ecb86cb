#!/usr/bin/env python3
"""End to end: efu-nmx-gen -> efu --module nmx -> Kafka -> this consumer (docs/nmx.md).

The generator draws each neutron as a track across adjacent strips of both planes of a panel,
the conversion strip last, so the uTPC position (the latest hit, the facility's tie rule) is the
neutron's strip; some neutrons have their two latest strips at the same tick (the tie rule
decides), some are wider than MaxSpan on one plane (efu must reject them, counted), and single
strips of noise sit between neutrons (no match in the other plane, counted). With nmx_split.json,
pairs of neutrons arrive together on one panel, apart in both planes: efu must split them.

Variants: ordered, shuffled (readouts in random order inside every packet), delayed (a fifth of
the readouts held back into later packets, by up to 200 us of detector time, inside efu's reorder
window), split (nmx_split.json, shuffled), faults (every header fault kind and corrupt readouts),
mininmx and nmx_p0 (the other facility files), and "model": no efu, the generator's datagrams
read here and turned into events by an independent Python model of the facility's rules, to
check the generator's wire format and ground truth before (and besides) the plugin.

Asserts, against the generator's ground truth and summary:
- every neutron the truth says efu forms arrives exactly once, with its pulse time, TOF and pixel
  exactly (TOF tolerance 0: hit times are generated on ESS clock ticks, so the event end efu
  computes is the truth's to the ns; uTPC tolerance 0: the truth applies the facility's rule,
  ties included, to exactly the hits sent);
- no other events arrive;
- efu's final counters equal what the generator sent: packets, header faults, readouts and each
  readout rejection, events formed, each rejection (span, no match), split attempts and splits;
- the accounting identities: process.packets + lost + rejected datagrams = sent; readouts
  received = accepted + every readout error; truth neutrons = formed + span rejections.

Every wait is bounded; nothing asserts on elapsed time.
"""
import argparse
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

from support.checks import check, finish, require
from support.e2e import (check_events_against_truth, check_host_accounting, events_of,
                         run_efu_and_generator)
from support.efu import binary
from support.kafka import read_events
from support.ports import free_udp_port

# A jumbo datagram's payload (8972 B) after the 32-byte ESS header, in 20-byte VMM3a readouts.
MAX_READOUTS_PER_PACKET = (8972 - 32) // 20
FORMED = ("track", "split")
READOUT_REASONS = ["length", "fiber", "vmm", "channel", "time_fraction", "adc_below_threshold"]

COMMON = ["--pulses", "20", "--neutrons-per-pulse", "1000", "--noise-per-pulse", "50",
          "--tie-fraction", "0.2", "--wide-fraction", "0.05", "--rate-pps", "3000", "--seed", "42"]
# Packets of 2000 B (98 readouts, about 10 neutrons, 0.7 ms of detector time) so that most
# held-back readouts land in a later packet; up to 500 us, inside efu's 1 ms reorder window.
DELAY = ["--size", "2000", "--delay-fraction", "0.2", "--max-delay-ns", "500000"]
VARIANTS = {
    # name: (config file, generator flags, processing threads)
    "ordered": ("nmx.json", ["--queues", "2"], 1),
    "shuffled": ("nmx.json", ["--queues", "4", "--shuffle"], 2),
    "delayed": ("nmx.json", ["--queues", "4", "--shuffle"] + DELAY, 2),
    "split": ("nmx_split.json", ["--queues", "2", "--shuffle", "--split-fraction", "0.3"], 1),
    "split_delayed": ("nmx_split.json", ["--queues", "2", "--shuffle", "--split-fraction", "0.3"]
                      + DELAY, 1),
    "faults": ("nmx.json", ["--queues", "2", "--fault-fraction", "0.25", "--fault-kinds",
                            "cookie,truncated,version,type,corrupt,empty,oversize"], 1),
    "mininmx": ("mininmx.json", ["--queues", "1", "--shuffle"], 1),
    "nmx_p0": ("nmx_p0.json", ["--queues", "2", "--shuffle"], 1),
    # nmx.json with SizeX = SizeY = 1000: strips 1000..1279 have no pixel, so efu must reject
    # (and count) the neutrons whose uTPC position is there.
    "small_picture": ("nmx.json", ["--queues", "2", "--shuffle"], 1),
    "model": ("nmx_split.json", ["--pulses", "4", "--rate-pps", "2000", "--split-fraction", "0.3",
                                 "--shuffle"] + DELAY, 0),
}


def read_nmx_truth(path, neutrons):
    """Per neutron: (pulse, tof, pixel), its kind (track, split, rejected_span_x, _span_y,
    _pixel) and its larger span of the two planes."""
    rows = []
    with open(path) as f:
        for line in f:
            if not line.startswith("#"):
                v = line.split()
                rows.append(((int(v[0]), int(v[1]), int(v[2])), v[8], max(int(v[6]), int(v[7]))))
    require(len(rows) == neutrons, "truth file has %d of %d neutrons" % (len(rows), neutrons))
    return rows


# --- The model: the facility's rules in Python, on the datagrams as sent -------------------
TICK_NS = 1e9 / 88052500


def load_config(path):
    with open(path) as f:
        c = json.load(f)
    hybrids = {}
    for h in c["Config"]:
        key = (h.get("Ring", 0), h["FEN"], h["Hybrid"])
        hybrids[key] = (h.get("Plane", 0), h.get("Offset", 0), h.get("ReversedChannels", False),
                        h.get("Panel", 0))
    return c, hybrids


def decode(datagram, hybrids):
    """(pulse_ns, [(panel, plane, coordinate, time_ns, adc)]) of one ESS VMM3a datagram."""
    header = 30 if datagram[1] == 0 else 32
    ph, pl = struct.unpack_from("<II", datagram, 10)
    pulse = ph * 1_000_000_000 + int(pl * TICK_NS)
    hits = []
    for off in range(header, len(datagram), 20):
        fiber, fen, _, th, tl, _, otadc, _, _, vmm, ch = struct.unpack_from("<BBHIIHHBBBB",
                                                                            datagram, off)
        plane, offset, reversed_, panel = hybrids[(fiber // 2, fen, vmm // 2)]
        asic = vmm & 1
        # NMXGeometry::coord()
        coord = offset + (64 * (1 - asic) + 63 - ch if reversed_ else 64 * asic + ch)
        hits.append((panel, plane, coord, th * 1_000_000_000 + int(tl * TICK_NS), otadc & 0x3FF))
    return pulse, hits


def utpc(hits):
    """Cluster::coordUtpc(false) on hits (coordinate, time, adc) in coordinate order."""
    latest = max(h[1] for h in hits)
    idx = [i for i, h in enumerate(hits) if h[1] == latest]
    lo, hi = idx[0], idx[-1]
    if lo < len(hits) - 1 - hi:
        return hits[lo][0]
    if lo > len(hits) - 1 - hi:
        return hits[hi][0]
    return hits[lo][0] if hits[lo][2] > hits[hi][2] else hits[hi][0]


def split_parts(hits):
    """GapMatcher::splitCluster: at most two parts at a coordinate gap > 10, else none."""
    parts = [[]]
    for h in hits:
        if parts[-1] and h[0] - parts[-1][-1][0] > 10:
            if len(parts) == 2:
                return [], []
            parts.append([])
        parts[-1].append(h)
    return parts[0], (parts[1] if len(parts) == 2 else [])


def model_events(cfg, groups, counts):
    events = []
    # The reference keeps the coefficients as float and multiplies in double.
    low = struct.unpack("f", struct.pack("f", cfg.get("SplitMultiEventsCoefficientLow", 0.8)))[0]
    high = struct.unpack("f", struct.pack("f", cfg.get("SplitMultiEventsCoefficientHigh", 1.2)))[0]

    def candidate(pulse, x, y):
        if not x or not y:
            counts["no_match_" + ("x" if not x else "y")] += 1
            return
        for name, plane, size in (("x", x, "X"), ("y", y, "Y")):
            span = plane[-1][0] - plane[0][0] + 1
            if span > cfg.get("MaxSpan" + size, 10) or span < cfg.get("MinSpan" + size, 1):
                counts[name + "_span"] += 1
                return
        end = max(h[1] for h in x + y)
        px, py = utpc(x), utpc(y)
        if px >= cfg.get("SizeX", 1280) or py >= cfg.get("SizeY", 1280):  # pixel2D() gives 0
            counts["pixel"] += 1
            return
        events.append((pulse, end - pulse, 1 + px + cfg.get("SizeX", 1280) * py))

    def match(a, b):  # GapMatcher::clustersMatch
        sa, sb = sum(h[2] for h in a), sum(h[2] for h in b)
        return sa * low <= sb <= sa * high

    for pulse, planes in groups:
        x, y = (sorted(p) for p in planes)
        spans = [p[-1][0] - p[0][0] + 1 if p else 0 for p in (x, y)]
        if cfg.get("SplitMultiEvents", False) and max(spans) >= 10:
            counts["split_attempted"] += 1
            (x1, x2), (y1, y2) = split_parts(x), split_parts(y)
            if match(x1, y1) and match(x2, y2) and not match(x1, y2) and not match(x2, y1):
                pairs = [(x1, y1), (x2, y2)]
            elif match(x1, y2) and match(x2, y1) and not match(x1, y1) and not match(x2, y2):
                pairs = [(x1, y2), (x2, y1)]
            else:
                counts["split_unmatched"] += 1
                continue
            pairs = [p for p in pairs if p[0] or p[1]]
            counts["split_done"] += len(pairs) == 2
            for px, py in pairs:
                candidate(pulse, px, py)
            continue
        candidate(pulse, x, y)
    return events


def group_hits(cfg, hits):
    """Per panel, hits in time order split where the next is more than the time gap later."""
    gap = max(cfg.get("MaxMatchingTimeGap", 500), cfg.get("MaxClusteringTimeGap", 500))
    groups = []
    for panel in sorted({h[1] for h in hits}):
        mine = sorted((h for h in hits if h[1] == panel), key=lambda h: h[4])
        current, last = None, None
        for pulse, _, plane, coord, t, adc in mine:
            if current is None or t - last > gap:
                current = (pulse, ([], []))
                groups.append(current)
            current[1][plane].append((coord, t, adc))
            last = t
    return groups


def run_model(args, config, flags):
    """The generator into a socket here, the model over what arrived, against the truth."""
    cfg, hybrids = load_config(config)
    port = free_udp_port()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
    sock.bind(("127.0.0.1", port))
    sock.settimeout(0.5)
    datagrams, done = [], threading.Event()

    def receive():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                datagrams.append(sock.recv(65536))
            except socket.timeout:
                if done.is_set():
                    return

    work = tempfile.mkdtemp(prefix="nmx-model-")
    truth_path, summary_path = os.path.join(work, "truth.txt"), os.path.join(work, "summary.json")
    reader = threading.Thread(target=receive)
    reader.start()
    try:
        subprocess.run([str(binary("efu-nmx-gen", args.build_dir)), "--host", "127.0.0.1",
                        "--port", str(port), "--ground-truth", truth_path, "--summary",
                        summary_path, "--geometry", config] + flags, check=True, timeout=120)
    finally:
        done.set()
        reader.join()
        sock.close()
    with open(summary_path) as f:
        sent = json.load(f)
    # Loopback may still drop under load: then only what arrived is checked (as efu's runs do).
    lost = sent["packets"] - len(datagrams)
    require(lost >= 0, "received %d datagrams of the %d sent" % (len(datagrams), sent["packets"]))
    if lost:
        print("note: %d datagram(s) lost on the way to the model (the kernel's drop)" % lost)
    hits = []
    for d in datagrams:
        pulse, readouts = decode(d, hybrids)
        hits += [(pulse,) + r for r in readouts]
    check(lost > 0 or len(hits) == sent["readouts"],
          "model decoded %d of %d readouts" % (len(hits), sent["readouts"]))
    counts = {k: 0 for k in ("no_match_x", "no_match_y", "x_span", "y_span", "pixel",
                             "split_attempted", "split_done", "split_unmatched")}
    events = model_events(cfg, group_hits(cfg, hits), counts)
    truth = read_nmx_truth(truth_path, sent["neutrons"])
    check_events_against_truth(events, [t for t, kind, _ in truth if kind in FORMED], lost, 0,
                               distorted_per_lost_packet=2 * MAX_READOUTS_PER_PACKET,
                               lost_packets=lost)
    if lost == 0:
        check(counts["x_span"] == sent["rejected_span_x"]
              and counts["y_span"] == sent["rejected_span_y"],
              "model span rejections %s == sent %d, %d"
              % (counts, sent["rejected_span_x"], sent["rejected_span_y"]))
        check(counts["pixel"] == sent["rejected_pixel"],
              "model pixel rejections %d == sent %d" % (counts["pixel"], sent["rejected_pixel"]))
        check(counts["no_match_x"] == sent["noise_y"] and counts["no_match_y"] == sent["noise_x"],
              "model no-match %s == noise y %d, x %d" % (counts, sent["noise_y"], sent["noise_x"]))
        check(counts["split_done"] == sent["split_pairs"] and counts["split_unmatched"] == 0,
              "model splits %s == pairs %d" % (counts, sent["split_pairs"]))
        wide = sum(1 for _, kind, span in truth if kind.startswith("rejected") and span >= 10)
        check(counts["split_attempted"] == sent["split_pairs"] + wide,
              "model split attempts %d == pairs %d + wide %d"
              % (counts["split_attempted"], sent["split_pairs"], wide))
    check(sent["split_pairs"] > 0 and sent["ties"] > 0,
          "the model run has pairs and ties: %s" % sent)
    print("ok model: %d events (%d split pairs, %d ties) of %d neutrons, %d readouts, counts %s"
          % (len(events), sent["split_pairs"], sent["ties"], sent["neutrons"], len(hits), counts))


# --- End to end through efu ------------------------------------------------------------------
def check_counters(stats, sent, truth, split):
    faults = sent["faults"]

    def expect(name, want):
        got = stats.get(name, 0)
        check(got == want, "counter %s = %d, expected %d" % (name, got, want))

    corrupt = faults.get("corrupt", 0)
    expect("receive.packets", sent["packets"] - faults.get("empty", 0) - faults.get("oversize", 0))
    expect("parser.essheader.packets", sent["data_packets"] + corrupt)
    for counter, kind in (("cookie", "cookie"), ("version", "version"), ("length", "truncated"),
                          ("type", "type")):
        expect("parser.essheader.errors." + counter, faults.get(kind, 0))
    expect("parser.essheader.errors.sequence", 0)
    expect("readouts.received", sent["readouts"] + 5 * corrupt)
    expect("readouts.accepted", sent["readouts"])
    for reason in READOUT_REASONS:
        expect("readouts.errors." + reason, faults.get("readout_" + reason, 0))
    errors = sum(v for k, v in stats.items() if k.startswith("readouts.errors."))
    check(stats.get("readouts.received", 0) == stats.get("readouts.accepted", 0) + errors,
          "readouts.received == accepted + every readouts.errors.* (%d)" % errors)
    expect("events.formed", sent["events"])
    expect("events.rejected.x_span_too_large", sent["rejected_span_x"])
    expect("events.rejected.y_span_too_large", sent["rejected_span_y"])
    # A noise strip of one plane is an event with no cluster in the other plane.
    expect("events.rejected.no_match_x", sent["noise_y"])
    expect("events.rejected.no_match_y", sent["noise_x"])
    expect("events.rejected.pixel", sent["rejected_pixel"])
    for reason in ("x_span_too_small", "y_span_too_small", "x_time_span_too_large",
                   "y_time_span_too_large", "split_unmatched"):
        expect("events.rejected." + reason, 0)
    expect("events.split.done", sent["split_pairs"])
    # SplitMultiEvents tries every group with a plane spanning 10 strips or more: the pairs, and
    # the wide single neutrons that are that wide (the generator keeps other singles below 10).
    wide = sum(1 for _, kind, span in truth if kind.startswith("rejected") and span >= 10)
    expect("events.split.attempted", sent["split_pairs"] + wide if split else 0)
    # Every neutron slot (a single, a pair, a wide one) and every noise strip is one time group.
    expect("events.groups",
           sent["neutrons"] - sent["split_pairs"] + sent["noise_x"] + sent["noise_y"])
    check(stats.get("events.formed", 0) + stats.get("events.rejected.x_span_too_large", 0)
          + stats.get("events.rejected.y_span_too_large", 0)
          + stats.get("events.rejected.pixel", 0) == sent["neutrons"],
          "formed + span and pixel rejections == the %d neutrons sent" % sent["neutrons"])


def run_efu(args, config, flags, threads, split):
    gen = COMMON + ["--geometry", config] + flags
    run = run_efu_and_generator(
        args.build_dir, args.broker, "nmx_" + args.variant,
        # The wall-clock cluster timeout is for a stream that pauses; here a descheduled thread
        # would split neutrons that straddle packets, so it is out of reach (flush at the stop
        # closes every group).
        ["--module", "nmx", "--geometry", config, "--processing-threads", str(threads),
         "--cluster-timeout-ms", "600000"],
        "efu-nmx-gen", gen)
    sent, stats = run["sent"], run["stats"]
    drops = check_host_accounting(stats, sent["packets"])
    faults = sent["faults"]
    check(stats.get("receive.dropped.empty", 0) == faults.get("empty", 0),
          "empty datagrams counted")
    check(stats.get("receive.truncated", 0) == faults.get("oversize", 0),
          "oversize datagrams counted")
    truth = read_nmx_truth(run["truth_path"], sent["neutrons"])
    if drops == 0:
        check_counters(stats, sent, truth, split)
    check(stats.get("hits.late", 0) == 0, "hits.late = %d, expected 0" % stats.get("hits.late", 0))
    check(stats.get("hits.reorder_buffer_full", 0) == 0, "hits.reorder_buffer_full = 0")
    check(stats.get("kafka.delivery.failed", 0) == 0, "kafka.delivery.failed = 0")
    check(sent["ties"] > 0 and sent["rejected_span_x"] + sent["rejected_span_y"] > 0,
          "the run has ties and wide neutrons")
    if split:
        check(sent["split_pairs"] > 0, "the split variant sent pairs")
    if args.variant == "small_picture":
        check(sent["rejected_pixel"] > 0, "the small_picture variant sent neutrons off the picture")
    if "--delay-fraction" in flags:
        check(sent["delayed_across_packets"] > 0,
              "the delayed variant delayed readouts into later packets: %d of %d"
              % (sent["delayed_across_packets"], sent["delayed"]))
    if args.variant == "faults":
        for kind in ("cookie", "truncated", "version", "type", "corrupt", "empty", "oversize"):
            check(sent["faults"].get(kind, 0) > 0, "the faults variant sent %s faults" % kind)
    messages = read_events(args.broker, run["events_topic"])
    events = events_of(messages, "nmx")
    lost_packets = sent["packets"] - stats.get("process.packets", 0)
    # A lost readout leaves the rest of its neutron to form at most two wrong events.
    check_events_against_truth(events, [t for t, kind, _ in truth if kind in FORMED], drops, 0,
                               distorted_per_lost_packet=2 * MAX_READOUTS_PER_PACKET,
                               lost_packets=lost_packets)
    print("ok %s: %d events of %d neutrons (%d split pairs, %d ties, %d wide) in %d ev44 messages, "
          "%d packets, %d delayed (%d into later packets), faults %s"
          % (args.variant, len(events), sent["neutrons"], sent["split_pairs"], sent["ties"],
             sent["rejected_span_x"] + sent["rejected_span_y"], len(messages), sent["packets"],
             sent["delayed"], sent["delayed_across_packets"], sent["faults"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--broker")
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--variant", choices=sorted(VARIANTS), default="ordered")
    args = ap.parse_args()
    config_file, flags, threads = VARIANTS[args.variant]
    config = os.path.join(args.source_dir, "modules", "nmx", "configs", config_file)
    if args.variant == "small_picture":
        with open(config) as f:
            small = json.load(f)
        small["SizeX"] = small["SizeY"] = 1000
        config = os.path.join(tempfile.mkdtemp(prefix="nmx-small-"), "nmx_small.json")
        with open(config, "w") as f:
            json.dump(small, f)
    if args.variant == "model":
        run_model(args, config, flags + ["--neutrons-per-pulse", "1000", "--noise-per-pulse", "50",
                                         "--tie-fraction", "0.2", "--wide-fraction", "0.05",
                                         "--seed", "7"])
        return
    require(args.broker, "--broker is required for the efu variants")
    run_efu(args, config, flags, threads, config_file == "nmx_split.json")


if __name__ == "__main__":
    main()
    sys.exit(finish())
