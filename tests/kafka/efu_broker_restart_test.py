#!/usr/bin/env python3
"""efu survives its Kafka broker stopping and coming back in the middle of a run.

The efu process (multiblade plugin, fed by its generator) publishes to a broker of its own that
scripts/kafka starts on a private port. The test stops that broker while efu is receiving,
starts it again and lets efu stop. It asserts that:
- efu exits 0, and it received and processed every packet the generator sent;
- the outage was counted (kafka.errors > 0);
- what efu reports as delivered (kafka.delivery.ok) equals what a consumer reads from the event
  and status topics, and the events read equal ev44.events.
The producer is idempotent (efu's default), so a retry after the outage cannot duplicate a
message; the test also passes it explicitly through --kafka-config, to cover that path.
Every wait is bounded.
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

from confluent_kafka import Consumer, TopicPartition
from streaming_data_types import deserialise_ev44

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from e2e_support import check_host_accounting  # noqa: E402


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def kafka(source_dir, port, action):
    env = dict(os.environ, EFU_KAFKA_PORT=str(port))
    r = subprocess.run([os.path.join(source_dir, "scripts", "kafka"), action], env=env,
                       capture_output=True, text=True, timeout=180)
    if r.returncode != 0:
        fail(f"scripts/kafka {action} (port {port}) failed:\n{r.stdout}{r.stderr}")


def wait_for_text(path, text, timeout_s):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with open(path) as f:
            if text in f.read():
                return
        time.sleep(0.05)
    fail(f"'{text}' did not appear in {path} within {timeout_s} s")


def consume_all(bootstrap, topics, expected, timeout_s):
    """Reads every message of `topics` from the beginning until `expected` or the timeout."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "efu-restart-" + uuid.uuid4().hex,
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(t, 0, 0) for t in topics])  # offset 0: the beginning
    counts = {t: 0 for t in topics}
    events = 0
    deadline = time.monotonic() + timeout_s
    while sum(counts.values()) < expected and time.monotonic() < deadline:
        for m in consumer.consume(num_messages=500, timeout=0.5):
            if m.error():
                continue
            counts[m.topic()] += 1
            if m.topic() == topics[0]:
                events += len(deserialise_ev44(m.value()).pixel_id)
    consumer.close()
    return counts, events


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build-dir", required=True)
    p.add_argument("--source-dir", required=True)
    p.add_argument("--kafka-port", type=int, default=19492)
    a = p.parse_args()
    bootstrap = f"127.0.0.1:{a.kafka_port}"
    tag = uuid.uuid4().hex[:8]
    events_topic, status_topic = f"restart_{tag}_detector", f"restart_{tag}_status"
    tmp = tempfile.mkdtemp(prefix="efu-restart-")
    kafka_config = os.path.join(tmp, "kafka.json")
    with open(kafka_config, "w") as f:
        json.dump({"enable.idempotence": "true"}, f)

    kafka(a.source_dir, a.kafka_port, "start")
    efu = None
    try:
        port = free_udp_port()
        stats_path, err_path = os.path.join(tmp, "stats.json"), os.path.join(tmp, "efu.err")
        summary_path = os.path.join(tmp, "gen.json")
        with open(err_path, "w") as err:
            efu = subprocess.Popen(
                [os.path.join(a.build_dir, "bin", "efu"), "--module", "multiblade",
                 "--bind", "127.0.0.1", "--port", str(port), "--broker", bootstrap,
                 "--events-topic", events_topic, "--status-topic", status_topic,
                 "--kafka-config", kafka_config, "--stats-interval", "0.5",
                 "--flush-timeout", "40", "--stats-json", stats_path],
                stdout=subprocess.DEVNULL, stderr=err)
        wait_for_text(err_path, "running", 20)
        gen = subprocess.Popen(
            [os.path.join(a.build_dir, "bin", "efu-multiblade-gen"), "--host", "127.0.0.1",
             "--port", str(port), "--rate-pps", "300", "--duration", "12",
             "--summary", summary_path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(3)
        kafka(a.source_dir, a.kafka_port, "stop")   # efu keeps receiving; deliveries wait
        time.sleep(4)
        kafka(a.source_dir, a.kafka_port, "start")
        if gen.wait(timeout=60) != 0:
            fail("the generator failed")
        time.sleep(1)
        efu.send_signal(signal.SIGTERM)
        code = efu.wait(timeout=90)
        efu = None
        with open(err_path) as f:
            log = f.read()
        if code != 0:
            fail(f"efu exited {code}:\n{log[-3000:]}")
        with open(stats_path) as f:
            stats = json.load(f)
        with open(summary_path) as f:
            sent = json.load(f)

        # The outage must not cost datagrams beyond what the host counts: processed plus every
        # host loss counter is what was sent (a loaded machine may drop some, never silently).
        check_host_accounting(stats, sent["packets"])
        if stats.get("kafka.errors", 0) == 0:
            fail("the broker outage left no trace in kafka.errors")
        delivered = stats["kafka.delivery.ok"]
        counts, events = consume_all(bootstrap, [events_topic, status_topic], delivered, 60)
        read = sum(counts.values())
        print(f"efu: delivered {delivered} (failed {stats['kafka.delivery.failed']}), "
              f"errors counted {stats['kafka.errors']}; consumer read {read} {counts}; "
              f"events {events} of ev44.events {stats['ev44.events']}")
        if read != delivered:
            fail(f"efu reports {delivered} messages delivered, the consumer read {read}")
        if stats["kafka.delivery.failed"] == 0 and events != stats["ev44.events"]:
            fail(f"efu published {stats['ev44.events']} events, the consumer read {events}")
        print("broker restart: ok")
    finally:
        if efu is not None:
            efu.kill()
        kafka(a.source_dir, a.kafka_port, "stop")


if __name__ == "__main__":
    main()
