// The receive -> process data path (design.md §1, §3): one Lane per processing thread.
#pragma once

#include <cstdint>

#include "efu/packet_pool.h"
#include "efu/spsc_ring.h"

namespace efu {

/// One receiver -> processing-thread pair: packets go one way, freed slot indices come back.
/// The return ring holds every slot of the pool, so a processing thread can always give a slot
/// back without waiting.
struct Lane {
  Lane(std::size_t packet_capacity, std::size_t pool_slots)
      : packets(packet_capacity), returned(pool_slots) {}
  SpscRing<PacketRef> packets;          // receiver -> processor
  SpscRing<std::uint32_t> returned;     // processor -> receiver
};

/// How many slots the pool needs so that the receiver always has a full batch of free slots:
/// each lane can hold at most a full ring plus the batch its processor has popped.
inline std::size_t pool_slots_needed(std::size_t lanes, std::size_t ring_capacity,
                                     std::size_t receive_batch, std::size_t process_batch) {
  return lanes * (ring_capacity + process_batch) + receive_batch;
}

}  // namespace efu
