// What every receive backend does once its datagrams are in pool slots (design.md §3): take the
// slots the processing threads gave back, and push a batch's datagrams to their lanes, counting
// what a full ring drops. Shared by the socket receiver and the af_xdp receiver.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "data_path.h"
#include "efu/counters.h"
#include "efu/packet_pool.h"

namespace efu {

/// Moves the slots the processing threads returned onto the receiver's free stack. The stack's
/// capacity is reserved for the whole pool, so this never allocates.
inline void reclaim_returned_slots(std::span<Lane* const> lanes,
                                   std::vector<std::uint32_t>& free_slots) {
  for (Lane* lane : lanes) {
    std::uint32_t back[256];
    std::size_t n = 0;
    while ((n = lane->returned.pop_bulk(std::span(back))) != 0) {
      free_slots.insert(free_slots.end(), back, back + n);
    }
  }
}

/// Pushes each lane's staged datagrams and clears the staging. Datagrams a full ring does not
/// take are dropped: counted in `ring_full`, their slots back on the free stack. Never blocks.
inline void push_staged(std::span<Lane* const> lanes, std::vector<std::vector<PacketRef>>& staged,
                        std::vector<std::uint32_t>& free_slots, Counter& ring_full) {
  for (std::size_t l = 0; l < lanes.size(); ++l) {
    std::vector<PacketRef>& batch = staged[l];
    if (batch.empty()) continue;
    const std::size_t pushed = lanes[l]->packets.push_bulk(std::span<const PacketRef>(batch));
    if (pushed < batch.size()) {
      ring_full.add(batch.size() - pushed);
      for (std::size_t i = pushed; i < batch.size(); ++i) free_slots.push_back(batch[i].slot);
    }
    batch.clear();
  }
}

}  // namespace efu
