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
import subprocess
import sys
import tempfile
import time
import uuid

from confluent_kafka import Consumer, TopicPartition
from streaming_data_types import deserialise_ev44

from support.checks import fail, finish
from support.e2e import check_host_accounting
from support.efu import Efu, binary
from support.kafka import Broker
from support.ports import free_udp_port


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

    broker = Broker(a.source_dir, a.kafka_port)
    broker.start()
    efu = None
    try:
        port = free_udp_port()
        summary_path = os.path.join(tmp, "gen.json")
        efu = Efu(["--module", "multiblade", "--bind", "127.0.0.1", "--port", str(port),
                   "--broker", bootstrap, "--events-topic", events_topic,
                   "--status-topic", status_topic, "--kafka-config", kafka_config,
                   "--stats-interval", "0.5", "--flush-timeout", "40"],
                  tmp, binary_path=binary("efu", a.build_dir), ready_text="running",
                  ready_timeout_s=20)
        gen = subprocess.Popen(
            [os.path.join(a.build_dir, "bin", "efu-multiblade-gen"), "--host", "127.0.0.1",
             "--port", str(port), "--rate-pps", "300", "--duration", "12",
             "--summary", summary_path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(3)
        broker.stop()   # efu keeps receiving; deliveries wait
        time.sleep(4)
        broker.start()
        if gen.wait(timeout=60) != 0:
            fail("the generator failed")
        time.sleep(1)
        stats = efu.stop(timeout_s=90)
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
        broker.stop()


if __name__ == "__main__":
    main()
    sys.exit(finish())
