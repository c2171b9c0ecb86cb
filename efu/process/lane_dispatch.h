// What every receive backend does once its datagrams are in pool slots (docs/architecture.md
// §3.3): owning the free slots, routing each datagram to a lane by the plugin's key, pushing a
// batch to the lanes with ring-full drops counted, waking sleeping processing threads, and taking
// back the slots the processing threads return. The socket and af_xdp receivers both use it, so
// plugins cannot tell the backends apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "efu/counters.h"
#include "efu/packet_pool.h"
#include "efu/plugin.h"
#include "process/data_path.h"

namespace efu {

using RouteKeyFn = std::uint32_t (*)(const PacketView& packet) noexcept;

class LaneDispatch {
 public:
  /// `batch`: datagrams staged per lane at most between two push() calls.
  LaneDispatch(PacketPool& pool, std::vector<Lane*> lanes, RouteKeyFn route_key, std::size_t batch,
               Counter& ring_full)
      : pool_(pool),
        lanes_(std::move(lanes)),
        route_key_(lanes_.size() > 1 ? route_key : nullptr),
        staged_(lanes_.size()),
        ring_full_(ring_full) {
    free_.reserve(pool_.slots());
    for (std::size_t i = pool_.slots(); i-- > 0;) free_.push_back(static_cast<std::uint32_t>(i));
    for (auto& s : staged_) s.reserve(batch);
  }

  PacketPool& pool() noexcept { return pool_; }

  /// Datagrams the next push() takes without a ring-full drop, at least: the free space of the
  /// one lane's ring. With several lanes, where a datagram goes is known only once it is read
  /// (the route key), so no bound is given (SIZE_MAX).
  std::size_t room() noexcept {
    return lanes_.size() == 1 ? lanes_[0]->packets.free_space() : SIZE_MAX;
  }
  std::size_t free_slots() const noexcept { return free_.size(); }
  /// The i-th free slot from the top of the stack (0: the next one take() gives).
  std::uint32_t peek_free(std::size_t i) const noexcept { return free_[free_.size() - 1 - i]; }
  std::uint32_t take() noexcept {
    const std::uint32_t slot = free_.back();
    free_.pop_back();
    return slot;
  }
  /// A slot taken but not staged (its datagram was rejected) goes back at once.
  void give_back(std::uint32_t slot) noexcept { free_.push_back(slot); }

  /// Moves the slots the processing threads returned onto the free stack (capacity reserved
  /// for the whole pool: never allocates).
  void reclaim() noexcept {
    for (Lane* lane : lanes_) {
      std::uint32_t back[256];
      std::size_t n = 0;
      while ((n = lane->returned.pop_bulk(std::span(back))) != 0) {
        free_.insert(free_.end(), back, back + n);
      }
    }
  }

  /// Stages a slot that holds one datagram of `size` bytes. Its segment count is already 0 or 1
  /// (a free slot's always is; see PacketPool::segments), which release_segment() takes as
  /// "one datagram", so it is not written: no store to a line the processing threads read.
  void stage_single(std::uint32_t slot, std::uint32_t size) noexcept { stage(slot, 0, size); }

  /// Stages the `count` datagrams of one slot (UDP GRO): call stage() for each of them, after
  /// this.
  void begin_segments(std::uint32_t slot, std::uint32_t count) noexcept {
    pool_.segments(slot).store(count, std::memory_order_relaxed);
  }

  /// Routes one datagram (`size` bytes at `offset` in `slot`) to its lane's staging.
  void stage(std::uint32_t slot, std::uint32_t offset, std::uint32_t size) noexcept {
    staged_[lane_of(slot, offset, size)].push_back(
        PacketRef{slot, static_cast<std::uint16_t>(size), static_cast<std::uint16_t>(offset)});
  }

  /// Routes a datagram of `size` bytes whose first `head_size` bytes are at `offset` in `slot`
  /// and the rest in other slots (a chain: Lane::chains[slot]); the route key sees the first
  /// piece, the ring entry carries kChainedOffset.
  void stage_chained(std::uint32_t slot, std::uint32_t offset, std::uint32_t head_size,
                     std::uint32_t size) noexcept {
    staged_[lane_of(slot, offset, head_size)].push_back(
        PacketRef{slot, static_cast<std::uint16_t>(size),
                  static_cast<std::uint16_t>(offset | kChainedOffset)});
  }

  /// Pushes each lane's staged datagrams, wakes its processing thread if it sleeps, and counts
  /// what a full ring does not take (those datagrams are dropped, their slots freed). Never
  /// blocks.
  void push() noexcept {
    for (std::size_t l = 0; l < lanes_.size(); ++l) {
      std::vector<PacketRef>& batch = staged_[l];
      if (batch.empty()) continue;
      const std::size_t pushed = lanes_[l]->packets.push_bulk(std::span<const PacketRef>(batch));
      if (pushed != 0 && lanes_[l]->wakeup != nullptr) lanes_[l]->wakeup->notify();
      if (pushed < batch.size()) {
        ring_full_.add(batch.size() - pushed);
        for (std::size_t i = pushed; i < batch.size(); ++i) drop(batch[i].slot);
      }
      batch.clear();
    }
  }

 private:
  std::size_t lane_of(std::uint32_t slot, std::uint32_t offset, std::uint32_t size) noexcept {
    if (route_key_ == nullptr) return 0;
    return route_key_(PacketView{pool_.data(slot) + offset, size, &pool_.source(slot)}) %
           lanes_.size();
  }

  void drop(std::uint32_t slot) noexcept {
    if (release_segment(pool_, slot)) free_.push_back(slot);
  }

  PacketPool& pool_;
  std::vector<Lane*> lanes_;
  RouteKeyFn route_key_;
  std::vector<std::uint32_t> free_;             // a stack; the receive thread owns it
  std::vector<std::vector<PacketRef>> staged_;  // per lane, this batch's datagrams
  Counter& ring_full_;
};

}  // namespace efu
