// The receive -> process data path (docs/architecture.md §3.2, §3.3). Every receive thread owns
// a packet pool and one Lane to each processing thread; every processing thread drains one Lane
// from each receive thread. So each ring has one producer and one consumer, and the datagrams of
// one flow (one receive thread, one route key) stay in order on one processing thread.
#pragma once

#include <cstdint>

#include "efu/packet_pool.h"
#include "efu/spsc_ring.h"
#include "process/wakeup.h"

namespace efu {

/// A datagram whose bytes lie in several slots (the af_xdp backend in place: a jumbo frame arrives
/// in several UMEM frames): its pieces in order. The receive thread writes a datagram's chain
/// before the push that publishes it (the ring's release/acquire orders it) and changes it only
/// after the head slot has come back.
struct SlotChain {
  // The kernel's limit of buffers for one frame (MAX_SKB_FRAGS + 1).
  static constexpr unsigned kMaxPieces = 17;
  std::uint32_t pieces = 0;  // 0 or 1: not a chain
  std::uint32_t slot[kMaxPieces];
  std::uint16_t offset[kMaxPieces];
  std::uint16_t size[kMaxPieces];
};

/// PacketRef::offset with this bit set, on a lane with chains: the datagram is the chain of its
/// slot (Lane::chains[slot]), PacketRef::size its whole size. In-place offsets stay below 4096.
inline constexpr std::uint16_t kChainedOffset = 0x8000;

/// One receive-thread -> processing-thread pair: datagrams go one way, freed slot indices come
/// back. The return ring holds every slot of the producer's pool, so a processing thread can
/// always give a slot back without waiting.
struct Lane {
  Lane(std::size_t packet_capacity, const PacketPool& producer_pool)
      : packets(packet_capacity), returned(producer_pool.slots()), pool(&producer_pool) {}
  SpscRing<PacketRef> packets;       // receive thread -> processing thread
  SpscRing<std::uint32_t> returned;  // processing thread -> receive thread
  const PacketPool* pool;            // the producer's pool: PacketRef::slot indexes it
  Wakeup* wakeup = nullptr;          // the consumer's; the producer notifies it after a push
  // Chained datagrams (see SlotChain), indexed by head slot; nullptr: the producer sends none.
  // A processing thread gathers a chained datagram into its own buffer and gives back only
  // the head slot; the producer frees the other pieces when it reuses the head.
  const SlotChain* chains = nullptr;
  std::uint32_t chain_max_size = 0;  // the largest chained datagram, for the gather buffer
};

/// Gives up one datagram's hold on its slot; true if that was the last one, so the slot is
/// free again. A slot with one datagram (segments <= 1: the path without UDP GRO) costs one
/// load. Acquire: the reads of whoever released a shared slot's other datagrams happen before
/// the slot is reused.
inline bool release_segment(const PacketPool& pool, std::uint32_t slot) noexcept {
  std::atomic<std::uint32_t>& segments = pool.segments(slot);
  return segments.load(std::memory_order_acquire) <= 1 ||
         segments.fetch_sub(1, std::memory_order_acq_rel) == 1;
}

/// How many slots a receive thread's pool needs so that it always has a full batch of free
/// slots: each of its lanes holds at most a full ring plus the batch its processor has popped,
/// and every ring entry refers to at least one slot.
constexpr std::size_t pool_slots_needed(std::size_t lanes, std::size_t ring_capacity,
                                        std::size_t receive_batch, std::size_t process_batch) {
  return lanes * (ring_capacity + process_batch) + receive_batch;
}

}  // namespace efu
