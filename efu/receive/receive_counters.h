// The receive.* counters both receive backends keep (efu/receive/receiver.h: recvmmsg; af_xdp/
// xdp_receiver.h: AF_XDP), registered in one place so the names and their meaning cannot drift
// apart between the backends (docs/architecture.md §4.4, docs/operations.md). A backend's own
// counters (the socket's receive.errors, the af_xdp receive.xdp.*) are its own.
#pragma once

#include "efu/counters.h"

namespace efu {

/// One receive thread's share. Every receive thread registers the same names; the published
/// values are their sums.
struct ReceiveCounters {
  explicit ReceiveCounters(CounterRegistry& counters)
      : packets(counters.counter("receive.packets")),
        bytes(counters.counter("receive.bytes")),
        truncated(counters.counter("receive.truncated")),
        empty(counters.counter("receive.dropped.empty")),
        dropped_kernel(counters.counter("receive.dropped.kernel")),
        dropped_ring_full(counters.counter("receive.dropped.ring_full")),
        no_free_slot(counters.counter("receive.stalled.no_free_slot")) {}

  Counter& packets;            // datagrams handed to the lanes (or dropped there: ring full)
  Counter& bytes;              // their user data bytes
  Counter& truncated;          // larger than --max-datagram: never passed on
  Counter& empty;              // no user data: never passed on
  Counter& dropped_kernel;     // the kernel could not queue them (socket buffer, rx ring)
  Counter& dropped_ring_full;  // a processing thread's ring was full (LaneDispatch counts them)
  Counter& no_free_slot;       // passes without a free slot (cannot happen with a sized pool)
};

}  // namespace efu
