#!/usr/bin/env python3
"""End to end with the facility's own Estia files, unchanged: efu --module multiblade
--geometry estia_config.json --calibration estia_calib.json, fed by efu-multiblade-gen with the
same estia_config.json, events read back from Kafka.

The files are read from the reference snapshot (EFU_REFERENCE_GIT_DIR, default the project's
mirror); without it the test exits 77 (skipped). The calibration has entries for only some of
the config's hybrids: efu must start, name the others in one warning, count them in the gauge
calibration.uncalibrated_hybrids, and run them uncalibrated; --calibration-strict on must refuse
the pair (exit 2, the line naming the file, /Calibrations and the first missing HybridId).

The config's MaxPulseTimeNS is 71428570, one ns below a 14 Hz period (docs/multiblade.md), so
the pulses whose period, on ESS ticks, comes out above it are rejected whole
(parser.essheader.errors.pulse_time_diff): the generator starts at a fixed time so which ones is
reproducible, and this test works it out from the ground truth.

Asserts:
- exactly one warning line, naming every hybrid without calibration (worked out here from the two
  files) by cassette and HybridId, and the gauge equal to their number;
- accounting: every datagram processed or counted as lost by the host; every processed packet
  accepted by the header parser or counted under one parser.essheader.errors reason; every
  readout accepted or counted under one readouts.errors reason;
- events formed > 0, and (when the host lost nothing) every neutron of an accepted pulse exactly
  once with its pixel and its time of flight plus the TDC term of the identity calibration (the
  generator writes TDC 0: trunc(1.5 * 22.72) = 34 ns), for the calibrated and the uncalibrated
  hybrids alike, and no other event.

Every wait is bounded; nothing asserts on elapsed time.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from support.checks import check, finish, require
from support.e2e import (check_events_against_truth, check_host_accounting, events_of, read_truth,
                         run_efu_and_generator)
from support.kafka import read_events
from support.ports import free_udp_port

SKIP = 77
REFERENCE_GIT_DIR = os.environ.get("EFU_REFERENCE_GIT_DIR",
                                   "/work/.mirror/ess-dmsc+event-formation-unit/repo")
CONFIGS = "src/modules/freia/configs/"
# The identity calibration's TDC term for TDC 0, which the generator writes in every readout.
TDC_TERM_NS = 34
# As in end_to_end.py: the generator's choice of the nearest tick.
TOF_TOLERANCE_NS = 6
MAX_READOUTS_PER_PACKET = (8972 - 30) // 20
# The first pulse: a fixed time (on no particular tick), so which pulses the file's
# MaxPulseTimeNS rejects is the same every run.
START_NS = 1_767_225_600_123_456_789
PULSE_PERIOD_NS = 1_000_000_000 // 14  # the generator's (gen::kPulsePeriodNs)
TICK_NS = 1e9 / 88_052_500


def reference_file(name, work):
    """The reference's file, written to `work`; None without a snapshot."""
    if not os.path.isdir(REFERENCE_GIT_DIR):
        return None
    out = subprocess.run(["git", "--git-dir=" + REFERENCE_GIT_DIR, "show",
                          "HEAD:" + CONFIGS + name], capture_output=True, timeout=60)
    if out.returncode != 0 or not out.stdout:
        return None
    path = os.path.join(work, name)
    with open(path, "wb") as f:
        f.write(out.stdout)
    return path


def uncalibrated_hybrids(config, calibration):
    """(cassette, HybridId) of every Config[] entry no Calibrations[] entry names."""
    calibrated = {c["VMMHybridCalibration"]["HybridId"] for c in calibration["Calibrations"]}
    return [(e["CassetteNumber"], e["HybridId"]) for e in config["Config"]
            if e["HybridId"] not in calibrated]


def is_identity(calibration):
    """True if every channel's offsets are 0 and slopes 1 (the sample's case): then every hybrid,
    calibrated or not, adds the same TDC term and passes its ADC unchanged."""
    for c in calibration["Calibrations"]:
        for vmm in ("vmm0", "vmm1"):
            v = c["VMMHybridCalibration"][vmm]
            if any(x != 0 for x in v["adc_offset"] + v["tdc_offset"]) or \
                    any(x != 1 for x in v["adc_slope"] + v["tdc_slope"]):
                return False
    return True


def decoded(ns):
    """ns as the generator writes it into an ESS header and efu reads it back (ess::to_ess, the
    nearest tick, then ess::to_ns, truncated), in the same double arithmetic."""
    high, frac = divmod(ns, 1_000_000_000)
    low = int(frac / TICK_NS)
    candidates = [l for l in (low - 1, low, low + 1) if l >= 0]
    low = min(candidates, key=lambda l: (abs(int(l * TICK_NS) - frac), l))
    return high * 1_000_000_000 + int(low * TICK_NS)


def accepted_pulses(truth, max_pulse_time_ns):
    """The pulse times (from the ground truth) whose header passes pulse - previous pulse <=
    MaxPulseTimeNS; the first pulse's previous one is a period before the start."""
    pulses = sorted({t[0] for t in truth})
    previous = [decoded(START_NS - PULSE_PERIOD_NS)] + pulses[:-1]
    return {p for p, q in zip(pulses, previous) if p - q <= max_pulse_time_ns}


def neutrons_per_cassette(truth_path, accepted):
    """Cassette number -> neutrons of the accepted pulses, from the ground truth."""
    counts = {}
    with open(truth_path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            fields = line.split()
            if int(fields[0]) in accepted:
                counts[int(fields[3])] = counts.get(int(fields[3]), 0) + 1
    return counts


def check_warning_and_gauge(log, stats, missing, hybrids, calibration):
    warnings = [line for line in log.splitlines() if "no calibration in" in line]
    require(len(warnings) == 1, "%d warnings about hybrids without calibration, expected one: %s"
          % (len(warnings), warnings))
    check("multiblade: %d of %d hybrids have no calibration in '%s'"
          % (len(missing), hybrids, calibration) in warnings[0], "warning: %s" % warnings[0])
    for cassette, hybrid_id in missing:
        check("cassette %d (HybridId %s)" % (cassette, hybrid_id) in warnings[0],
              "the warning names cassette %d (HybridId %s)" % (cassette, hybrid_id))
    check(stats.get("calibration.uncalibrated_hybrids") == len(missing),
          "calibration.uncalibrated_hybrids %s, expected %d"
          % (stats.get("calibration.uncalibrated_hybrids"), len(missing)))


def check_strict_refuses(build_dir, config, calibration, first_missing):
    efu = subprocess.run(
        [os.path.join(build_dir, "bin", "efu"), "--module", "multiblade", "--geometry", config,
         "--calibration", calibration, "--calibration-strict", "on", "--broker", "none",
         "--bind", "127.0.0.1", "--port", str(free_udp_port())],
        capture_output=True, text=True, timeout=60)
    cassette, hybrid_id = first_missing
    line = ("multiblade calibration '%s': /Calibrations: has no entry for HybridId \"%s\" "
            "(cassette %d)" % (calibration, hybrid_id, cassette))
    check(efu.returncode == 2, "--calibration-strict on: exit %d, expected 2" % efu.returncode)
    check(line in efu.stderr, "--calibration-strict on: a line %r in:\n%s" % (line, efu.stderr))


def run_capturing_stderr(work, run):
    """run() with this process's stderr (which efu and the generator inherit) in a file; returns
    run()'s result and the text, which is also passed on to the real stderr."""
    path = os.path.join(work, "stderr.txt")
    saved = os.dup(2)
    try:
        with open(path, "w") as f:
            os.dup2(f.fileno(), 2)
            try:
                result = run()
            finally:
                os.dup2(saved, 2)
    finally:
        os.close(saved)
        with open(path) as f:
            text = f.read()
        sys.stderr.write(text)
    return result, text


def check_accounting(stats, sent):
    drops = check_host_accounting(stats, sent["packets"])
    # A sequence error is counted and the packet still used; every other error skips it.
    header_errors = sum(v for k, v in stats.items() if k.startswith("parser.essheader.errors.")
                        and k != "parser.essheader.errors.sequence")
    accepted, processed = stats.get("parser.essheader.packets", 0), stats.get("process.packets", 0)
    check(accepted + header_errors == processed,
          "parser.essheader.packets %d + header errors %d == process.packets %d"
          % (accepted, header_errors, processed))
    readout_errors = sum(v for k, v in stats.items() if k.startswith("readouts.errors."))
    check(stats.get("readouts.accepted", 0) + readout_errors == stats.get("readouts.received", 0),
          "readouts.accepted %d + errors %d == readouts.received %d"
          % (stats.get("readouts.accepted", 0), readout_errors, stats.get("readouts.received", 0)))
    check(stats.get("kafka.delivery.failed", 0) == 0, "kafka.delivery.failed == 0")
    return drops


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--broker", required=True)
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="mb_facility_estia-")
    config = reference_file("estia_config.json", work)
    calibration = reference_file("estia_calib.json", work)
    if config is None or calibration is None:
        print("no reference snapshot at %s: skipped" % REFERENCE_GIT_DIR)
        sys.exit(SKIP)
    with open(config) as f:
        config_json = json.load(f)
    with open(calibration) as f:
        calibration_json = json.load(f)
    missing = uncalibrated_hybrids(config_json, calibration_json)
    require(len(missing) > 0,
            "the facility's Estia calibration leaves hybrids out (else nothing to test)")
    require(is_identity(calibration_json), "the facility's Estia calibration is the identity "
            "(else the expected times of flight (truth + %d ns) need working out)" % TDC_TERM_NS)

    gen = ["--pulses", "28", "--neutrons-per-pulse", "1500", "--noise-per-pulse", "100",
           "--queues", "4", "--shape", "uniform", "--rate-pps", "3000", "--seed", "42",
           "--start-time-ns", str(START_NS), "--geometry", config]
    run, log = run_capturing_stderr(work, lambda: run_efu_and_generator(
        args.build_dir, args.broker, "mb_facility_estia",
        ["--module", "multiblade", "--geometry", config, "--calibration", calibration,
         "--processing-threads", "2", "--cluster-timeout-ms", "600000"],
        "efu-multiblade-gen", gen))
    sent, stats = run["sent"], run["stats"]

    check_warning_and_gauge(log, stats, missing, len(config_json["Config"]), calibration)
    drops = check_accounting(stats, sent)
    formed = stats.get("events.formed", 0)
    check(formed > 0, "events formed")

    truth = read_truth(run["truth_path"], sent["neutrons"])
    accepted = accepted_pulses(truth, config_json["MaxPulseTimeNS"])
    expected = [(t[0], t[1] + TDC_TERM_NS, t[2]) for t in truth if t[0] in accepted]
    per_cassette = neutrons_per_cassette(run["truth_path"], accepted)
    in_uncalibrated = sum(per_cassette.get(c, 0) for c, _ in missing)
    check(in_uncalibrated > 0, "neutrons of accepted pulses on uncalibrated hybrids")
    if drops == 0:
        check(formed == len(expected), "events.formed %d, expected the %d neutrons of the %d "
              "accepted pulses" % (formed, len(expected), len(accepted)))
    events = events_of(read_events(args.broker, run["events_topic"]), "multiblade")
    lost_packets = sent["packets"] - stats.get("process.packets", 0)
    check_events_against_truth(events, expected, drops, TOF_TOLERANCE_NS,
                               distorted_per_lost_packet=2 * MAX_READOUTS_PER_PACKET,
                               lost_packets=lost_packets)

    check_strict_refuses(args.build_dir, config, calibration, missing[0])
    print("ok: %d events (%d on the %d uncalibrated hybrids) from %d of %d pulses, %d packets "
          "rejected for MaxPulseTimeNS, %d packets sent"
          % (len(events), in_uncalibrated, len(missing), len(accepted), len({t[0] for t in truth}),
             stats.get("parser.essheader.errors.pulse_time_diff", 0), sent["packets"]))


if __name__ == "__main__":
    main()
    sys.exit(finish())
