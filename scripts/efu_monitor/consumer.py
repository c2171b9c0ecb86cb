"""A Kafka consumer that assigns every partition of its topics directly (no group rebalance)."""
import uuid

from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, Consumer, KafkaError, TopicPartition


class TopicReader:
    def __init__(self, broker, topics, from_beginning):
        self._consumer = Consumer({
            "bootstrap.servers": broker,
            # Unique group: this monitor never takes messages from another consumer.
            "group.id": "efu-monitor-" + uuid.uuid4().hex,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest" if from_beginning else "latest",
            "fetch.max.bytes": 64 * 1024 * 1024,
        })
        offset = OFFSET_BEGINNING if from_beginning else OFFSET_END
        partitions = []
        for topic in topics:
            meta = self._consumer.list_topics(topic, timeout=10)
            info = meta.topics.get(topic)
            count = len(info.partitions) if info is not None and info.error is None else 0
            # A topic that does not exist yet gets partition 0; efu creates it on first produce.
            for p in range(max(count, 1)):
                partitions.append(TopicPartition(topic, p, offset))
        self._consumer.assign(partitions)

    def poll(self, timeout):
        msg = self._consumer.poll(timeout)
        if msg is None:
            return None
        if msg.error():
            if msg.error().code() != KafkaError._PARTITION_EOF:
                print("efu-monitor: " + str(msg.error()), flush=True)
            return None
        return msg.topic(), msg.value()

    def close(self):
        self._consumer.close()
