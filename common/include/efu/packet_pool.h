// Preallocated packet slots shared by the receiver and the processing threads.
//
// The receiver owns the free slots. It receives datagrams straight into them (no copy), then
// passes PacketRefs through an SPSC ring to a processing thread, which hands the slot indices
// back through a second SPSC ring once the pipeline is done with them. The ring's
// release/acquire pair orders the slot's bytes: the receiver's writes happen before its push,
// and the processor's reads happen before it returns the index.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

#include "efu/plugin.h"

namespace efu {

/// What travels through a receive->processing ring: one datagram, `size` bytes at `offset` in
/// `slot`. Without UDP GRO a slot holds one datagram at offset 0; with GRO a slot holds a
/// coalesced buffer of several datagrams of one flow, each its own PacketRef; with the af_xdp
/// backend reading in place, a slot is a UMEM frame and the datagram is where the kernel wrote
/// it, after the frame's headroom and headers. 8 bytes, so a cache line of the ring carries 8 of
/// them: every line the receive thread writes is one the processing thread last read, so fewer
/// lines per datagram is less traffic between the cores.
/// A slot is at most 64 KB (kGroSlotSize, --max-datagram <= 65535), so size and offset fit 16
/// bits.
struct PacketRef {
  std::uint32_t slot;
  std::uint16_t size;
  std::uint16_t offset = 0;
};
static_assert(sizeof(PacketRef) == 8);

class PacketPool {
 public:
  /// `slot_size` is rounded up to a multiple of 64 so every slot starts on its own cache line.
  PacketPool(std::size_t slots, std::size_t slot_size)
      : slots_(slots), stride_((slot_size + 63) / 64 * 64) {
    const std::size_t bytes = slots_ * stride_;
    owned_.reset(static_cast<std::uint8_t*>(::operator new[](bytes, std::align_val_t{64})));
    storage_ = owned_.get();
    sources_ = std::make_unique<PacketSource[]>(slots_);
    segments_ = std::make_unique<std::atomic<std::uint32_t>[]>(slots_);
  }

  /// Slots in memory that someone else owns and keeps alive longer than the pool: `slots`
  /// consecutive slots of exactly `slot_size` bytes (a multiple of 64) from `memory`. The
  /// af_xdp backend's UMEM is such a pool when the pipelines read payloads in place.
  PacketPool(std::size_t slots, std::size_t slot_size, std::uint8_t* memory)
      : slots_(slots), stride_(slot_size), storage_(memory) {
    sources_ = std::make_unique<PacketSource[]>(slots_);
    segments_ = std::make_unique<std::atomic<std::uint32_t>[]>(slots_);
  }

  std::size_t slots() const noexcept { return slots_; }
  std::size_t slot_size() const noexcept { return stride_; }
  std::uint8_t* data(std::uint32_t slot) noexcept { return storage_ + slot * stride_; }
  const std::uint8_t* data(std::uint32_t slot) const noexcept { return storage_ + slot * stride_; }
  /// The sender of the datagram(s) in a slot: the receive backend writes it with the bytes (the
  /// socket backend points recvmmsg's msg_name at it), the ring's release/acquire orders it.
  PacketSource& source(std::uint32_t slot) noexcept { return sources_[slot]; }
  const PacketSource& source(std::uint32_t slot) const noexcept { return sources_[slot]; }
  /// How many ring entries (datagrams) still refer to a slot that holds more than one: the
  /// receiver sets it before the push, and whoever takes it to 0 gives the slot back. A free
  /// slot's count is 0 or 1 (the last release leaves 0), and a slot with one datagram is never
  /// counted or written (segments <= 1 is the plain, atomic-free path: the processing thread
  /// only reads a line that the receive thread does not write).
  std::atomic<std::uint32_t>& segments(std::uint32_t slot) const noexcept {
    return segments_[slot];
  }

 private:
  struct AlignedDelete {
    void operator()(std::uint8_t* p) const noexcept {
      ::operator delete[](p, std::align_val_t{64});
    }
  };
  std::size_t slots_;
  std::size_t stride_;
  std::unique_ptr<std::uint8_t[], AlignedDelete> owned_;  // empty for memory owned elsewhere
  std::uint8_t* storage_ = nullptr;
  std::unique_ptr<PacketSource[]> sources_;
  std::unique_ptr<std::atomic<std::uint32_t>[]> segments_;  // mutable through a const pool
};

}  // namespace efu
