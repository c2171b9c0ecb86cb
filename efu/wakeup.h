// Waking a sleeping processing thread without a syscall per packet (design.md §3).
//
// A processing thread with nothing to do spins briefly, then sleeps on a futex; a receive thread
// that has just pushed packets calls notify(), which costs one fence and one load while the
// consumer is awake, and a FUTEX_WAKE only when it announced that it sleeps. So a busy data path
// makes no extra syscall and an idle efu wakes only for its tick timer.
//
// The lost-wakeup argument (the classic Dekker pairing, both sides with a seq_cst fence):
//   consumer: seen = epoch; sleeping = true; FENCE; if (work visible) cancel; else
//   futex_wait(epoch, seen) producer: publish work (ring push, release); FENCE; if (sleeping) {
//   ++epoch; futex_wake }
// The two fences are totally ordered. If the producer's fence comes first, the consumer's check
// after its own fence sees the pushed work and does not sleep. If the consumer's fence comes
// first, the producer's load after its fence sees sleeping == true and wakes it; and if that wake
// lands between the consumer's check and its futex_wait, the epoch has already moved past `seen`,
// so the kernel refuses to sleep (EAGAIN). A timeout bounds every sleep anyway (ticks).
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace efu {

class Wakeup {
 public:
  /// Producer side, after publishing work. Cheap while the consumer is awake.
  void notify() noexcept {
    std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with the fence in sleep()
    if (sleeping_.load(std::memory_order_relaxed)) {
      epoch_.fetch_add(1, std::memory_order_relaxed);
      futex(FUTEX_WAKE_PRIVATE, 1, nullptr);
      wakes_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  /// Consumer side: sleeps up to `timeout_ns` unless `has_work()` (checked after announcing the
  /// sleep) says there is something to do. Returns when woken, timed out or interrupted.
  template <typename HasWork>
  void sleep(std::uint64_t timeout_ns, HasWork&& has_work) noexcept {
    const std::uint32_t seen = epoch_.load(std::memory_order_relaxed);
    sleeping_.store(true, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with the fence in notify()
    if (!has_work()) {
      timespec ts{static_cast<time_t>(timeout_ns / 1'000'000'000),
                  static_cast<long>(timeout_ns % 1'000'000'000)};
      futex(FUTEX_WAIT_PRIVATE, seen, &ts);
    }
    sleeping_.store(false, std::memory_order_relaxed);
  }

  /// How many notify() calls made a syscall (for tests and the idle counters).
  std::uint64_t wakes() const noexcept { return wakes_.load(std::memory_order_relaxed); }

 private:
  long futex(int op, std::uint32_t value, const timespec* timeout) noexcept {
    // The futex word is the epoch's 32-bit value; std::atomic<uint32_t> is lock-free and has
    // the same representation.
    return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&epoch_), op, value, timeout,
                   nullptr, 0);
  }

  alignas(64) std::atomic<std::uint32_t> epoch_{0};
  std::atomic<bool> sleeping_{false};
  std::atomic<std::uint64_t> wakes_{0};  // written by producers only (one per consumer's lanes)
};

static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));

}  // namespace efu
