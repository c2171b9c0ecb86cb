#!/usr/bin/env python3
"""Chaos: one efu run (multiblade, its generator at the demo's rate, malformed datagrams among
the good ones) against a real broker of its own that is paused, killed and restarted, while efu
itself is paused under load.

  efu_chaos_test.py --build-dir DIR --source-dir DIR --kafka-port PORT

Timeline (seconds after the generator starts; the generator runs CHAOS_S):
   3  SIGSTOP the broker for 10 s, then SIGCONT;
  16  SIGSTOP efu for 2 s under load (its socket buffer overflows: kernel drops), then SIGCONT;
  21  SIGKILL the broker; restart it with scripts/kafka start 5 s later.
Malformed datagrams (cookie, truncated, version, corrupt readouts, empty, oversize) go out all the
time, as extra datagrams after good ones (--fault-fraction).

Asserts at the end:
- every datagram the generator sent is processed or in one of the host's counters;
- each malformed kind is in its own counter (exact where the host dropped nothing);
- every event efu formed is consumed exactly once: the events read from the topic equal
  events.formed, no ev44 message_id is missing, none is repeated beyond the messages efu
  resent after a fatal producer error as possibly written (kafka.delivery.resent.uncertain),
  and every message efu reports as delivered was read;
- the broker's absence was seen (kafka.errors > 0) and efu lost nothing to it: no delivery
  failure, no full queue.
Every wait is bounded; nothing asserts on elapsed time.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid

from streaming_data_types import deserialise_ev44

from support.checks import check, fail, finish, require
from support.e2e import check_host_accounting
from support.efu import Efu, binary
from support.kafka import (KAFKA_DELIVERY_FAILURES, Broker, check_kafka_accounting, distinct_ev44,
                           read_topic)
from support.ports import free_udp_port

CHAOS_S = 40
RATE_PPS = 2000  # scripts/demo's rate


def at(t0, seconds, what):
    """Sleeps until `seconds` after t0 (bounded by construction), then says what happens."""
    delay = t0 + seconds - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    print(f"chaos t={time.monotonic() - t0:5.1f} s: {what}", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build-dir", required=True)
    p.add_argument("--source-dir", required=True)
    p.add_argument("--kafka-port", type=int, default=19690)
    a = p.parse_args()
    bootstrap = f"127.0.0.1:{a.kafka_port}"
    tag = uuid.uuid4().hex[:8]
    events_topic, status_topic = f"chaos_{tag}_detector", f"chaos_{tag}_status"
    tmp = tempfile.mkdtemp(prefix="efu-chaos-")
    summary_path = os.path.join(tmp, "gen.json")
    config = os.path.join(a.source_dir, "modules", "multiblade", "configs", "freia.json")

    broker = Broker(a.source_dir, a.kafka_port)
    broker.start()
    efu = gen = None
    try:
        port = free_udp_port()
        efu = Efu(["--module", "multiblade", "--geometry", config, "--bind", "127.0.0.1",
                   "--port", str(port), "--broker", bootstrap, "--events-topic", events_topic,
                   "--status-topic", status_topic, "--stats-interval", "0.5",
                   # A small socket buffer, so that 2 s of pause overflows it for sure.
                   "--rcvbuf", "500000", "--flush-timeout", "60"],
                  tmp, binary_path=binary("efu", a.build_dir), ready_udp_port=port,
                  ready_timeout_s=20)
        gen = subprocess.Popen(
            [os.path.join(a.build_dir, "bin", "efu-multiblade-gen"), "--host", "127.0.0.1",
             "--port", str(port), "--geometry", config, "--rate-pps", str(RATE_PPS),
             "--duration", str(CHAOS_S), "--shape", "ring", "--fault-fraction", "0.02",
             "--fault-kinds", "cookie,truncated,version,corrupt,empty,oversize",
             "--summary", summary_path], stdout=subprocess.DEVNULL)
        t0 = time.monotonic()
        at(t0, 3, "SIGSTOP the broker")
        pid = broker.pid()
        os.kill(pid, signal.SIGSTOP)
        at(t0, 13, "SIGCONT the broker")
        os.kill(pid, signal.SIGCONT)
        at(t0, 16, "SIGSTOP efu for 2 s under load")
        os.kill(efu.pid, signal.SIGSTOP)
        time.sleep(2)
        os.kill(efu.pid, signal.SIGCONT)
        at(t0, 21, "SIGKILL the broker")
        broker.kill()
        at(t0, 26, "restart the broker")
        broker.start()
        at(t0, time.monotonic() - t0, "the broker is back")
        require(gen.wait(timeout=CHAOS_S + 60) == 0, "the generator ran to its end")
        gen = None
        time.sleep(1)  # the last datagrams into efu's rings (its drain at stop takes the rest)
        stats = efu.stop(timeout_s=120)
        with open(summary_path) as f:
            sent = json.load(f)

        # The datagrams: processed or counted, the pause's overflow as kernel drops.
        drops = check_host_accounting(stats, sent["packets"])
        check(stats.get("receive.dropped.kernel", 0) > 0,
              "pausing efu for 2 s at %d packets/s overflowed its socket" % RATE_PPS)
        faults = sent["faults"]
        for name, kind in (("receive.dropped.empty", "empty"), ("receive.truncated", "oversize"),
                           ("parser.essheader.errors.cookie", "cookie"),
                           ("parser.essheader.errors.version", "version"),
                           ("parser.essheader.errors.length", "truncated")):
            got, want = stats.get(name, 0), faults.get(kind, 0)
            check(want > 0, f"the generator sent {kind} datagrams")
            # A dropped datagram may have been a malformed one: then fewer are counted.
            check(want - drops <= got <= want, f"{name} {got}, expected {want} (drops {drops})")

        # The events: every one formed, consumed exactly once.
        check(stats.get("kafka.errors", 0) > 0, "the broker's absence shows in kafka.errors")
        undelivered = check_kafka_accounting(stats)
        for name in ("kafka.delivery.failed", "kafka.produce.failed.queue_full"):
            check(stats.get(name, 0) == 0, f"{name} = {stats.get(name)}: the outage cost no message")
        if stats.get("kafka.delivery.failed", 0) or stats.get("kafka.producer.replaced", 0):
            # What happened, for whoever reads the run: the reasons and efu's Kafka log lines.
            print("chaos: failed deliveries by reason: " + ", ".join(
                f"{r} {stats.get('kafka.delivery.failed.' + r, 0)}" for r in KAFKA_DELIVERY_FAILURES)
                + f"; uncertain {stats.get('kafka.delivery.uncertain', 0)}")
            for line in [l for l in efu.log().splitlines() if "kafka" in l.lower()][-40:]:
                print("chaos: efu log: " + line)
        check(undelivered == 0, f"lost.events {undelivered} == 0")
        messages = read_topic(bootstrap, events_topic,
                              lambda v: (lambda e: (e.message_id, len(e.pixel_id)))(deserialise_ev44(v)))
        # Twice only what efu resent as possibly written after a fatal producer error (its
        # idempotence state lost with the killed broker); the rest counts once.
        messages = distinct_ev44(messages, lambda m: m[0], stats)
        ids = sorted(m for m, _ in messages)
        check(ids == list(range(len(ids))),
              f"ev44 message_ids are 0..{len(ids) - 1}: missing "
              f"{sorted(set(range(len(ids))) - set(ids))[:10]}")
        events = sum(n for _, n in messages)
        formed = stats.get("events.formed", 0)
        print(f"chaos: sent {sent['packets']} packets ({faults}); host drops {drops}; "
              f"formed {formed} events, consumed {events} in {len(ids)} messages; "
              f"kafka.errors {stats.get('kafka.errors')}")
        check(formed > 0, "events formed")
        check(events == formed, f"consumed {events} events, efu formed {formed}")
        check(len(ids) == stats.get("ev44.messages", len(ids)),
              f"consumed {len(ids)} ev44 messages, efu sent {stats.get('ev44.messages')}")
        print("chaos: ok")
    finally:
        for proc in (gen, efu.proc if efu is not None else None):
            if proc is not None and proc.poll() is None:
                try:
                    proc.send_signal(signal.SIGCONT)
                except ProcessLookupError:
                    pass
                proc.kill()
                proc.wait()
        broker.stop()


if __name__ == "__main__":
    try:
        main()
        sys.exit(finish())
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001  an unexpected error is a failure with its message
        fail(f"{type(e).__name__}: {e}")
