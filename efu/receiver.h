// The receiver: recvmmsg() into preallocated slots, route each packet to a lane (design.md §1).
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "data_path.h"
#include "efu/counters.h"
#include "efu/packet_pool.h"

namespace efu {

struct ReceiverConfig {
  unsigned batch_size = 64;          // datagrams per recvmmsg()
  std::uint32_t max_datagram = 9000;  // larger datagrams are truncated by the kernel: counted
};

using RouteKeyFn = std::uint32_t (*)(const PacketView& packet) noexcept;

class Receiver {
 public:
  /// All buffers are allocated here; receive_batch() allocates nothing.
  Receiver(int fd, const ReceiverConfig& config, PacketPool& pool, std::vector<Lane*> lanes,
           RouteKeyFn route_key, CounterRegistry& counters);

  /// One iteration: take back freed slots, one recvmmsg() (blocks up to the socket's receive
  /// timeout for the first datagram), route the datagrams to their lanes. Returns how many
  /// datagrams were received. Never blocks on a full ring: that packet is dropped and counted.
  unsigned receive_batch();

  /// Calls receive_batch() until `stop` is set.
  void run(const std::atomic<bool>& stop);

 private:
  void reclaim_slots();

  int fd_;
  ReceiverConfig config_;
  PacketPool& pool_;
  std::vector<Lane*> lanes_;
  RouteKeyFn route_key_;

  std::vector<std::uint32_t> free_slots_;           // a stack; the receiver owns it
  std::vector<mmsghdr> messages_;
  std::vector<iovec> iovecs_;
  std::vector<std::uint8_t> control_;               // one SO_RXQ_OVFL cmsg per message
  std::vector<std::uint32_t> batch_slots_;          // slot of message i
  std::vector<std::vector<PacketRef>> staged_;      // per lane, this batch's packets
  std::uint32_t kernel_drops_seen_ = 0;

  Counter& packets_;
  Counter& bytes_;
  Counter& truncated_;
  Counter& empty_;
  Counter& dropped_kernel_;
  Counter& dropped_ring_full_;
  Counter& no_free_slot_;
  Counter& errors_;
};

}  // namespace efu
