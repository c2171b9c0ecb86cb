"""Reads efu's topics and decodes them with the facility's package (ess-streaming-data-types).

Exit 0 and prints "decode_check: ok" when the counts and message_ids are as expected."""
import argparse
import sys
import time
import uuid

import flatbuffers
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from streaming_data_types import deserialise_ev44, deserialise_x5f2


def read_all(broker, topic, expected, timeout_s=30):
    c = Consumer({"bootstrap.servers": broker, "group.id": "efutest-" + uuid.uuid4().hex,
                  "enable.auto.commit": False})
    parts = c.list_topics(topic, timeout=10).topics[topic].partitions
    c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in parts])
    out = []
    deadline = time.monotonic() + timeout_s
    while len(out) < expected and time.monotonic() < deadline:
        m = c.poll(0.2)
        if m is not None and not m.error():
            out.append(m.value())
    c.close()
    return out


def ar51_message_id(buf):
    # The package has no ar51 decoder: read the table by hand (field 1 = message_id, a long).
    if flatbuffers.util.GetBufferIdentifier(buf, 0) != b"ar51":
        raise ValueError("not ar51")
    tab = flatbuffers.table.Table(buf, flatbuffers.encode.Get(
        flatbuffers.packer.uoffset, buf, 0))
    o = tab.Offset(6)
    return tab.Get(flatbuffers.number_types.Int64Flags, o + tab.Pos) if o else 0


def main():
    p = argparse.ArgumentParser()
    for name in ("broker", "events-topic", "samples-topic", "status-topic"):
        p.add_argument("--" + name, required=True)
    for name in ("expect-ev44", "expect-events", "expect-ar51", "expect-x5f2"):
        p.add_argument("--" + name, type=int, required=True)
    a = p.parse_args()
    errors = []
    ev44 = [deserialise_ev44(b) for b in read_all(a.broker, a.events_topic, a.expect_ev44)]
    ids = sorted(e.message_id for e in ev44)
    if ids != list(range(a.expect_ev44)):
        errors.append("ev44 message_ids {}".format(ids))
    events = sum(len(e.pixel_id) for e in ev44)
    if events != a.expect_events:
        errors.append("ev44 events {} != {}".format(events, a.expect_events))
    for e in ev44:
        if len(e.time_of_flight) != len(e.pixel_id) or len(e.reference_time) != len(
                e.reference_time_index):
            errors.append("ev44 {} array lengths".format(e.message_id))
    x5f2 = [deserialise_x5f2(b) for b in read_all(a.broker, a.status_topic, a.expect_x5f2)]
    if len(x5f2) != a.expect_x5f2 or any(s.software_name != "efu" for s in x5f2):
        errors.append("x5f2 {}".format(x5f2))
    ar51 = sorted(ar51_message_id(b) for b in read_all(a.broker, a.samples_topic, a.expect_ar51))
    if ar51 != list(range(a.expect_ar51)):
        errors.append("ar51 message_ids {}".format(ar51))
    if errors:
        print("decode_check: FAILED " + "; ".join(errors))
        return 1
    print("decode_check: ok ev44={} events={} x5f2={} ar51={}".format(
        len(ev44), events, len(x5f2), len(ar51)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
