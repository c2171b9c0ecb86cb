// Waking a sleeping processing thread without a syscall per packet (docs/architecture.md §3.6).
//
// A processing thread with nothing to do spins for a while or not at all (its wait policy,
// processor.cpp), then sleeps on a futex; a receive thread that has just pushed packets calls
// notify(), which costs one read-modify-write on a cache line it owns while the consumer is
// awake, and a FUTEX_WAKE only when it announced that it sleeps. So a busy data path makes no
// extra syscall and an idle efu wakes only for its tick timer.
//
// The lost-wakeup argument. Both sides make a seq_cst read-modify-write on `sleeping_` (no
// stand-alone fences: ThreadSanitizer does not model them, and an RMW is no dearer on x86):
//   consumer: seen = epoch; sleeping.exchange(1); if (work visible) cancel; else
//             futex_wait(epoch, seen)
//   producer: publish work (ring push, release); if (sleeping.fetch_add(0) != 0) {
//             ++epoch; futex_wake }
// RMWs on one variable are totally ordered and each reads the latest value. If the producer's
// RMW comes first, it reads 0 and does not wake, but the consumer's exchange (acquire) reads
// the value the producer's RMW (release) wrote, so everything the producer did before it, the
// push included, is visible to the consumer's check, which cancels the sleep. If the consumer's
// exchange comes first, the producer reads 1 and wakes it; and if that wake lands between the
// consumer's check and its futex_wait, the epoch has already moved past `seen`, so the kernel
// refuses to sleep (EAGAIN). A timeout bounds every sleep anyway (ticks).
//
// A notify() that wakes the consumer also notes when (notified_ns()): the adaptive wait
// (processor.cpp) measures the gap between packets from it, since the consumer's own clock after
// the wake-up adds the wake-up's latency to the gap. One vDSO clock read, only on the path that
// makes a syscall anyway.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>

namespace efu {

/// Nanoseconds of CLOCK_MONOTONIC (std::chrono::steady_clock, read through the vDSO): the time
/// base of ticks, waits and wake-ups.
/// Inline: the wake-up path of every receive backend's library calls it.
inline std::uint64_t steady_now_ns() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

class Wakeup {
 public:
  /// Producer side, after publishing work. Cheap while the consumer is awake.
  void notify() noexcept {
    // acq_rel would do; seq_cst states the pairing with sleep()'s exchange.
    if (sleeping_.fetch_add(0, std::memory_order_seq_cst) != 0) {
      // Relaxed: the time is an estimate for the consumer, which takes its own clock instead
      // when this value is older than its wait (a stale or not yet visible store).
      notified_ns_.store(steady_now_ns(), std::memory_order_relaxed);
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
    sleeping_.exchange(1, std::memory_order_seq_cst);  // pairs with notify()'s fetch_add
    if (!has_work()) {
      timespec ts{static_cast<time_t>(timeout_ns / 1'000'000'000),
                  static_cast<long>(timeout_ns % 1'000'000'000)};
      futex(FUTEX_WAIT_PRIVATE, seen, &ts);
    }
    sleeping_.store(0, std::memory_order_relaxed);
  }

  /// How many notify() calls made a syscall (for tests and the idle counters).
  std::uint64_t wakes() const noexcept { return wakes_.load(std::memory_order_relaxed); }

  /// steady_now_ns() of the last notify() that found the consumer asleep (0: none yet).
  std::uint64_t notified_ns() const noexcept {
    return notified_ns_.load(std::memory_order_relaxed);
  }

 private:
  long futex(int op, std::uint32_t value, const timespec* timeout) noexcept {
    // The futex word is the epoch's 32-bit value; std::atomic<uint32_t> is lock-free and has
    // the same representation.
    return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&epoch_), op, value, timeout,
                   nullptr, 0);
  }

  alignas(64) std::atomic<std::uint32_t> epoch_{0};
  std::atomic<std::uint32_t> sleeping_{0};
  std::atomic<std::uint64_t> wakes_{0};  // written by producers only (one per consumer's lanes)
  std::atomic<std::uint64_t> notified_ns_{0};  // written by producers, when they wake
};

static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));

}  // namespace efu
