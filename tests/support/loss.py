"""The one definition of loss, as efu states it: the gauges of efu/loss.h, in every stats output
and in --stats-json (docs/architecture.md §4). Nothing here adds counters up on its own; a test,
the soak, the demo and the benchmarks read these instead.

  lost.datagrams      datagrams, possibly valid, that never reached a pipeline (the kernel's
                      drops, full rings, what was left at stop, af_xdp frames without a socket)
  rejected.datagrams  datagrams the host refused as malformed (larger than --max-datagram, empty,
                      af_xdp frames that are no usable datagram): no valid data in them
  lost.events         events formed that did not reach Kafka (never queued, or not delivered)
"""
from __future__ import annotations

LOST_DATAGRAMS = "lost.datagrams"
REJECTED_DATAGRAMS = "rejected.datagrams"
LOST_EVENTS = "lost.events"


def _gauge(stats: dict, name: str) -> int:
    # A missing gauge is an efu without the one definition of loss: an error, never a 0.
    if name not in stats:
        raise KeyError(f"efu's stats have no '{name}' (efu/loss.h): is bin/efu out of date?")
    return stats[name]


def lost_datagrams(stats: dict) -> int:
    return _gauge(stats, LOST_DATAGRAMS)


def rejected_datagrams(stats: dict) -> int:
    return _gauge(stats, REJECTED_DATAGRAMS)


def lost_events(stats: dict) -> int:
    return _gauge(stats, LOST_EVENTS)
