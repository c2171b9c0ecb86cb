"""The detector end-to-end runs (tests/<family>/end_to_end.py): a generator -> efu -> Kafka on
127.0.0.1, efu's host accounting, and the events read back against the generator's ground
truth. Needs the venv (support.kafka). Every wait is bounded; nothing asserts on elapsed time.
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
import uuid

from confluent_kafka import TopicPartition
from streaming_data_types import deserialise_x5f2

from support.checks import check, fail, require
from support.efu import Efu, binary
from support.kafka import consumer, read_events
from support.loss import lost_datagrams, rejected_datagrams
from support.ports import free_udp_port

# The kernel coalesces at most this many datagrams into one UDP GRO buffer (UDP_GRO_CNT_MAX).
MAX_GRO_SEGMENTS = 64


def status_counters(broker, topic, want_packets, proc):
    """Polls x5f2 status messages until efu reports all packets processed (or rejected), or
    until its counters stop moving for 5 s with some traffic seen (on a loaded machine efu may
    have dropped some, which its final counters then account for). Bounded: 90 s."""
    c = consumer(broker)
    c.assign([TopicPartition(topic, 0, -2)])  # -2: OFFSET_BEGINNING
    latest = {}
    deadline = time.monotonic() + 90
    last_seen, last_change = -1, time.monotonic()
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                fail("efu exited early with %d" % proc.returncode)
            msg = c.poll(0.5)
            if msg is not None and not msg.error():
                latest = json.loads(deserialise_x5f2(msg.value()).status_json)["counters"]
            if not latest:
                continue
            seen = latest.get("process.packets", 0) + latest.get("receive.dropped.ring_full", 0)
            if latest.get("process.packets", 0) + rejected_datagrams(latest) >= want_packets:
                return latest
            if seen != last_seen:
                last_seen, last_change = seen, time.monotonic()
            elif seen > 0 and time.monotonic() - last_change > 5:
                return latest
    finally:
        c.close()
    fail("efu processed %s of %d packets within 90 s" % (latest.get("process.packets"), want_packets))


def check_host_accounting(stats, sent_packets, gro=False):
    """Every datagram sent was processed or is in lost.datagrams or rejected.datagrams: exact
    under any load. (With --gro on the kernel drops whole coalesced buffers and counts one drop
    each, so there its drops bound the datagrams lost from below and 64 times them from above.)
    Returns lost.datagrams; the caller checks the detector's figures exactly only when it is 0 (a
    lost packet takes its neutrons with it), and otherwise that what did arrive is right.
    Rejected datagrams (malformed) are accounted for but are not lost: they carry no neutron,
    and must cost none."""
    drops = lost_datagrams(stats)
    rejected = rejected_datagrams(stats)
    processed = stats.get("process.packets", 0)
    if gro:
        kernel = stats.get("receive.dropped.kernel", 0)
        other = drops - kernel + rejected
        require(other + kernel <= sent_packets - processed <= other + MAX_GRO_SEGMENTS * kernel,
                "sent %d - processed %d within lost and rejected datagrams [%d, %d] (GRO)"
                % (sent_packets, processed, other + kernel, other + MAX_GRO_SEGMENTS * kernel))
    else:
        require(processed + drops + rejected == sent_packets,
                "process.packets %d + lost.datagrams %d + rejected.datagrams %d == sent %d"
                % (processed, drops, rejected, sent_packets))
    require(processed == stats.get("receive.packets", 0) - stats.get("receive.dropped.ring_full", 0),
            "process.packets == received - ring full")
    if drops:
        print("note: efu's host lost %d packet(s) on this loaded machine (counted); the exact "
              "per-neutron checks become: every event that arrived is a true neutron, once" % drops)
    return drops


def _first_mismatch(events, truth, tolerance_tof_ns):
    return next(((got, want) for got, want in zip(events, truth)
                 if not (got[0] == want[0] and got[2] == want[2]
                         and abs(got[1] - want[1]) <= tolerance_tof_ns)), None)


def check_events_against_truth(events, truth, drops, tolerance_tof_ns=0, distorted_per_lost_packet=0,
                               lost_packets=0):
    """Exactly the truth when the host lost nothing; otherwise every event is a distinct true
    neutron (pulse and pixel exact, TOF within the tolerance), except at most
    `distorted_per_lost_packet` per lost packet: where a neutron's readouts span packets (a
    multiblade neutron's wires and strips), losing some of them leaves the rest to form events
    at another pixel or time. A detector whose neutron is one readout passes 0."""
    events = sorted(events)
    truth = sorted(truth)
    if drops == 0:
        require(len(events) == len(truth), "received %d events for %d neutrons"
                % (len(events), len(truth)))
        bad = _first_mismatch(events, truth, tolerance_tof_ns)
        require(bad is None, "every event (pulse, tof, pixel) is its neutron's"
                + ("" if bad is None else "; first that is not: %s, expected %s" % bad))
        return
    allowed = distorted_per_lost_packet * lost_packets
    require(len(events) <= len(truth) + allowed, "received %d events for %d neutrons (+%d allowed)"
            % (len(events), len(truth), allowed))
    by_key = {}
    for t in truth:
        by_key.setdefault((t[0], t[2]), []).append(t[1])
    distorted = []
    for e in events:
        tofs = by_key.get((e[0], e[2]), [])
        match = next((i for i, tof in enumerate(tofs) if abs(tof - e[1]) <= tolerance_tof_ns), None)
        if match is None:
            distorted.append(e)
            continue
        tofs.pop(match)
    require(len(distorted) <= allowed,
            "%d event(s) are no (remaining) true neutron, %d allowed for %d lost packet(s); "
            "first: %s" % (len(distorted), allowed, lost_packets, distorted[:3]))
    if distorted:
        print("note: %d event(s) formed from what was left of neutrons whose packets were lost "
              "(at most %d allowed)" % (len(distorted), allowed))


def run_efu_and_generator(build_dir, broker, name, efu_args, generator, gen_args):
    """One end-to-end run on 127.0.0.1 with topics of its own: efu (bin/efu plus `efu_args`)
    until its port is bound, then the generator (bin/<generator> plus `gen_args`, with host,
    port, ground truth and summary added) to the end, then efu until its status shows every
    packet (or stops moving), then SIGTERM. efu's output stays this process's. Returns a dict:
    sent (the generator's summary), stats (efu's final counters), truth_path, events_topic."""
    work = tempfile.mkdtemp(prefix=name + "-e2e-")
    run_id = "%s_%d_%s" % (name, os.getpid(), uuid.uuid4().hex[:8])
    events_topic, status_topic = "e2e_events_" + run_id, "e2e_status_" + run_id
    port = free_udp_port()
    truth_path = os.path.join(work, "truth.txt")
    summary_path = os.path.join(work, "summary.json")
    efu = Efu(efu_args + ["--bind", "127.0.0.1", "--port", str(port), "--broker", broker,
                          "--events-topic", events_topic, "--status-topic", status_topic,
                          "--stats-interval", "0.5", "--log-level", "warn"],
              work, binary_path=binary("efu", build_dir), ready_udp_port=port,
              ready_timeout_s=20, inherit_output=True)
    try:
        subprocess.run([str(binary(generator, build_dir)), "--host", "127.0.0.1",
                        "--port", str(port), "--ground-truth", truth_path,
                        "--summary", summary_path] + gen_args, check=True, timeout=120)
        with open(summary_path) as f:
            sent = json.load(f)
        check(sent["send_errors"] == 0, "generator send errors: %d" % sent["send_errors"])
        status_counters(broker, status_topic, sent["packets"], efu.proc)
        stats = efu.stop(timeout_s=60)
    finally:
        efu.kill()
    return {"sent": sent, "stats": stats, "truth_path": truth_path, "events_topic": events_topic}


def events_of(messages, source_name):
    """(pulse time, TOF, pixel) of every event in the ev44 messages, which must come from
    `source_name` with consecutive message_ids."""
    require(len(messages) > 0, "ev44 messages read: %d" % len(messages))
    ids = [m.message_id for m in messages]
    require(ids == list(range(ids[0], ids[0] + len(ids))), "message_ids consecutive: %s" % ids[:20])
    sources = sorted({m.source_name for m in messages})
    require(sources == [source_name], "source_name of every message %r: %r" % (source_name, sources))
    events = []
    for m in messages:
        bounds = list(m.reference_time_index) + [len(m.time_of_flight)]
        for i, pulse in enumerate(m.reference_time):
            for k in range(bounds[i], bounds[i + 1]):
                events.append((int(pulse), int(m.time_of_flight[k]), int(m.pixel_id[k])))
    return events


def read_truth(path, neutrons):
    """(pulse time, TOF, pixel) per neutron from a generator's ground-truth file."""
    truth = []
    with open(path) as f:
        for line in f:
            if not line.startswith("#"):
                truth.append(tuple(int(v) for v in line.split()[:3]))
    require(len(truth) == neutrons, "truth file has %d of %d neutrons" % (len(truth), neutrons))
    return truth


def check_events_of_run(broker, run, sent, drops, source_name, label, faults):
    """Reads the run's ev44 topic, checks its events against the generator's ground truth (every
    neutron exactly once, with the generator's pulse, TOF and pixel; `drops` as
    check_events_against_truth takes them) and prints one summary line."""
    messages = read_events(broker, run["events_topic"])
    events = events_of(messages, source_name)
    truth = read_truth(run["truth_path"], sent["neutrons"])
    check_events_against_truth(events, truth, drops)
    print("ok: %s, %d neutrons in %d ev44 messages, %d distinct pixels, %d packets, faults %s"
          % (label, len(events), len(messages), len(set(e[2] for e in events)), sent["packets"],
             faults))
