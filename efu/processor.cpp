#include "processor.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <exception>
#include <span>
#include <thread>

namespace efu {
namespace {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Waiting with nothing to do: spin briefly (lowest latency), yield a few times, then sleep.
// The spin is kept short on purpose: on a machine with few cores a spinning processing thread
// takes CPU from the receiver, and the receiver is what loses packets. A 50 us sleep is
// harmless downstream of a ring that holds thousands of packets, and the next batch is larger.
constexpr unsigned kSpinPolls = 64;
constexpr unsigned kYieldPolls = 72;
constexpr auto kIdleSleep = std::chrono::microseconds(50);

}  // namespace

std::uint64_t steady_now_ns() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

Processor::Processor(Lane& lane, const PacketPool& pool, Pipeline& pipeline, EventOutput& events,
                     RawOutput* raw, const ProcessorConfig& config, CounterRegistry& counters)
    : lane_(lane),
      pool_(pool),
      pipeline_(pipeline),
      events_(events),
      raw_(config.raw_sample_every == 0 ? nullptr : raw),
      config_(config),
      refs_(config.batch_size),
      views_(config.batch_size),
      slots_(config.batch_size),
      raw_countdown_(config.raw_sample_every),
      packets_(counters.counter("process.packets")),
      batches_(counters.counter("process.batches")),
      exceptions_(counters.counter("process.errors.exception")),
      raw_samples_(counters.counter("process.raw_samples")),
      idle_ns_(counters.counter("process.idle_ns")) {}

std::size_t Processor::process_batch() {
  const std::size_t n = lane_.packets.pop_bulk(std::span(refs_));
  if (n == 0) return 0;
  for (std::size_t i = 0; i < n; ++i) {
    views_[i] = PacketView{pool_.data(refs_[i].slot), refs_[i].size, &pool_.source(refs_[i].slot)};
    slots_[i] = refs_[i].slot;
  }
  try {
    pipeline_.process(PacketBatch(views_.data(), n));
  } catch (const std::exception&) {
    // A pipeline must not throw; if one does, the batch is counted and efu keeps running.
    exceptions_.add();
  }
  if (raw_ != nullptr) {
    for (std::size_t i = 0; i < n; ++i) {
      if (--raw_countdown_ == 0) {
        raw_countdown_ = config_.raw_sample_every;
        raw_->sample(views_[i].data, views_[i].size);
        raw_samples_.add();
      }
    }
  }
  // The return ring holds the whole pool, so this push always takes everything.
  lane_.returned.push_bulk(std::span<const std::uint32_t>(slots_.data(), n));
  packets_.add(n);
  batches_.add();
  return n;
}

void Processor::maybe_tick(std::uint64_t now_ns) {
  if (now_ns < next_tick_ns_) return;
  next_tick_ns_ = now_ns + config_.tick_interval_ns;
  try {
    pipeline_.tick(now_ns);
  } catch (const std::exception&) {
    exceptions_.add();
  }
  events_.tick(now_ns);
}

void Processor::run(const std::atomic<bool>& input_done) {
  unsigned empty_polls = 0;
  std::uint64_t idle_since = 0;
  for (;;) {
    const std::uint64_t now = steady_now_ns();
    maybe_tick(now);
    if (process_batch() != 0) {
      if (empty_polls != 0) {
        idle_ns_.add(now - idle_since);
        empty_polls = 0;
      }
      continue;
    }
    // input_done is set after the receiver's last push, so an empty lane seen after it is final.
    if (input_done.load(std::memory_order_acquire) && lane_.packets.empty()) break;
    if (empty_polls++ == 0) idle_since = now;
    if (empty_polls < kSpinPolls) {
      cpu_relax();
    } else if (empty_polls < kYieldPolls) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(kIdleSleep);
    }
  }
  if (empty_polls != 0) idle_ns_.add(steady_now_ns() - idle_since);
  try {
    pipeline_.flush();
  } catch (const std::exception& e) {
    exceptions_.add();
    spdlog::error("pipeline flush failed: {}", e.what());
  }
  events_.flush();
}

}  // namespace efu
