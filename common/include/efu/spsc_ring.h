// A bounded, lock-free, single-producer single-consumer ring (docs/architecture.md §3.2).
//
// One thread calls only the producer side (try_push, push_bulk), one other thread only the
// consumer side (try_pop, pop_bulk, front/pop). Capacity is a power of two, so indices wrap with
// a mask. The write index and the read index live on separate cache lines, and each side keeps a
// private copy of the other side's index so it reads the shared one only when its copy says the
// ring looks full (producer) or empty (consumer): in steady state each side touches one shared
// cache line per bulk operation, not per item.
//
// Memory ordering, the whole argument:
//  - The producer writes slots, then publishes them with a release store of write_index_.
//  - The consumer's acquire load of write_index_ therefore sees those slot writes.
//  - The consumer reads slots, then frees them with a release store of read_index_.
//  - The producer's acquire load of read_index_ therefore orders its later overwrite of a slot
//    after the consumer's read of it.
//  - Each side reads its own index with relaxed ordering: only it ever writes it.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <stdexcept>
#include <type_traits>

namespace efu {

inline constexpr std::size_t kCacheLine = 64;

template <typename T>
class SpscRing {
  static_assert(std::is_trivially_copyable_v<T>, "ring items are copied with plain assignment");

 public:
  /// `capacity` is rounded up to a power of two (at least 2).
  explicit SpscRing(std::size_t capacity)
      : capacity_(std::bit_ceil(capacity < 2 ? std::size_t{2} : capacity)),
        mask_(capacity_ - 1),
        slots_(std::make_unique<T[]>(capacity_)) {}

  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  std::size_t capacity() const noexcept { return capacity_; }

  // ---- producer side -------------------------------------------------------------------------

  /// Returns false (and changes nothing) when the ring is full.
  bool try_push(const T& item) noexcept {
    const std::size_t write = write_index_.load(std::memory_order_relaxed);  // own index
    if (write - cached_read_index_ == capacity_) {
      cached_read_index_ = read_index_.load(std::memory_order_acquire);  // see consumer's frees
      if (write - cached_read_index_ == capacity_) return false;
    }
    slots_[write & mask_] = item;
    write_index_.store(write + 1, std::memory_order_release);  // publish the slot
    return true;
  }

  /// Pushes as many of `items` as fit, in order; returns how many.
  std::size_t push_bulk(std::span<const T> items) noexcept {
    const std::size_t write = write_index_.load(std::memory_order_relaxed);  // own index
    std::size_t free_slots = capacity_ - (write - cached_read_index_);
    if (free_slots < items.size()) {
      cached_read_index_ = read_index_.load(std::memory_order_acquire);  // see consumer's frees
      free_slots = capacity_ - (write - cached_read_index_);
    }
    const std::size_t n = items.size() < free_slots ? items.size() : free_slots;
    for (std::size_t i = 0; i < n; ++i) slots_[(write + i) & mask_] = items[i];
    if (n != 0) write_index_.store(write + n, std::memory_order_release);  // publish all n
    return n;
  }

  /// Slots free for the producer now: at least this many items fit the next push (the consumer
  /// only ever frees more). It reads read_index_ with the same acquire load as push_bulk does
  /// when its copy says "full", and for the same reason: the slots it counts as free may be
  /// overwritten next, after the consumer's reads of them.
  std::size_t free_space() noexcept {
    const std::size_t write = write_index_.load(std::memory_order_relaxed);  // own index
    cached_read_index_ = read_index_.load(std::memory_order_acquire);        // see consumer's frees
    return capacity_ - (write - cached_read_index_);
  }

  // ---- consumer side -------------------------------------------------------------------------

  /// Returns false when the ring is empty.
  bool try_pop(T& item) noexcept {
    const std::size_t read = read_index_.load(std::memory_order_relaxed);  // own index
    if (read == cached_write_index_) {
      cached_write_index_ = write_index_.load(std::memory_order_acquire);  // see producer's writes
      if (read == cached_write_index_) return false;
    }
    item = slots_[read & mask_];
    read_index_.store(read + 1, std::memory_order_release);  // free the slot
    return true;
  }

  /// Pops up to out.size() items, in order; returns how many.
  std::size_t pop_bulk(std::span<T> out) noexcept {
    const std::size_t read = read_index_.load(std::memory_order_relaxed);  // own index
    std::size_t available = cached_write_index_ - read;
    if (available < out.size()) {
      cached_write_index_ = write_index_.load(std::memory_order_acquire);  // see producer's writes
      available = cached_write_index_ - read;
    }
    const std::size_t n = out.size() < available ? out.size() : available;
    for (std::size_t i = 0; i < n; ++i) out[i] = slots_[(read + i) & mask_];
    if (n != 0) read_index_.store(read + n, std::memory_order_release);  // free all n
    return n;
  }

  // ---- either side ---------------------------------------------------------------------------

  /// Items in the ring. Exact on the consumer side; from any other thread a snapshot that may be
  /// stale by the time it is used (fine for a fill-level gauge).
  std::size_t size() const noexcept {
    const std::size_t read = read_index_.load(std::memory_order_acquire);
    const std::size_t write = write_index_.load(std::memory_order_acquire);
    return write - read;
  }
  bool empty() const noexcept { return size() == 0; }

 private:
  const std::size_t capacity_;
  const std::size_t mask_;
  const std::unique_ptr<T[]> slots_;

  // Producer's line: its own index and its cached copy of the consumer's.
  alignas(kCacheLine) std::atomic<std::size_t> write_index_{0};
  std::size_t cached_read_index_ = 0;
  // Consumer's line: its own index and its cached copy of the producer's.
  alignas(kCacheLine) std::atomic<std::size_t> read_index_{0};
  std::size_t cached_write_index_ = 0;
  // Keep whatever follows the ring off the consumer's line.
  char padding_[kCacheLine - 2 * sizeof(std::size_t)] = {};
};

}  // namespace efu
