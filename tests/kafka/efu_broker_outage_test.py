#!/usr/bin/env python3
"""efu's Kafka broker crashes (SIGKILL) in the middle of a run: memory, not time, decides loss.

efu (multiblade plugin, fed by its generator at the demo's 2000 packets/s) publishes to a broker
of its own that scripts/kafka starts on a private port. The test SIGKILLs that broker's java
process while efu is receiving. Two scenarios (--scenario):

- outage: the broker stays dead for --outage-s (60 s), then `scripts/kafka start` brings it
  back; the generator finishes and efu is stopped (SIGTERM). At this rate the 256 MiB producer
  queue holds about 3 minutes, so no message may expire by time (kafka.delivery.failed.timed_out
  stays 0), and, as nothing was dropped at produce, the consumer reads ev44 message_ids 0..N-1
  with no gap and no duplicate. With the old 30 s message.timeout.ms
  (--kafka-config-json '{"message.timeout.ms": 30000}') this fails.
- never-returns: the broker does not come back while efu runs; efu is stopped a few seconds
  later, purges what it holds and counts it. Only afterwards is the broker started again, to read
  what reached it before the crash.

Both assert exact accounting: every datagram sent was processed or counted by the host; every
message efu made was delivered or failed by a counted reason; ev44.events = delivered +
dropped + delivery.failed; the summary line says the same numbers; and the events a consumer
reads are exactly ev44.events.delivered (the delivered messages exactly kafka.delivery.ok). A
message sent just before the crash and never acknowledged may still be in the broker's log
although efu counts it failed: efu counts those in kafka.delivery.uncertain (and its events in
ev44.events.delivery.uncertain), and only they may widen the equality into a range. While the
broker is away efu's log must warn how full the producer queue is; in the outage scenario the
x5f2 status published during the outage (delivered after it) must show the queue gauges.
Every wait is bounded; the only fixed wait is the outage itself.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid

from streaming_data_types import deserialise_x5f2

from support.checks import check, finish, require
from support.e2e import check_host_accounting
from support.efu import Efu, binary
from support.kafka import (Broker, check_kafka_accounting, distinct_ev44, read_events, read_topic,
                           summary_delivery)
from support.ports import free_udp_port
from support.waits import wait_for_text

RATE_PPS = 2000            # scripts/demo's rate
QUEUE_LIMIT = 256 << 20    # efu's default queue.buffering.max.kbytes, in bytes
WARNING = "broker unreachable; producer queue"


def start_efu(a, tmp, port, bootstrap, topics, flush_timeout_s):
    """efu, ready once its UDP port is bound (bounded: 20 s)."""
    args = ["--module", "multiblade", "--bind", "127.0.0.1", "--port", str(port),
            "--broker", bootstrap, "--events-topic", topics[0], "--status-topic", topics[1],
            "--stats-interval", "0.5", "--flush-timeout", str(flush_timeout_s)]
    if a.kafka_config_json:
        path = os.path.join(tmp, "kafka.json")
        with open(path, "w") as f:
            f.write(a.kafka_config_json)
        args += ["--kafka-config", path]
    return Efu(args, tmp, binary_path=binary("efu", a.build_dir), ready_udp_port=port,
               ready_timeout_s=20)


def run(a, tmp, broker, topics):
    """efu and the generator through the broker crash; returns (stats, sent, stdout text)."""
    port = free_udp_port()
    efu = start_efu(a, tmp, port, broker.bootstrap, topics, 60 if a.scenario == "outage" else 3)
    gen = None
    try:
        duration = a.outage_s + 20 if a.scenario == "outage" else 10
        gen = subprocess.Popen(
            [os.path.join(a.build_dir, "bin", "efu-multiblade-gen"), "--host", "127.0.0.1",
             "--port", str(port), "--rate-pps", str(RATE_PPS), "--shape", "ring",
             "--duration", str(duration), "--summary", os.path.join(tmp, "gen.json")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Some deliveries before the crash (the stats line shows only non-zero counters).
        wait_for_text(efu.log_path, "kafka.delivery.ok=", 30, efu.proc)
        broker.kill()
        killed_at = time.monotonic()
        wait_for_text(efu.log_path, WARNING, 30, efu.proc)  # the operator is told, while it lasts
        if a.scenario == "outage":
            while time.monotonic() < killed_at + a.outage_s:  # the outage itself, not a sync
                require(efu.proc.poll() is None, "efu runs on during the outage")
                time.sleep(0.5)
            broker.start()
        require(gen.wait(timeout=duration + 60) == 0, "the generator ran to its end")
        stats = efu.stop(timeout_s=120)
    finally:
        if gen is not None and gen.poll() is None:
            gen.kill()
            gen.wait()
        efu.kill()
    with open(os.path.join(tmp, "gen.json")) as f:
        sent = json.load(f)
    return stats, sent, efu.out()


def check_summary(stats, out):
    """The summary line gives the exact undelivered events and messages of the counters."""
    events, delivered, undelivered, messages, ok, not_ok = summary_delivery(out)
    made = stats["kafka.produce.messages"] + stats["kafka.produce.failed.queue_full"] + \
        stats["kafka.produce.failed.other"]
    check(events == stats["ev44.events"] and delivered == stats["ev44.events.delivered"] and
          events == delivered + undelivered,
          "summary events %d = delivered %d + undelivered %d, as the counters say"
          % (events, delivered, undelivered))
    check(messages == made and ok == stats["kafka.delivery.ok"] and messages == ok + not_ok,
          "summary messages %d = delivered %d + undelivered %d, as the counters say"
          % (messages, ok, not_ok))
    if undelivered:
        check("efu: undelivered: " in out, "an 'efu: undelivered:' line gives the reasons")


def check_consumed(stats, bootstrap, topics):
    """What a consumer reads is what efu counts as delivered; returns the ev44 message_ids."""
    ev44 = read_events(bootstrap, topics[0])
    statuses = read_topic(bootstrap, topics[1],
                          lambda v: json.loads(deserialise_x5f2(v).status_json)["counters"])
    ev44 = distinct_ev44(ev44, lambda m: m.message_id, stats)
    ids = [m.message_id for m in ev44]
    check(all(m.source_name == "multiblade" for m in ev44), "every ev44 message is from multiblade")
    events = sum(len(m.pixel_id) for m in ev44)
    read, ok = len(ev44) + len(statuses), stats["kafka.delivery.ok"]
    maybe, maybe_events = stats["kafka.delivery.uncertain"], stats["ev44.events.delivery.uncertain"]
    delivered = stats["ev44.events.delivered"]
    print("consumer: %d ev44 messages (%d events), %d status; efu: delivered %d messages "
          "(%d events), %d failed of which %d possibly written (%d events)"
          % (len(ev44), events, len(statuses), ok, delivered, stats["kafka.delivery.failed"],
             maybe, maybe_events))
    check(ok <= read <= ok + maybe, "consumer read %d messages, efu delivered %d (+%d uncertain)"
          % (read, ok, maybe))
    check(delivered <= events <= delivered + maybe_events,
          "consumer read %d events, efu delivered %d (+%d uncertain)"
          % (events, delivered, maybe_events))
    if stats["ev44.events.dropped"] == 0:
        # Loss only at the end (purged at stop), so what reached the topic has no gap.
        check(sorted(ids) == list(range(len(ids))),
              "ev44 message_ids are 0..%d without a gap: missing %s"
              % (len(ids) - 1, sorted(set(range(max(ids) + 1)) - set(ids))[:10]))
    return ids, statuses


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build-dir", required=True)
    p.add_argument("--source-dir", required=True)
    p.add_argument("--kafka-port", type=int, required=True)
    p.add_argument("--scenario", choices=("outage", "never-returns"), required=True)
    p.add_argument("--outage-s", type=float, default=60)
    p.add_argument("--kafka-config-json", default="",
                   help="librdkafka overrides for efu, e.g. the old '{\"message.timeout.ms\": 30000}'")
    a = p.parse_args()
    bootstrap = "127.0.0.1:%d" % a.kafka_port
    tag = uuid.uuid4().hex[:8]
    topics = ("outage_%s_detector" % tag, "outage_%s_status" % tag)
    tmp = tempfile.mkdtemp(prefix="efu-outage-")

    broker = Broker(a.source_dir, a.kafka_port)
    broker.start()
    try:
        stats, sent, out = run(a, tmp, broker, topics)
        if a.scenario == "never-returns":
            broker.start()  # only now, to read what it got
        check_host_accounting(stats, sent["packets"])
        check(stats["kafka.errors"] > 0, "the crash shows in kafka.errors")
        undelivered = check_kafka_accounting(stats)
        check_summary(stats, out)
        ids, statuses = check_consumed(stats, bootstrap, topics)
        check(stats["kafka.delivery.failed.timed_out"] == 0,
              "%d messages expired by time (kafka.delivery.failed.timed_out) while the producer "
              "queue had room: none may" % stats["kafka.delivery.failed.timed_out"])
        if a.scenario == "outage":
            check(len(ids) == stats["ev44.messages"] or undelivered > 0,
                  "consumer read %d ev44 messages of %d, or some are counted undelivered"
                  % (len(ids), stats["ev44.messages"]))
            peak = max(s.get("kafka.queue.bytes", 0) for s in statuses)
            check(0 < peak <= QUEUE_LIMIT, "kafka.queue.bytes peaked at %d during the outage "
                  "(expected some, within %d)" % (peak, QUEUE_LIMIT))
            print("outage: ok; %d events formed, %d undelivered; queue peaked at %.1f MiB "
                  "(%d %%)" % (stats["ev44.events"], undelivered, peak / 2**20,
                               max(s.get("kafka.queue.fill_pct", 0) for s in statuses)))
        else:
            # No message timeout: what efu still held at stop was purged, and that is all.
            check(undelivered > 0, "something was left undelivered (else the crash came too late)")
            check(stats["kafka.delivery.failed"] == stats["kafka.delivery.failed.purged"],
                  "every failed delivery was purged at stop")
            print("never returns: ok; %d events formed = %d delivered + %d undelivered"
                  % (stats["ev44.events"], stats["ev44.events.delivered"], undelivered))
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
    sys.exit(finish())
