// The socket receive backend: recvmmsg() into preallocated slots, optionally with UDP GRO (one
// slot then holds several datagrams of one flow, split into views without copying), and the
// datagrams routed to the lanes (docs/architecture.md §3.5).
#pragma once

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "efu/counters.h"
#include "efu/packet_pool.h"
#include "process/data_path.h"
#include "process/lane_dispatch.h"
#include "receive/receive_counters.h"

namespace efu {

/// What a receive thread does while its processing ring is full (--full-ring).
enum class FullRing : std::uint8_t {
  // Stop reading the socket until the processing thread frees room: the socket buffer holds
  // what arrives meanwhile, and past it the kernel drops (receive.dropped.kernel). A receive
  // thread with one processing thread only; with several it drops, as kDrop.
  kHold,
  // Keep reading; what the ring cannot take is dropped (receive.dropped.ring_full).
  kDrop,
};
/// "hold" or "drop"; else ConfigError naming --full-ring.
FullRing parse_full_ring(const std::string& text);

struct ReceiverConfig {
  unsigned batch_size = 64;           // recvmmsg() messages per call, at most
  std::uint32_t max_datagram = 9000;  // larger datagrams are counted as truncated, never passed on
  bool gro = false;                   // the socket has UDP_GRO: slots hold coalesced buffers
  bool sender = true;  // ask for each datagram's sender (msg_name): the plugin's uses_source
  std::uint64_t drain_timeout_ns = 1'000'000'000;  // at stop: how long to keep receiving
  // Bytes per recvmmsg() call, about: the next call asks for as many messages as fit this at the
  // last call's mean message size (at least one, at most batch_size); 0: no byte limit. It
  // bounds the slots the receive thread writes before the processing thread gives them back,
  // so that they are still in the receiving core's cache when they are written again
  // (docs/host.md "Receive batch").
  std::uint32_t batch_bytes = 256 * 1024;
  // Receive coalescing (receive_coalescing.h): the longest pause before a recvmmsg() call while
  // datagrams come one at a time at a moderate rate; 0: never pause.
  std::uint64_t coalesce_ns = 1'000'000;
  FullRing full_ring = FullRing::kHold;
  // With kHold, the sleep before looking at a full ring again: long enough that the processing
  // thread (often on the same core) gets the core, short against what a ring holds (1,024
  // packets at 60 k packets/s last 17 ms).
  std::uint64_t full_ring_wait_ns = 500'000;
};

/// With UDP GRO a coalesced buffer is at most 64 KB; a slot must hold a whole one. The kernel
/// coalesces at most 64 datagrams into one (UDP_GRO_CNT_MAX), which sizes the staging.
inline constexpr std::uint32_t kGroSlotSize = 65535;
inline constexpr std::uint32_t kMaxGroSegments = 64;

/// The messages the next recvmmsg() call asks for under a byte budget: as many as fit
/// `batch_bytes` at the mean size of the last call's `n` messages (`bytes` in all), at least one
/// and at most `batch_size`. Once per call, not per datagram.
inline unsigned messages_within_budget(std::uint64_t batch_bytes, std::uint64_t bytes, unsigned n,
                                       unsigned batch_size) noexcept {
  const std::uint64_t mean = std::max<std::uint64_t>(1, bytes / std::max(n, 1u));
  return static_cast<unsigned>(std::clamp<std::uint64_t>(batch_bytes / mean, 1, batch_size));
}

/// The slot size a receive thread's pool needs.
inline std::uint32_t receive_slot_size(const ReceiverConfig& c) noexcept {
  return c.gro ? kGroSlotSize : c.max_datagram;
}

/// One receive thread's own share of the summed receive.* counters.
struct ReceiverCounters {
  std::uint64_t packets;
  std::uint64_t bytes;
  std::uint64_t dropped_kernel;
  std::uint64_t dropped_ring_full;
};

class Receiver {
 public:
  /// All buffers are allocated here; receive_batch() allocates nothing. Several receivers
  /// register the same counter names; the published values are their sums.
  Receiver(int fd, const ReceiverConfig& config, PacketPool& pool, std::vector<Lane*> lanes,
           RouteKeyFn route_key, CounterRegistry& counters);

  /// One iteration: take back freed slots, one recvmmsg() (blocks up to the socket's receive
  /// timeout for the first datagram, or not at all with `dont_wait`), route the datagrams to
  /// their lanes. Returns how many messages recvmmsg gave (-1: the socket had nothing and
  /// dont_wait was set). It asks for no more datagrams than the ring has room for; a full ring
  /// (FullRing::kHold) makes it sleep full_ring_wait_ns instead, counted as
  /// receive.full_ring.waits, and return 0. What a full ring does not take (several lanes, or
  /// FullRing::kDrop) is dropped and counted. Blocks only in recvmmsg() and that sleep.
  int receive_batch(bool dont_wait = false);

  /// Messages the next receive_batch() asks for: batch_size, or fewer after large messages
  /// (batch_bytes).
  unsigned next_batch() const noexcept { return want_; }

  /// Receives until `stop` is set, pausing between calls as receive coalescing says (counted
  /// as receive.coalesce.pauses), then finish().
  void run(const std::atomic<bool>& stop);

  /// This receiver's own counter values (any thread may read them).
  ReceiverCounters own_counters() const noexcept {
    return ReceiverCounters{counters_.packets.get(), counters_.bytes.get(),
                            counters_.dropped_kernel.get(), counters_.dropped_ring_full.get()};
  }

  /// At stop: receives what is still in the socket buffer (for up to the drain timeout), counts
  /// whatever is left after that as receive.dropped.at_stop, and reads the socket's kernel drop
  /// count once more, so the final counts are complete.
  void finish();

  /// Reads the socket's kernel drop count (one getsockopt(SO_MEMINFO)) for the receive thread,
  /// which adds what is new to receive.dropped.kernel at its next call. Any thread: the host's
  /// stats thread calls it every 100 ms, so the receive thread makes no syscall for it (and the
  /// kernel writes no control message per datagram, as SO_RXQ_OVFL would have it do).
  void poll_kernel_drops() noexcept;
  /// How many of those reads failed (the socket is the receiver's own: expected 0).
  std::uint64_t poll_failures() const noexcept {
    return poll_failures_.load(std::memory_order_relaxed);
  }

  /// The UDP_GRO segment size in a received message's control data, 0 if it has none (the
  /// message is one datagram).
  static std::uint32_t gro_segment_size(const msghdr& h) noexcept;

 private:
  /// A received message as receive_batch() hands it on: `segments` datagrams of `segment`
  /// bytes (the last one possibly shorter) in `size` bytes, or none (rejected, and counted).
  struct Message {
    std::uint32_t size;
    std::uint32_t segment;
    std::uint32_t segments;
  };
  // Points the first `want` messages at the next free slots (in peek_free order).
  void prepare_messages(unsigned want) noexcept;
  // The checks of one received message; counts a rejection.
  Message classify(const mmsghdr& message) noexcept;
  // Takes the n messages' slots in order, stages the accepted datagrams, gives the rejected
  // slots back after the loop; returns the bytes the kernel copied (rejected ones included).
  std::uint64_t stage_messages(unsigned n) noexcept;
  void count_kernel_drops(std::uint32_t total) noexcept;
  std::uint64_t discard_remaining() noexcept;

  int fd_;
  ReceiverConfig config_;
  std::uint32_t slot_size_;

  std::vector<mmsghdr> messages_;
  std::vector<iovec> iovecs_;
  std::vector<std::uint32_t> rejected_;  // this call's rejected slots (see stage_messages)
  std::vector<std::uint8_t> control_;    // per message, with GRO only: the UDP_GRO cmsg
  unsigned want_;                        // messages the next call asks for (batch_bytes)
  unsigned asked_ = 0;                   // messages the last call asked for
  std::uint32_t kernel_drops_seen_ = 0;  // the socket's drop total counted so far
  // The socket's drop total as poll_kernel_drops() last read it: written by the poller, read
  // by the receive thread (relaxed: a count, it orders nothing). Its own line.
  alignas(64) std::atomic<std::uint32_t> kernel_drops_polled_{0};
  std::atomic<std::uint64_t> poll_failures_{0};

  ReceiveCounters counters_;  // the receive.* names both backends keep
  Counter& dropped_at_stop_;  // the socket's own: what finish() could not drain
  Counter& errors_;           // failed recvmmsg() calls
  Counter& gro_buffers_;      // coalesced buffers split into their datagrams
  Counter& pauses_;           // receive coalescing's pauses before a call
  Counter& full_ring_waits_;  // FullRing::kHold: sleeps on a full ring
  LaneDispatch dispatch_;     // after the counters: it keeps a reference to dropped_ring_full
};

}  // namespace efu
