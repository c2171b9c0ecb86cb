"""Rates, message_id gaps per source, and the latest efu counters from x5f2."""
import json
import time

from streaming_data_types import deserialise_ev44, deserialise_x5f2

# The counters worth a glance in the live view; everything else is in the x5f2 JSON.
INTERESTING = (
    "receive.packets", "receive.dropped.kernel", "receive.dropped.ring_full",
    "ev44.events", "ev44.events.dropped", "kafka.delivery.failed", "kafka.queue.depth",
    "kafka.errors",
)


class EventStats:
    def __init__(self):
        self.messages = 0
        self.events = 0
        self.gaps = 0
        self._lost_far = 0
        self.bad = 0
        self._last_id = {}
        self._missing = {}  # source -> ids skipped so far; they may still arrive late
        self._interval_start = time.monotonic()
        self._interval_messages = 0
        self._interval_events = 0

    def add(self, payload):
        try:
            ev = deserialise_ev44(payload)
        except Exception:  # a foreign or broken message on the topic: count, keep going
            self.bad += 1
            return None
        n = len(ev.pixel_id)
        self.messages += 1
        self.events += n
        self._interval_messages += 1
        self._interval_events += n
        self._track_id(ev.source_name, int(ev.message_id))
        return ev

    def _track_id(self, source, message_id):
        # Several processing threads share a source and take ids as they flush, so ids can
        # arrive slightly out of order: a skipped id counts as a gap only while it stays missing.
        last = self._last_id.get(source)
        missing = self._missing.setdefault(source, set())
        if last is None or message_id > last:
            if last is not None and message_id - last - 1 <= 100000:
                missing.update(range(last + 1, message_id))
            elif last is not None:
                self._lost_far += message_id - last - 1
            self._last_id[source] = message_id
        else:
            missing.discard(message_id)
        self.gaps = self._lost_far + sum(len(m) for m in self._missing.values())

    def start_interval(self):
        self._interval_start = time.monotonic()
        self._interval_messages = 0
        self._interval_events = 0

    def live_line(self):
        dt = max(time.monotonic() - self._interval_start, 1e-6)
        return "events/s={:.0f} messages/s={:.1f} events={} messages={} gaps={} sources={}".format(
            self._interval_events / dt, self._interval_messages / dt, self.events,
            self.messages, self.gaps, len(self._last_id))

    def summary(self):
        return "summary: messages={} events={} gaps={} bad={} sources={}".format(
            self.messages, self.events, self.gaps, self.bad,
            ",".join(sorted(self._last_id)) or "-")


class StatusView:
    def __init__(self):
        self.messages = 0
        self.counters = {}
        self.service_id = ""

    def add(self, payload):
        try:
            st = deserialise_x5f2(payload)
            doc = json.loads(st.status_json)
        except Exception:
            return
        self.messages += 1
        self.service_id = st.service_id
        self.counters = doc.get("counters", {})

    def live_line(self):
        if not self.counters:
            return ""
        shown = ["{}={}".format(k, self.counters[k]) for k in INTERESTING if k in self.counters]
        return " | " + self.service_id + " " + " ".join(shown)

    def summary(self):
        return "status_messages={}".format(self.messages)
