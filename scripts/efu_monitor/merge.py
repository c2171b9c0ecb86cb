"""One instrument from several efu processes: their ev44 streams merged by pulse time, and each
source's message_ids checked.

Several efu processes (one per link or ring set, docs/deployment.md) publish one instrument to
the same topic, each under its own source_name with its own message_id sequence from 0. A
consumer sees the sources interleaved in the order the broker appended them; within one source
the ids are consecutive in reading order (the idempotent producer keeps a source's order across
retries and leader changes, docs/kafka.md).

    merger = PulseMerger()
    for ev in decoded_ev44_messages:          # streaming_data_types.deserialise_ev44(...)
        merger.add(ev)
        for pulse_time, events in merger.ready():   # pulses no source can add to any more
            ...
    for pulse_time, events in merger.drain():       # the rest, at the end of the stream
        ...
    merger.id_report()   # {source: SourceIds}: count, first/last id, gaps, duplicates, reorders

A pulse is *ready* once every source seen so far has moved past it: each process sends a
pulse's events in time order, so a source whose latest message holds reference times up to T
adds nothing to pulses before T. (A source that has not sent anything yet cannot hold a pulse
back; pass `sources` to wait for named ones.) Each event is (tof, pixel, source).
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field


@dataclass
class SourceIds:
    """The message_ids one source delivered, in reading order."""
    first: int | None = None
    last: int | None = None
    messages: int = 0
    events: int = 0
    gaps: list = field(default_factory=list)        # (after id, next id read) where ids jumped ahead
    duplicates: list = field(default_factory=list)  # ids read more than once
    reorders: list = field(default_factory=list)    # (after id, id read) where an id went back

    def consecutive(self) -> bool:
        """True if the ids read are first, first + 1, ..., last, each once, in order."""
        return not (self.gaps or self.duplicates or self.reorders)

    def add(self, message_id: int, events: int, seen: set) -> None:
        self.messages += 1
        self.events += events
        if message_id in seen:
            self.duplicates.append(message_id)
        elif self.last is not None and message_id < self.last:
            self.reorders.append((self.last, message_id))
        elif self.last is not None and message_id != self.last + 1:
            self.gaps.append((self.last, message_id))
        seen.add(message_id)
        if self.first is None:
            self.first = message_id
        if self.last is None or message_id > self.last:
            self.last = message_id


class PulseMerger:
    """Merges ev44 messages of several sources into pulses in time order (see the module)."""

    def __init__(self, sources=None):
        self._expected = set(sources or ())
        self._pulses = {}       # pulse time -> [(tof, pixel, source), ...]
        self._heap = []         # pulse times in self._pulses
        self._latest = {}       # source -> highest reference time it sent
        self._ids = {}          # source -> SourceIds
        self._seen = {}         # source -> set of ids read
        self.emitted_through = None  # the last pulse time handed out
        self.late_events = 0    # events for a pulse already handed out (a source broke order)

    def add(self, ev) -> None:
        """One decoded ev44 message (fields source_name, message_id, reference_time,
        reference_time_index, time_of_flight, pixel_id)."""
        source = ev.source_name
        tofs, pixels = ev.time_of_flight, ev.pixel_id
        ids = self._ids.setdefault(source, SourceIds())
        ids.add(int(ev.message_id), len(pixels), self._seen.setdefault(source, set()))
        bounds = list(ev.reference_time_index) + [len(pixels)]
        for i, pulse in enumerate(ev.reference_time):
            pulse = int(pulse)
            lo, hi = int(bounds[i]), int(bounds[i + 1])
            if self.emitted_through is not None and pulse <= self.emitted_through:
                self.late_events += hi - lo
                continue
            bucket = self._pulses.get(pulse)
            if bucket is None:
                bucket = self._pulses[pulse] = []
                heapq.heappush(self._heap, pulse)
            bucket.extend((int(tofs[k]), int(pixels[k]), source) for k in range(lo, hi))
            if pulse > self._latest.get(source, -1):
                self._latest[source] = pulse

    def watermark(self):
        """Pulses before this time are complete: the lowest latest pulse over the sources
        (None while an expected source has sent nothing)."""
        if not self._latest or any(s not in self._latest for s in self._expected):
            return None
        return min(self._latest.values())

    def ready(self):
        """Yields (pulse time, events) of complete pulses, oldest first, each once."""
        mark = self.watermark()
        while mark is not None and self._heap and self._heap[0] < mark:
            yield self._pop()

    def drain(self):
        """Yields every pulse still held, oldest first (end of the stream)."""
        while self._heap:
            yield self._pop()

    def _pop(self):
        pulse = heapq.heappop(self._heap)
        self.emitted_through = pulse
        return pulse, self._pulses.pop(pulse)

    def id_report(self) -> dict:
        """{source: SourceIds} over everything added."""
        return dict(self._ids)


def merge_messages(messages, sources=None):
    """Merges a finished list of decoded ev44 messages. Returns (events, report): events as
    (pulse time, tof, pixel, source) in pulse-time order (within a pulse in reading order) and
    report = {source: SourceIds}. `sources` defaults to every source in the list, so none is
    passed over by a pulse handed out before its first message."""
    messages = list(messages)
    if sources is None:
        sources = {ev.source_name for ev in messages}
    merger = PulseMerger(sources)
    events = []
    for ev in messages:
        merger.add(ev)
        for pulse, bucket in merger.ready():
            events.extend((pulse, tof, pixel, source) for tof, pixel, source in bucket)
    for pulse, bucket in merger.drain():
        events.extend((pulse, tof, pixel, source) for tof, pixel, source in bucket)
    return events, merger.id_report()


class MergeView:
    """efu-monitor --merge: pulses merged across sources (above) and each source's ids."""

    def __init__(self, sources=()):
        self._merger = PulseMerger(sources)
        self.pulses = 0
        self.events = 0

    def add(self, ev):
        self._merger.add(ev)
        for _, bucket in self._merger.ready():
            self.pulses += 1
            self.events += len(bucket)

    def summary(self):
        for _, bucket in self._merger.drain():
            self.pulses += 1
            self.events += len(bucket)
        parts = []
        for source, ids in sorted(self._merger.id_report().items()):
            parts.append("%s:ids=%s..%s,messages=%d,gaps=%d,duplicates=%d,reorders=%d" % (
                source, ids.first, ids.last, ids.messages, len(ids.gaps), len(ids.duplicates),
                len(ids.reorders)))
        return "merge: pulses=%d events=%d late_events=%d sources=%s" % (
            self.pulses, self.events, self._merger.late_events, ";".join(parts) or "-")
