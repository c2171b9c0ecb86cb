#!/usr/bin/env python3
"""efu_monitor.merge: several sources' ev44 messages merged by pulse time, each source's ids
checked. Messages are plain records with ev44's field names (what deserialise_ev44 returns)."""
import sys
from collections import namedtuple

from efu_monitor.merge import PulseMerger, merge_messages
from support.checks import check, finish

Ev44 = namedtuple("Ev44", "source_name message_id reference_time reference_time_index "
                          "time_of_flight pixel_id")


def main():
    # Two sources interleaved as a broker would append them; b's first message arrives after
    # a has moved on to pulse 20, and still lands in pulse 10.
    msgs = [Ev44("a", 0, [10, 20], [0, 2], [1, 2, 3], [5, 6, 7]),
            Ev44("b", 0, [10], [0], [9], [8]),
            Ev44("b", 1, [20, 30], [0, 1], [4, 4], [1, 1]),
            Ev44("a", 1, [30], [0], [7], [7])]
    events, report = merge_messages(msgs)
    check(events == [(10, 1, 5, "a"), (10, 2, 6, "a"), (10, 9, 8, "b"), (20, 3, 7, "a"),
                     (20, 4, 1, "b"), (30, 4, 1, "b"), (30, 7, 7, "a")],
          "events merged by pulse time, every event once: %s" % events)
    check(all(r.consecutive() and r.first == 0 and r.last == 1 for r in report.values()),
          "ids 0, 1 of each source consecutive")
    check((report["a"].events, report["b"].events) == (4, 3), "events per source")

    # A gap, a duplicate and an id that goes back, each found and named.
    bad = [Ev44("a", 0, [10], [0], [1], [1]), Ev44("a", 2, [10], [0], [1], [1]),
           Ev44("a", 2, [20], [0], [1], [1]), Ev44("a", 1, [20], [0], [1], [1])]
    _, report = merge_messages(bad)
    r = report["a"]
    check(r.gaps == [(0, 2)] and r.duplicates == [2] and r.reorders == [(2, 1)]
          and not r.consecutive(), "gap, duplicate and reorder found: %s" % r)

    # Streaming: a pulse is handed out only when every expected source has passed it.
    m = PulseMerger(sources=["a", "b"])
    m.add(Ev44("a", 0, [10, 20], [0, 1], [1, 2], [1, 2]))
    check(list(m.ready()) == [], "nothing ready while source b has sent nothing")
    m.add(Ev44("b", 0, [20], [0], [3], [3]))
    ready = list(m.ready())
    check(ready == [(10, [(1, 1, "a")])], "pulse 10 ready once both passed it: %s" % ready)
    m.add(Ev44("b", 1, [10], [0], [4], [4]))
    check(m.late_events == 1, "an event for a pulse already handed out is counted late")
    rest = list(m.drain())
    check(rest == [(20, [(2, 2, "a"), (3, 3, "b")])], "drain hands out the rest: %s" % rest)


if __name__ == "__main__":
    main()
    sys.exit(finish())
