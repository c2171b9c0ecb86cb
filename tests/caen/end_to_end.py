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
import socket
import subprocess
import sys
import tempfile
import time
import uuid

from confluent_kafka import Consumer, TopicPartition, KafkaException
from streaming_data_types import deserialise_ev44, deserialise_x5f2



def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def udp_port_bound(port):
    with open("/proc/net/udp") as f:
        return any(line.split()[1].endswith(":%04X" % port) for line in f.readlines()[1:])


def wait_for(predicate, what, timeout_s, proc=None):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc is not None and proc.poll() is not None:
            fail("efu exited with %d while waiting for %s" % (proc.returncode, what))
        time.sleep(0.1)
    fail("timed out after %d s waiting for %s" % (timeout_s, what))


def consumer(broker):
    return Consumer({"bootstrap.servers": broker, "group.id": "caen-e2e-" + uuid.uuid4().hex,
                     "enable.auto.commit": False, "auto.offset.reset": "earliest"})


def status_counters(broker, topic, want_packets, proc):
    """Polls x5f2 status messages until efu reports all packets processed (bounded)."""
    c = consumer(broker)
    c.assign([TopicPartition(topic, 0, -2)])  # -2: OFFSET_BEGINNING
    latest = {}
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                fail("efu exited early with %d" % proc.returncode)
            msg = c.poll(0.5)
            if msg is None or msg.error():
                continue
            latest = json.loads(deserialise_x5f2(msg.value()).status_json)["counters"]
            if latest.get("process.packets", 0) >= want_packets:
                return latest
    finally:
        c.close()
    fail("efu processed %s of %d packets within 60 s" % (latest.get("process.packets"), want_packets))


def read_events(broker, topic):
    """Every ev44 message in the topic, read up to the high watermark."""
    c = consumer(broker)
    try:
        low, high = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        c.assign([TopicPartition(topic, 0, low)])
        messages = []
        deadline = time.monotonic() + 60
        offset = low
        while offset < high:
            check(time.monotonic() < deadline, "read %d of %d ev44 messages within 60 s"
                  % (offset - low, high - low))
            msg = c.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                raise KafkaException(msg.error())
            messages.append(deserialise_ev44(msg.value()))
            offset = msg.offset() + 1
        return messages
    finally:
        c.close()


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
    expect("receive.packets", sent["packets"])
    expect("receive.dropped.kernel", 0)
    expect("receive.dropped.ring_full", 0)
    expect("process.packets", sent["packets"])
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
    expect("kafka.delivery.failed", 0)
    if args.variant == "faults":
        check(sum(faults.values()) > 0, "the faults variant injected no faults")

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
    check(len(events) == len(truth), "received %d events for %d neutrons" % (len(events), len(truth)))
    events.sort()
    truth.sort()
    for got, want in zip(events, truth):
        check(got == want, "event (pulse, tof, pixel) %s, expected %s" % (got, want))
    print("ok: %s, %d neutrons in %d ev44 messages, %d distinct pixels, %d packets, faults %s"
          % (args.instrument, len(events), len(messages), len(set(e[2] for e in events)),
             sent["packets"], faults))


if __name__ == "__main__":
    main()
