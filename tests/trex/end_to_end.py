#!/usr/bin/env python3
"""End to end: efu-trex-gen -> efu --module trex -> Kafka -> this consumer.

Variants, on the facility's trex.json and let.json (the shipped copies, unchanged):
  trex_ordered, trex_shuffled (readouts in random order inside every packet), trex_delayed (a
  fifth of the readouts held back into later packets, by up to 200 us of detector time, inside
  efu's 1 ms reorder window), let_ordered, let_shuffled, faults (every fault kind between the
  good packets). trex_shuffled, let_shuffled and faults also draw a tenth of the neutrons
  anywhere in the vessels, outside the pixel volume too (expected rejections, counted).
  trex.json says SizeY 51 and LET's rotated vessel has YOffset 0, so those files leave many
  grids outside the pixel volume; two more variants use a copy with one value changed
  so that rotation and the offsets are exercised over whole vessels: trex_size140 (SizeY 140, the
  reference's default) and let_offset (YOffset 50), both shuffled and delayed. grid_span: up to
  6 grids per neutron, so the grid-span cut rejects some (the generator's summary says which).
  generator: no efu, no Kafka: the generator's datagrams read here on a UDP socket and decoded
  with the reference's own forward equations (TREXGeometry, LETGeometry: channel -> wire x/z and
  grid y), written out again below, so the generator's inverse is checked by a third hand.

Asserts, against the generator's ground truth and summary:
- every ground-truth neutron arrives exactly once, with its pulse time, TOF and pixel exactly
  (the generator records the TOF as efu converts the ESS ticks of the earliest hit);
- no other event arrives (noise hits are one wire or one grid alone in their time group; they,
  the neutrons over the grid-span cut and those outside the pixel volume are rejected and
  counted, never events; so are the packets of pulses the file's MaxPulseTimeNS refuses);
- ev44 message_ids are consecutive;
- the accounting identity: readouts received = accepted + every readout error; events formed +
  every event rejection = the generator's neutrons + rejections + noise; efu's counters equal
  what the generator sent, fault by fault; every datagram processed or in a loss counter.

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
import time

from support.checks import check, finish, require
from support.e2e import (check_events_against_truth, check_host_accounting, events_of, read_truth,
                         run_efu_and_generator)
from support.efu import binary
from support.kafka import read_events
from support.ports import free_udp_port

# A jumbo datagram's payload (8972 B) after the 32-byte v1 ESS header, in 20-byte readouts.
MAX_READOUTS_PER_PACKET = (8972 - 32) // 20
DELAY = ["--delay-fraction", "0.2", "--max-delay-ns", "200000"]
# A tenth of the neutrons drawn anywhere in the vessels, outside the pixel volume too: expected
# rejections (events.rejected.pixel, or grid_span where a rotated vessel's grids wrap below 0).
OUTSIDE = ["--outside-fraction", "0.1"]

VARIANTS = {
    # name: (config, changes to the config, generator flags, generator queues, processing threads)
    "trex_ordered": ("trex.json", {}, [], 4, 2),
    "trex_shuffled": ("trex.json", {}, ["--shuffle"] + OUTSIDE, 4, 2),
    "trex_delayed": ("trex.json", {}, ["--shuffle"] + DELAY, 4, 2),
    "let_ordered": ("let.json", {}, [], 2, 1),
    "let_shuffled": ("let.json", {}, ["--shuffle"] + OUTSIDE, 2, 1),
    "faults": ("trex.json", {}, ["--fault-fraction", "0.25"] + OUTSIDE, 2, 1),
    "trex_size140": ("trex.json", {"SizeY": 140}, ["--shuffle"] + DELAY, 4, 2),
    "let_offset": ("let.json", {"YOffset": 50}, ["--shuffle"] + DELAY, 2, 1),
    "grid_span": ("trex.json", {"SizeY": 140}, ["--max-grids", "6"], 2, 1),
    "generator": (None, {}, [], 1, 1),
}


def config_path(source_dir, name, changes, work):
    """The shipped facility file, or a copy with `changes` (top-level keys, or YOffset of every
    vessel) in `work`."""
    path = os.path.join(source_dir, "modules", "trex", "configs", name)
    if not changes:
        return path
    with open(path) as f:
        doc = json.load(f)
    for key, value in changes.items():
        if key == "YOffset":
            for vessel in doc["Vessel_Config"].values():
                vessel[key] = value
        else:
            doc[key] = value
    out = os.path.join(work, name)
    with open(out, "w") as f:
        json.dump(doc, f)
    return out


# --- The reference's forward equations --------------------------------------------------------

TICK_NS = 1e9 / 88052500


def to_ns(high, low):
    """ESS time -> ns as the facility (and efu) compute it: the double tick, truncated."""
    return high * 1_000_000_000 + int(float(low) * TICK_NS)


def round_half_up(num, den):
    """std::round(num / den) for num, den >= 0."""
    return (2 * num + den) // (2 * den)


class Facility:
    """The reference's TREXGeometry / LETGeometry and Config, for one config file."""

    def __init__(self, path):
        with open(path) as f:
            doc = json.load(f)
        self.let = doc["InstrumentGeometry"] == "LET"
        self.size = (doc.get("SizeX", 384), doc.get("SizeY", 140), doc.get("SizeZ", 16))
        self.max_pulse_time_ns = doc.get("MaxPulseTimeNS", 5 * 71428571)
        self.hybrids = {}
        for entry in doc["Config"]:
            vessel = doc["Vessel_Config"][entry["VesselId"]]
            self.hybrids[(entry["Ring"], entry["FEN"], entry["Hybrid"])] = vessel

    def wire(self, ring, fen, hybrid, asic, channel, vessel):
        if self.let:  # LET's boards swap even and odd channels
            channel = channel + 1 if channel % 2 == 0 else channel - 1
        if hybrid != (1 if self.let else 0):
            return None
        if not ((asic == 0 and 32 <= channel <= 63) or (asic == 1 and channel <= 63)):
            return None
        xz = (asic if self.let else hybrid * 2 + asic) * 64 + channel - 32
        if (ring % 2 == 0) if self.let else (fen % 2 == 1):
            xz += 96  # the vessel's second column
        if vessel.get("Rotation"):
            xz = 16 * ((11 - ((xz >> 4) & 0xFF)) & 0xFF) + xz % 16
        return (xz + 16 * vessel.get("XOffset", 0)) & 0xFFFF

    def grid(self, hybrid, asic, channel, vessel):
        short = vessel.get("Short", False)
        if short:
            ok = hybrid == (0 if self.let else 1) and asic == 0 and channel <= 50
        else:
            ok = ((hybrid == 1 and (asic == 1 or channel >= 58))
                  or (hybrid == 2 and (asic == 0 or channel <= 5)))
        if not ok:
            return None
        y = channel if short else (hybrid * 2 + asic - 2) * 64 + channel - 58
        if vessel.get("Rotation"):
            y = -y & 0xFFFF
        return (y + vessel.get("YOffset", 0)) & 0xFFFF

    def coordinate(self, ring, fen, vmm, channel):
        """(plane, coordinate): 0 a wire's x*16+z, 1 a grid's y; None if unmapped."""
        hybrid, asic = vmm >> 1, vmm & 1
        vessel = self.hybrids.get((ring, fen, hybrid))
        if vessel is None:
            return None
        if hybrid == (1 if self.let else 0):
            c = self.wire(ring, fen, hybrid, asic, channel, vessel)
            return None if c is None else (0, c)
        c = self.grid(hybrid, asic, channel, vessel)
        return None if c is None else (1, c)

    def pixel(self, xz, y):
        """ESSGeometry pixel3D(x = xz / 16, y, z = xz % 16), 0 outside the size."""
        x, z = xz // 16, xz % 16
        sx, sy, sz = self.size
        if x >= sx or y >= sy or z >= sz:
            return 0
        return 1 + x + sx * (y + sy * z)


def udp_drops(port):
    """The kernel's drop count of the UDP socket bound to `port` (/proc/net/udp)."""
    with open("/proc/net/udp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if int(fields[1].split(":")[1], 16) == port:
                return int(fields[-1])
    return 0


def receive_generator(build_dir, config, gen_args, work):
    """Runs the generator into a UDP socket here; returns (datagrams, summary, truth path,
    kernel drops). Bounded: 60 s for the generator, then 2 s of silence."""
    port = free_udp_port()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    sock.bind(("127.0.0.1", port))
    sock.settimeout(0.2)
    truth, summary = os.path.join(work, "truth.txt"), os.path.join(work, "summary.json")
    proc = subprocess.Popen([str(binary("efu-trex-gen", build_dir)), "--host", "127.0.0.1",
                             "--port", str(port), "--geometry", config, "--ground-truth", truth,
                             "--summary", summary] + gen_args)
    datagrams, deadline, quiet_since = [], time.monotonic() + 60, None
    try:
        while time.monotonic() < deadline:
            try:
                datagrams.append(sock.recv(70000))
                quiet_since = None
                continue
            except socket.timeout:
                pass
            if proc.poll() is None:
                continue
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since > 2:
                break
        require(proc.poll() == 0, "generator exited with %s" % proc.poll())
        drops = udp_drops(port)
    finally:
        if proc.poll() is None:
            proc.kill()
        sock.close()
    with open(summary) as f:
        return datagrams, json.load(f), truth, drops


def decode_hits(facility, datagrams):
    """Per (ring, FEN): (time, plane, coordinate, adc, pulse) of every readout; how many readouts
    did not map; how many datagrams the header check refuses (pulse - previous pulse over
    MaxPulseTimeNS)."""
    units, unmapped, refused = {}, 0, 0
    for d in datagrams:
        header = 30 if d[1] == 0 else 32
        pulse = to_ns(*struct.unpack_from("<II", d, 10))
        prev = to_ns(*struct.unpack_from("<II", d, 18))
        if pulse - prev > facility.max_pulse_time_ns:
            refused += 1
            continue
        for at in range(header, len(d), 20):
            fiber, fen, _, high, low, _, otadc, _, _, vmm, channel = struct.unpack_from(
                "<BBHIIHHBBBB", d, at)
            mapped = facility.coordinate(fiber // 2, fen, vmm, channel)
            if mapped is None:
                unmapped += 1
                continue
            t = to_ns(high, low)
            units.setdefault((fiber // 2, fen), []).append(
                (t, mapped[0], mapped[1], otadc & 0x3FF, pulse if t >= pulse else prev))
    return units, unmapped, refused


def reference_events(facility, units, gap_ns, span_cut):
    """The reference's event formation on well-separated neutrons: per (ring, FEN), hits chained
    by at most gap_ns; wire and grid centres of mass (std::round), the cut on the grids' span
    (max - min + 1 of their 16-bit y, as efu; the reference's coordSpan() truncates a span of
    65536, grids 0 and 65535 of a wrapped rotated vessel, to 0), pixel3D, the event time the
    earliest hit. Returns (events, [wire-only, grid-only], over the cut, outside the volume)."""
    events, alone, over, outside = [], [0, 0], 0, 0
    for hits in units.values():
        hits.sort()
        groups, group = [], [hits[0]]
        for h in hits[1:]:
            if h[0] - group[-1][0] > gap_ns:
                groups.append(group)
                group = []
            group.append(h)
        groups.append(group)
        for g in groups:
            planes = [[h for h in g if h[1] == p] for p in (0, 1)]
            if not planes[0] or not planes[1]:
                alone[0 if planes[0] else 1] += 1
                continue
            grids = [h[2] for h in planes[1]]
            if max(grids) - min(grids) + 1 > span_cut:
                over += 1
                continue
            centre = [round_half_up(sum(h[2] * h[3] for h in p), sum(h[3] for h in p))
                      for p in planes]
            pixel = facility.pixel(centre[0], centre[1])
            if pixel == 0:
                outside += 1
                continue
            first = min(g)
            events.append((first[4], first[0] - first[4], pixel))
    return events, alone, over, outside


def check_generator(args, work, config, wide, partial):
    """The generator against the reference's forward equations, for this config, shuffled and
    delayed, a fifth of the neutrons anywhere in the vessels; with `wide` vessels (more than one
    grid inside the pixel volume), some neutrons over the grid-span cut; with a `partial` volume
    (channels outside it), some neutrons outside it."""
    facility = Facility(config)
    datagrams, sent, truth_path, drops = receive_generator(
        args.build_dir, config, ["--pulses", "4", "--neutrons-per-pulse", "400",
                                 "--noise-per-pulse", "50", "--max-grids", "6", "--queues", "3",
                                 "--rate-pps", "2000", "--seed", "7", "--shuffle"] + DELAY
        + ["--outside-fraction", "0.2"], work)
    require(len(datagrams) + drops == sent["packets"], "datagrams %d + kernel drops %d == sent %d"
            % (len(datagrams), drops, sent["packets"]))
    units, unmapped, refused = decode_hits(facility, datagrams)
    check(unmapped == 0,
          "every readout maps through the reference's equations (%d do not)" % unmapped)
    if drops == 0:
        check(refused == sent["packets_rejected_pulse"], "datagrams over MaxPulseTimeNS %d == %d"
              % (refused, sent["packets_rejected_pulse"]))
    events, alone, over, outside = reference_events(facility, units, 500, sent["grid_span_cut"])
    truth = read_truth(truth_path, sent["neutrons"])
    check(all(t[2] != 0 for t in truth), "every ground-truth pixel is inside the pixel space")
    check_events_against_truth(events, truth, drops)
    if drops == 0:
        check(alone == [sent["noise_wire"], sent["noise_grid"]],
              "wire-only / grid-only groups %s == noise %s"
              % (alone, [sent["noise_wire"], sent["noise_grid"]]))
        check(over == sent["rejected_grid_span"], "over the grid-span cut %d == %d"
              % (over, sent["rejected_grid_span"]))
        check(outside == sent["rejected_pixel"], "outside the pixel volume %d == %d"
              % (outside, sent["rejected_pixel"]))
    check(sent["delayed"] > 0, "the run delayed readouts (%d)" % sent["delayed"])
    if partial:
        check(sent["rejected_pixel"] > 0, "the run had neutrons outside the volume (%d)"
              % sent["rejected_pixel"])
    if wide:
        check(sent["rejected_grid_span"] > 0, "the run had neutrons over the cut (%d)"
              % sent["rejected_grid_span"])
    print("ok generator %s: %d neutrons, %d distinct pixels, %d over the cut, %d outside, "
          "%d datagrams" % (os.path.basename(config), len(events), len({e[2] for e in events}),
                            over, outside, len(datagrams)))


# --- Through efu ----------------------------------------------------------------------------


def expect(stats, name, want):
    got = stats.get(name, 0)
    check(got == want, "counter %s = %d, expected %d" % (name, got, want))


def sum_of(stats, prefix):
    return sum(v for k, v in stats.items() if k.startswith(prefix))


def check_counters(stats, sent, drops):
    """efu's readout and event counters against what the generator sent."""
    faults = sent["faults"]
    # Corrupt packets parsed: those not in a pulse the header check refuses (MaxPulseTimeNS).
    corrupt = faults.get("corrupt", 0) - faults.get("corrupt_rejected_pulse", 0)
    expect(stats, "readouts.errors.length", faults.get("readout_length", 0))
    if drops:
        return
    refused = sent["packets_rejected_pulse"] + faults.get("corrupt_rejected_pulse", 0)
    expect(stats, "parser.essheader.packets", sent["data_packets"] - sent["packets_rejected_pulse"]
           + corrupt)
    expect(stats, "parser.essheader.errors.pulse_time_diff", refused)
    for kind, reason in (("cookie", "cookie"), ("truncated", "length"), ("version", "version"),
                         ("type", "type")):
        expect(stats, "parser.essheader.errors." + reason, faults.get(kind, 0))
    if refused == 0:  # a refused packet is a gap in its queue's sequence
        expect(stats, "parser.essheader.errors.sequence", 0)
    received = stats.get("readouts.received", 0)
    accepted = sent["readouts"] - sent["readouts_rejected_pulse"]
    expect(stats, "readouts.received", accepted + 5 * corrupt)
    # Accounting identity of the readouts: every one accepted or in one error counter.
    check(stats.get("readouts.accepted", 0) + sum_of(stats, "readouts.errors.") == received,
          "readouts.accepted + readouts.errors.* == readouts.received %d" % received)
    expect(stats, "readouts.accepted", accepted)
    for reason in ("length", "fiber", "fen", "vmm", "channel", "time_fraction",
                   "adc_below_threshold"):
        expect(stats, "readouts.errors." + reason, faults.get("readout_" + reason, 0))
    expect(stats, "events.formed", sent["neutrons"])
    # Every time group is an event or one rejection: neutrons over the cut, noise alone.
    expect(stats, "events.rejected.grid_span", sent["rejected_grid_span"])
    expect(stats, "events.rejected.wire_only", sent["noise_wire"])
    expect(stats, "events.rejected.grid_only", sent["noise_grid"])
    expect(stats, "events.rejected.pixel", sent["rejected_pixel"])
    rejected = (sent["rejected_grid_span"] + sent["rejected_pixel"] + sent["noise_wire"]
                + sent["noise_grid"])
    check(sum_of(stats, "events.rejected.") == rejected,
          "events.rejected.* %d == over the cut + outside + noise %d"
          % (sum_of(stats, "events.rejected."), rejected))


def run_variant(args, work):
    config_file, changes, flags, queues, threads = VARIANTS[args.variant]
    config = config_path(args.source_dir, config_file, changes, work)
    gen = ["--pulses", "20", "--neutrons-per-pulse", "1500", "--noise-per-pulse", "100",
           "--queues", str(queues), "--rate-pps", "3000", "--seed", "42"] + flags
    run = run_efu_and_generator(
        args.build_dir, args.broker, "trex_" + args.variant,
        # The wall-clock cluster timeout is for a stream that pauses; a thread descheduled that
        # long on a loaded machine would split neutrons that straddle packets. flush at the stop
        # still closes every group.
        ["--module", "trex", "--geometry", config, "--processing-threads", str(threads),
         "--cluster-timeout-ms", "600000"],
        "efu-trex-gen", ["--geometry", config] + gen)
    sent, stats = run["sent"], run["stats"]
    drops = check_host_accounting(stats, sent["packets"])
    check_counters(stats, sent, drops)
    # Delays stay inside the reorder window: no hit is late, no event split.
    expect(stats, "hits.late", 0)
    expect(stats, "hits.reorder_buffer_full", 0)
    expect(stats, "kafka.delivery.failed", 0)
    if "--delay-fraction" in flags:
        check(sent["delayed"] > 0, "the variant delayed readouts")
    if args.variant == "faults":
        for kind in ("cookie", "truncated", "version", "type", "corrupt", "empty", "oversize"):
            check(sent["faults"].get(kind, 0) > 0, "the faults variant sent %s" % kind)
    if args.variant == "grid_span":
        check(sent["rejected_grid_span"] > 0, "neutrons over the grid-span cut were sent")
    if "--outside-fraction" in flags:
        check(sent["rejected_pixel"] > 0, "neutrons outside the pixel volume were sent")
    events = events_of(read_events(args.broker, run["events_topic"]), "trex")
    truth = read_truth(run["truth_path"], sent["neutrons"])
    lost_packets = sent["packets"] - stats.get("process.packets", 0)
    # A lost packet leaves what is left of its neutrons to form at most one wrong event each.
    check_events_against_truth(events, truth, drops,
                               distorted_per_lost_packet=MAX_READOUTS_PER_PACKET,
                               lost_packets=lost_packets)
    print("ok %s: %d neutrons, %d distinct pixels, %d packets, %d delayed, faults %s"
          % (args.variant, len(events), len({e[2] for e in events}), sent["packets"],
             sent["delayed"], sent["faults"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--broker")
    ap.add_argument("--variant", choices=sorted(VARIANTS), default="trex_ordered")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="trex-e2e-")
    if args.variant == "generator":
        # let.json as shipped: the rotated vessel at YOffset 0 keeps grid 0 alone inside SizeY.
        # The changed copies have every channel inside the pixel volume.
        for name, changes, wide, partial in (
                ("trex.json", {}, True, True), ("trex.json", {"SizeY": 140}, True, False),
                ("let.json", {}, False, True), ("let.json", {"YOffset": 50}, True, False)):
            sub = tempfile.mkdtemp(dir=work)
            check_generator(args, sub, config_path(args.source_dir, name, changes, sub), wide,
                            partial)
        return
    require(args.broker is not None, "--broker given")
    run_variant(args, work)


if __name__ == "__main__":
    main()
    sys.exit(finish())
