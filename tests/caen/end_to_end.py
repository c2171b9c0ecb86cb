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
import json
import os
import signal
import subprocess
import sys
import tempfile
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from e2e_support import (check, check_events_against_truth, check_host_accounting,  # noqa: E402
                         free_udp_port, read_events, status_counters, udp_port_bound, wait_for)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--broker", required=True)
    ap.add_argument("--instrument", choices=["loki", "bifrost", "cspec", "miracles"], required=True)
    ap.add_argument("--variant", choices=["clean", "faults"], default="clean")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="caen-e2e-")
    run_id = "%s_%s_%d_%s" % (args.instrument, args.variant, os.getpid(), uuid.uuid4().hex[:8])
    events_topic, status_topic = "caen_e2e_events_" + run_id, "caen_e2e_status_" + run_id
    port = free_udp_port()
    geometry = os.path.join(args.source_dir, "modules", "caen", "configs", args.instrument + ".json")
    stats_path = os.path.join(work, "stats.json")
    truth_path = os.path.join(work, "truth.txt")
    summary_path = os.path.join(work, "summary.json")
    threshold = 200

    efu = subprocess.Popen(
        [os.path.join(args.build_dir, "bin", "efu"), "--module", "caen", "--geometry", geometry,
         "--amplitude-threshold", str(threshold),
         "--bind", "127.0.0.1", "--port", str(port), "--broker", args.broker,
         "--events-topic", events_topic, "--status-topic", status_topic,
         "--stats-json", stats_path, "--stats-interval", "0.5", "--log-level", "warn"]
        # With faults, two processing threads: packets are routed by output queue (3 queues).
        + (["--processing-threads", "2"] if args.variant == "faults" else []))
    try:
        wait_for(lambda: udp_port_bound(port), "efu to bind UDP port %d" % port, 20, efu)
        gen = [os.path.join(args.build_dir, "bin", "efu-caen-gen"), "--geometry", geometry,
               "--host", "127.0.0.1", "--port", str(port), "--pulses", "28",
               "--neutrons-per-pulse", "3000", "--noise-per-pulse", "200", "--late-per-pulse", "40",
               "--noise-below", str(threshold), "--queues", "3", "--shape", "uniform",
               "--rate-pps", "3000", "--seed", "42",
               "--ground-truth", truth_path, "--summary", summary_path]
        if args.variant == "faults":
            gen += ["--fault-fraction", "0.25", "--fault-kinds", "cookie,truncated,version,type,corrupt"]
        subprocess.run(gen, check=True, timeout=120)
        with open(summary_path) as f:
            sent = json.load(f)
        check(sent["instrument"] == args.instrument, "generator ran %s" % sent["instrument"])
        check(sent["late"] > 0, "the generator sent no previous-pulse neutrons")
        check(sent["send_errors"] == 0, "generator send errors: %d" % sent["send_errors"])
        status_counters(args.broker, status_topic, sent["packets"], efu)
        efu.send_signal(signal.SIGTERM)
        check(efu.wait(timeout=60) == 0, "efu exit code %d" % efu.returncode)
    finally:
        if efu.poll() is None:
            efu.kill()
            efu.wait()

    with open(stats_path) as f:
        stats = json.load(f)
    faults = sent["faults"]

    def expect(name, want):
        got = stats.get(name, 0)
        check(got == want, "counter %s = %d, expected %d" % (name, got, want))

    corrupt = faults.get("corrupt", 0)
    drops = check_host_accounting(stats, sent["packets"])
    expect("kafka.delivery.failed", 0)
    if args.variant == "faults":
        check(sum(faults.values()) > 0, "the faults variant injected no faults")
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

    messages = read_events(args.broker, events_topic)
    check(len(messages) > 0, "no ev44 messages")
    ids = [m.message_id for m in messages]
    check(ids == list(range(ids[0], ids[0] + len(ids))), "message_ids not consecutive: %s" % ids[:20])
    events = []
    for m in messages:
        check(m.source_name == "caen", "source_name %r" % m.source_name)
        bounds = list(m.reference_time_index) + [len(m.time_of_flight)]
        for i, pulse in enumerate(m.reference_time):
            for k in range(bounds[i], bounds[i + 1]):
                events.append((int(pulse), int(m.time_of_flight[k]), int(m.pixel_id[k])))

    truth = []
    with open(truth_path) as f:
        for line in f:
            if not line.startswith("#"):
                truth.append(tuple(int(v) for v in line.split()[:3]))
    check(len(truth) == sent["neutrons"], "truth file has %d of %d neutrons" % (len(truth), sent["neutrons"]))
    check_events_against_truth(events, truth, drops)
    print("ok: %s, %d neutrons in %d ev44 messages, %d distinct pixels, %d packets, faults %s"
          % (args.instrument, len(events), len(messages), len(set(e[2] for e in events)),
             sent["packets"], faults))


if __name__ == "__main__":
    main()
