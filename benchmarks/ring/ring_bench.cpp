// ring_bench: items/s through efu::SpscRing between two threads, side by side with
// boost::lockfree::spsc_queue in the same binary, so both see the same machine load.
//
// Design (the same harness drives both queues, only the adapter differs):
//  - The benchmark thread is the consumer. Each iteration pops exactly kItemsPerIteration items.
//  - A producer std::thread is started per benchmark run (one call of the benchmark function),
//    pushes the sequence 0, 1, 2, ... as fast as the queue accepts it, and stops when the run
//    ends. It waits for a start flag set just before the timed loop, so thread start-up is not
//    timed and it gets no head start beyond what the queue can hold (4096 of ~1M items).
//  - Wall time (UseRealTime) is what counts: the rate is that of the slower side, i.e. of the
//    pipe, which is what the receiver -> processor hand-off needs.
//  - The consumer checks every item against the expected sequence number, so a ring that loses,
//    duplicates or reorders items fails the run (SkipWithError) instead of looking fast.
//  - A side that finds the queue full (producer) or empty (consumer) spins with a pause
//    instruction and yields every kSpinsPerYield tries: on a 2-core machine shared with builds,
//    pure spinning would burn the time slice the other side needs. Both queues get the same
//    policy. Every wait is bounded by kMaxRunTime so a broken queue cannot hang the run.
//  - Same capacity for both (4096). Boost gets its fastest form, the compile-time capacity.
//  - Optional pinning: EFU_RING_CPUS=P,C pins producer to CPU P and consumer to CPU C.
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <thread>

#include <benchmark/benchmark.h>
#include <boost/lockfree/spsc_queue.hpp>

#include "bench_affinity.h"
#include "efu/cpu_relax.h"
#include "efu/spsc_ring.h"

namespace efu {
namespace {

constexpr std::size_t kCapacity = 4096;
constexpr std::size_t kBulk = 64;
constexpr std::uint64_t kItemsPerIteration = 1u << 20;
constexpr unsigned kSpinsPerYield = 1024;
constexpr auto kMaxRunTime = std::chrono::seconds(60);

using Clock = std::chrono::steady_clock;

/// Waiting policy shared by both sides and both queues. Returns false once the run has lasted
/// kMaxRunTime; the clock is read only every kSpinsPerYield waits to stay off the fast path.
class Backoff {
 public:
  explicit Backoff(Clock::time_point deadline) : deadline_(deadline) {}
  bool wait() noexcept {
    cpu_relax();
    if (++spins_ < kSpinsPerYield) return true;
    spins_ = 0;
    std::this_thread::yield();
    return Clock::now() < deadline_;
  }
  void reset() noexcept { spins_ = 0; }

 private:
  Clock::time_point deadline_;
  unsigned spins_ = 0;
};

class EfuQueue {
 public:
  bool push(std::uint64_t v) noexcept { return ring_.try_push(v); }
  bool pop(std::uint64_t& v) noexcept { return ring_.try_pop(v); }
  std::size_t push(const std::uint64_t* p, std::size_t n) noexcept {
    return ring_.push_bulk(std::span<const std::uint64_t>(p, n));
  }
  std::size_t pop(std::uint64_t* p, std::size_t n) noexcept {
    return ring_.pop_bulk(std::span<std::uint64_t>(p, n));
  }

 private:
  SpscRing<std::uint64_t> ring_{kCapacity};
};

class BoostQueue {
 public:
  bool push(std::uint64_t v) noexcept { return queue_.push(v); }
  bool pop(std::uint64_t& v) noexcept { return queue_.pop(v); }
  std::size_t push(const std::uint64_t* p, std::size_t n) noexcept { return queue_.push(p, n); }
  std::size_t pop(std::uint64_t* p, std::size_t n) noexcept { return queue_.pop(p, n); }

 private:
  boost::lockfree::spsc_queue<std::uint64_t, boost::lockfree::capacity<kCapacity>> queue_;
};

/// CPUs from EFU_RING_CPUS="producer,consumer", or -1 for "leave it to the scheduler".
struct Pinning {
  int producer = -1;
  int consumer = -1;
};

Pinning pinning_from_env() {
  const std::vector<int> cpus = bench::cpus_from_env("EFU_RING_CPUS", 2, "0,1");
  Pinning p;
  p.producer = cpus[0];
  p.consumer = cpus[1];
  return p;
}

using bench::AffinityGuard;
using bench::pin_current_thread;

/// The producer's control flags, on their own cache line so the consumer's polling of them
/// does not share a line with either queue index.
struct alignas(kCacheLine) RunFlags {
  std::atomic<bool> start{false};
  std::atomic<bool> stop{false};
};

template <typename Queue, bool kBulkMode>
void produce(Queue& queue, RunFlags& flags, Clock::time_point deadline, int cpu) {
  pin_current_thread(cpu);
  while (!flags.start.load(std::memory_order_acquire)) {
    if (Clock::now() > deadline) return;
    cpu_relax();
  }
  Backoff backoff(deadline);
  std::uint64_t next = 0;
  if constexpr (kBulkMode) {
    std::uint64_t batch[kBulk];
    while (!flags.stop.load(std::memory_order_relaxed)) {
      for (std::size_t i = 0; i < kBulk; ++i) batch[i] = next + i;
      std::size_t done = 0;
      while (done < kBulk) {
        const std::size_t n = queue.push(batch + done, kBulk - done);
        done += n;
        if (n != 0) {
          backoff.reset();
        } else if (flags.stop.load(std::memory_order_relaxed) || !backoff.wait()) {
          return;
        }
      }
      next += kBulk;
    }
  } else {
    while (!flags.stop.load(std::memory_order_relaxed)) {
      if (queue.push(next)) {
        ++next;
        backoff.reset();
      } else if (!backoff.wait()) {
        return;
      }
    }
  }
}

template <typename Queue, bool kBulkMode>
void ring_throughput(benchmark::State& state) {
  const Pinning pins = pinning_from_env();
  AffinityGuard affinity;
  pin_current_thread(pins.consumer);

  // Heap-allocated: both queues hold their storage inline or behind a pointer; this keeps the
  // boost queue's 32 KiB array off the stack and both objects cache-line aligned.
  auto queue = std::make_unique<Queue>();
  RunFlags flags;
  const Clock::time_point deadline = Clock::now() + kMaxRunTime;
  std::thread producer(produce<Queue, kBulkMode>, std::ref(*queue), std::ref(flags), deadline,
                       pins.producer);

  Backoff backoff(deadline);
  std::uint64_t expected = 0;
  std::uint64_t mismatches = 0;
  bool timed_out = false;
  flags.start.store(true, std::memory_order_release);
  for (auto _ : state) {
    std::uint64_t remaining = kItemsPerIteration;
    if constexpr (kBulkMode) {
      std::uint64_t batch[kBulk];
      while (remaining != 0) {
        const std::size_t want = remaining < kBulk ? static_cast<std::size_t>(remaining) : kBulk;
        const std::size_t n = queue->pop(batch, want);
        if (n == 0) {
          if (!backoff.wait()) {
            timed_out = true;
            break;
          }
          continue;
        }
        backoff.reset();
        // Branch-free check so it costs the same for both queues and vectorises.
        for (std::size_t i = 0; i < n; ++i) mismatches += batch[i] != expected + i;
        expected += n;
        remaining -= n;
      }
    } else {
      while (remaining != 0) {
        std::uint64_t v = 0;
        if (!queue->pop(v)) {
          if (!backoff.wait()) {
            timed_out = true;
            break;
          }
          continue;
        }
        backoff.reset();
        mismatches += v != expected;
        ++expected;
        --remaining;
      }
    }
    if (timed_out || mismatches != 0) break;
  }
  flags.stop.store(true, std::memory_order_relaxed);
  producer.join();

  if (timed_out) {
    state.SkipWithError("queue stalled: no item for the whole run time limit");
  } else if (mismatches != 0) {
    state.SkipWithError("queue delivered items out of order, lost or duplicated");
  } else if (expected != state.iterations() * kItemsPerIteration) {
    state.SkipWithError("item count does not match the iterations");
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(expected));
  state.counters["capacity"] = static_cast<double>(kCapacity);
}

void register_all() {
  const auto add = [](const char* name, void (*fn)(benchmark::State&)) {
    benchmark::RegisterBenchmark(name, fn)->UseRealTime()->Unit(benchmark::kMillisecond);
  };
  add("ring/single/efu", ring_throughput<EfuQueue, false>);
  add("ring/single/boost", ring_throughput<BoostQueue, false>);
  add("ring/bulk64/efu", ring_throughput<EfuQueue, true>);
  add("ring/bulk64/boost", ring_throughput<BoostQueue, true>);
}

}  // namespace
}  // namespace efu

int main(int argc, char** argv) {
  efu::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
