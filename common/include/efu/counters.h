// Named counters: the stats interface of every stage (docs/architecture.md §4.1).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace efu {

/// One 64-bit counter, written by exactly one thread and read by the stats publisher.
/// Because there is a single writer, add() is a relaxed load + relaxed store (no locked
/// read-modify-write); readers on other threads see a torn-free, possibly slightly old value.
/// Each counter has its own cache line so counters of different threads never share one.
class alignas(64) Counter {
 public:
  void add(std::uint64_t n = 1) noexcept {
    value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  /// For gauges (queue depth, ring fill): the current level, not a running total.
  void set(std::uint64_t v) noexcept { value_.store(v, std::memory_order_relaxed); }
  std::uint64_t get() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

enum class CounterKind : std::uint8_t {
  kCounter,  // monotonic total; the publisher derives a rate
  kGauge,    // a level; published as is
};

/// One sampled counter, summed over every instance registered under its name.
struct CounterSample {
  std::string name;
  CounterKind kind;
  std::uint64_t value;
};

/// Registry of hierarchical, stable counter names ("receive.packets", "kafka.delivery.failed").
/// Registration happens at start-up on the main thread; freeze() is called before any data
/// thread starts, after which registering throws. A name may be registered by several instances
/// (one pipeline per processing thread); the published value is their sum.
class CounterRegistry {
 public:
  Counter& counter(std::string_view name);
  Counter& gauge(std::string_view name);

  void freeze() noexcept { frozen_ = true; }
  bool frozen() const noexcept { return frozen_; }

  /// Sums instances by name; sorted by name. Safe to call from any thread after freeze().
  std::vector<CounterSample> sample() const;
  /// The summed value of one name (0 if unknown). For tests and summaries, not for hot paths.
  std::uint64_t value(std::string_view name) const;
  /// The first instance registered under `name`, or null. For tests and tools that read one
  /// counter often (a fuzz target checking each input's accounting), not for hot paths.
  const Counter* find(std::string_view name) const;

 private:
  struct Entry {
    std::string name;
    CounterKind kind;
    Counter* counter;
  };
  Counter& add(std::string_view name, CounterKind kind);

  std::deque<Counter> storage_;  // deque: stable addresses as it grows
  std::vector<Entry> entries_;
  bool frozen_ = false;
};

}  // namespace efu
