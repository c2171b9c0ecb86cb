"""Kafka for the tests: a broker of a test's own (scripts/kafka on a port of its own), reading a
topic back, and efu's Kafka accounting. Needs the venv's confluent-kafka and
ess-streaming-data-types (EFU_PYTHON). Every wait is bounded.
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid

from confluent_kafka import Consumer, KafkaException, TopicPartition
from streaming_data_types import deserialise_ev44

from support.checks import check, fail, require
from support.loss import lost_events
from support.waits import wait_for


class Broker:
    """A single-node KRaft broker that scripts/kafka runs on `port` (EFU_KAFKA_PORT) for one
    test: start, stop, and crashes (SIGKILL) and pauses (SIGSTOP) of its java process."""

    def __init__(self, source_dir: str, port: int):
        self.source_dir, self.port = str(source_dir), port
        self.bootstrap = f"127.0.0.1:{port}"

    def script(self, action: str):
        """scripts/kafka <action> on this port (bounded: 180 s); the test fails if it does."""
        env = dict(os.environ, EFU_KAFKA_PORT=str(self.port))
        r = subprocess.run([os.path.join(self.source_dir, "scripts", "kafka"), action], env=env,
                           capture_output=True, text=True, timeout=180)
        require(r.returncode == 0, f"scripts/kafka {action} (port {self.port}):\n"
                                   f"{r.stdout}{r.stderr}")

    def start(self):
        self.script("start")

    def stop(self):
        self.script("stop")

    def pid(self) -> int:
        """The broker's pid, from the pid file scripts/kafka keeps."""
        cache = os.environ.get("EFU_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "efu"))
        with open(os.path.join(cache, "kafka-run-%d" % self.port, "kafka.pid")) as f:
            return int(f.read().strip())

    def kill(self):
        """SIGKILL, as a crash would, and waits until it is gone (bounded: 10 s)."""
        pid = self.pid()
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            require(b"kafka.Kafka" in f.read(), f"pid {pid} of port {self.port} is a Kafka broker")
        os.kill(pid, signal.SIGKILL)

        def gone():
            try:
                with open("/proc/%d/stat" % pid) as f:
                    return f.read().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie is dead too
            except FileNotFoundError:
                return True
        wait_for(gone, "broker pid %d to die after SIGKILL" % pid, 10)


def consumer(broker: str, prefix: str = "e2e-") -> Consumer:
    return Consumer({"bootstrap.servers": broker, "group.id": prefix + uuid.uuid4().hex,
                     "enable.auto.commit": False, "auto.offset.reset": "earliest"})


def read_topic(broker: str, topic: str, decode) -> list:
    """decode(value) of every message in partition 0 of `topic`, read up to the high
    watermark (bounded: 60 s)."""
    c = consumer(broker)
    try:
        low, high = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        c.assign([TopicPartition(topic, 0, low)])
        values = []
        deadline = time.monotonic() + 60
        offset = low
        while offset < high:
            if time.monotonic() >= deadline:
                fail("read %d of %d messages of %s within 60 s" % (offset - low, high - low, topic))
            msg = c.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                raise KafkaException(msg.error())
            values.append(decode(msg.value()))
            offset = msg.offset() + 1
        return values
    finally:
        c.close()


def read_events(broker: str, topic: str) -> list:
    """Every ev44 message in the topic, read up to the high watermark."""
    return read_topic(broker, topic, deserialise_ev44)


KAFKA_DELIVERY_FAILURES = ("timed_out", "too_large", "topic", "purged", "fatal", "other")


def check_kafka_accounting(stats: dict) -> int:
    """efu's final counters account for every message and every event it made, exactly:
    produced (ev44 + x5f2 + ar51 + da00) = delivered + failed (by reason), and
    ev44.events = ev44.events.delivered + lost.events (never queued, or not delivered). The
    queue is empty at exit (flush purged what was left). Returns lost.events."""
    produced = stats["kafka.produce.messages"]
    kinds = sum(stats.get(k + ".messages", 0) for k in ("ev44", "x5f2", "ar51", "da00"))
    require(kinds == produced, "ev44 + x5f2 + ar51 + da00 messages %d == kafka.produce.messages %d"
            % (kinds, produced))
    failed = stats["kafka.delivery.failed"]
    require(stats["kafka.delivery.ok"] + failed == produced,
            "kafka.delivery.ok %d + kafka.delivery.failed %d == produced %d"
            % (stats["kafka.delivery.ok"], failed, produced))
    reasons = sum(stats["kafka.delivery.failed." + r] for r in KAFKA_DELIVERY_FAILURES)
    require(reasons == failed, "kafka.delivery.failed.* %d == kafka.delivery.failed %d"
            % (reasons, failed))
    undelivered = lost_events(stats)
    require(stats["ev44.events.delivered"] + undelivered == stats["ev44.events"],
            "ev44.events.delivered %d + lost.events %d (dropped %d, delivery.failed %d) == "
            "ev44.events %d" % (stats["ev44.events.delivered"], undelivered,
                                stats["ev44.events.dropped"], stats["ev44.events.delivery.failed"],
                                stats["ev44.events"]))
    require(stats["kafka.queue.depth"] == 0 and stats["kafka.queue.bytes"] == 0,
            "the producer queue is empty at exit (depth %d, bytes %d)"
            % (stats["kafka.queue.depth"], stats["kafka.queue.bytes"]))
    return undelivered


def distinct_ev44(messages: list, message_id, stats: dict) -> list:
    """The first of each ev44 message_id in `messages`, in order. A message is read twice only
    when efu resent it after a fatal producer error as possibly written (docs/kafka.md, "Broker
    outages", point 5): the repeats must not exceed kafka.delivery.resent.uncertain."""
    first = {}
    for m in messages:
        first.setdefault(message_id(m), m)
    repeated, allowed = len(messages) - len(first), stats.get("kafka.delivery.resent.uncertain", 0)
    check(repeated <= allowed,
          f"ev44 messages read twice {repeated} <= kafka.delivery.resent.uncertain {allowed} "
          f"(kafka.producer.replaced {stats.get('kafka.producer.replaced', 0)}, "
          f"kafka.delivery.resent {stats.get('kafka.delivery.resent', 0)})")
    return list(first.values())


def summary_delivery(stdout_text: str) -> list[int]:
    """The numbers of efu's delivery summary line: events, delivered, undelivered, kafka
    messages, delivered, undelivered."""
    for line in stdout_text.splitlines():
        if line.startswith("efu: summary: events "):
            words = line.replace(",", " ").replace(";", " ").split()
            return [int(w) for w in words if w.isdigit()]
    fail("no 'efu: summary: events' line in efu's output")


