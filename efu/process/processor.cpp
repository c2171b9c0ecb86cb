#include "process/processor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <span>
#include <thread>

#include <spdlog/spdlog.h>

#include "efu/cpu_relax.h"
#include "efu/errors.h"

namespace efu {
namespace {

// Waiting with nothing to do. Spinning through a gap of g ns costs g ns of CPU and adds no
// latency; sleeping costs one sleep and wake-up (C: the futex_wait, being switched out and back
// in, and the receive thread's FUTEX_WAKE) whatever the gap, and adds the wake-up's latency. Per
// gap the cheaper one is
//   spin if g < C, else sleep,
// which keeps a thread's CPU within busy + min(g, C) per gap. The gap is not known in advance:
// WaitPolicy::kAdaptive takes the mean of the last gaps (GapAverage) as the next one, with
// C = kAdaptiveSpinNs, and when it spins, spins at most C before it sleeps after all (a gap that
// turned out long then costs at most C more than sleeping at once would have).
//
// C on this project's VM (2 vCPUs, Linux 6.18; benchmarks/host/wakeup_cost.cpp, figures in
// benchmarks/results/wait-policy/): with the receive and processing threads on one core, 2.9 to
// 3.4 us for both sides at gaps of 10 to 50 us (the sleeping thread 2.0, the waking one 1.2).
// kAdaptiveSpinNs is that rounded up to 5 us: through a gap of 3 to 5 us a spin costs at most
// 2 us more than a sleep would, and spares the packet a 2.3 us wake-up latency. Across cores
// this VM (a nested hypervisor) takes 17 to 38 us; a server's own cores take a few us, as one
// core does here, so the threshold is not raised for it (docs/host.md "Waiting for packets").
//
// WaitPolicy::kSpin is the old fixed wait: spin kSpinNs after work, so that at rates of tens of
// kHz the next batch arrives within it and the receive thread never has to wake this one; it
// suits a core given to efu alone, and costs a whole core at any rate above 10 kHz. Spinning
// yields now and then so a receive thread sharing the core can run. A sleep that ends with
// nothing to do goes straight back to sleep (no new spin), so an idle efu wakes only for its
// ticks under every policy.
constexpr std::uint64_t kSpinNs = 100'000;
constexpr unsigned kPollsPerYield = 64;

}  // namespace

WaitPolicy parse_wait_policy(const std::string& text) {
  if (text == "adaptive") return WaitPolicy::kAdaptive;
  if (text == "spin") return WaitPolicy::kSpin;
  if (text == "sleep") return WaitPolicy::kSleep;
  throw ConfigError("--wait-policy: '" + text +
                    "' is not a policy; expected adaptive, spin or sleep");
}

Processor::Processor(std::vector<Lane*> lanes, Pipeline& pipeline, EventOutput& events,
                     RawOutput* raw, const ProcessorConfig& config, CounterRegistry& counters)
    : lanes_(std::move(lanes)),
      pipeline_(pipeline),
      events_(events),
      raw_(config.raw_sample_every == 0 ? nullptr : raw),
      config_(config),
      refs_(config.batch_size),
      views_(config.batch_size),
      slots_(config.batch_size),
      raw_countdown_(config.raw_sample_every),
      gaps_(config.adaptive_spin_ns),
      packets_(counters.counter("process.packets")),
      batches_(counters.counter("process.batches")),
      exceptions_(counters.counter("process.errors.exception")),
      raw_samples_(counters.counter("process.raw_samples")),
      idle_ns_(counters.counter("process.idle_ns")),
      busy_ns_(counters.counter("process.busy_ns")),
      sleeps_(counters.counter("process.sleeps")) {
  for (Lane* lane : lanes_) {
    lane->wakeup = &wakeup_;
    if (lane->chains != nullptr)
      gather_stride_ = std::max<std::size_t>(gather_stride_, lane->chain_max_size);
  }
  gathered_.resize(gather_stride_ * config.batch_size);
}

bool Processor::lanes_empty() const noexcept {
  for (const Lane* lane : lanes_) {
    if (!lane->packets.empty()) return false;
  }
  return true;
}

std::size_t Processor::process_batch() {
  std::size_t n = 0;
  Lane* lane = nullptr;
  for (std::size_t tried = 0; tried < lanes_.size() && n == 0; ++tried) {
    lane = lanes_[next_lane_];
    next_lane_ = next_lane_ + 1 == lanes_.size() ? 0 : next_lane_ + 1;
    n = lane->packets.pop_bulk(std::span(refs_));
  }
  if (n == 0) return 0;
  const PacketPool& pool = *lane->pool;
  const SlotChain* chains = lane->chains;
  for (std::size_t i = 0; i < n; ++i) {
    const PacketRef& r = refs_[i];
    if (chains != nullptr && (r.offset & kChainedOffset) != 0) [[unlikely]] {
      // A datagram in several slots: gathered here, on the processing thread, so that the
      // receive thread never touches the payload.
      const SlotChain& c = chains[r.slot];
      std::uint8_t* out = gathered_.data() + i * gather_stride_;
      std::size_t size = 0;
      for (std::uint32_t k = 0; k < c.pieces && size + c.size[k] <= gather_stride_; ++k) {
        std::memcpy(out + size, pool.data(c.slot[k]) + c.offset[k], c.size[k]);
        size += c.size[k];
      }
      views_[i] = PacketView{out, static_cast<std::uint32_t>(size), &pool.source(r.slot)};
      continue;
    }
    views_[i] = PacketView{pool.data(r.slot) + r.offset, r.size, &pool.source(r.slot)};
  }
  try {
    pipeline_.process(PacketBatch(views_.data(), n));
  } catch (...) {
    // A pipeline must not throw; if one does (whatever it throws), the batch is counted and
    // efu keeps running. No log line here: the loss warning reports the counter.
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
  // A slot goes back once its last datagram is done (with UDP GRO several share one). The
  // return ring holds the whole pool, so this push always takes everything.
  std::size_t freed = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (release_segment(pool, refs_[i].slot)) slots_[freed++] = refs_[i].slot;
  }
  lane->returned.push_bulk(std::span<const std::uint32_t>(slots_.data(), freed));
  packets_.add(n);
  batches_.add();
  return n;
}

void Processor::maybe_tick(std::uint64_t now_ns) {
  if (now_ns < next_tick_ns_) return;
  next_tick_ns_ = now_ns + config_.tick_interval_ns;
  tick_waiting_since_ns_ = 0;
  try {
    pipeline_.tick(now_ns);
  } catch (...) {
    exceptions_.add();
  }
  events_.tick(now_ns);
}

void Processor::tick_when_caught_up(std::uint64_t now_ns) {
  // A due tick waits while packets wait, so that a thread that was kept off its core works off
  // what queued meanwhile first: a plugin's idle timeout (multiblade's --cluster-timeout-ms) then
  // measures a silence of the data, not of this thread. Under a load that never lets the lanes
  // empty, the tick comes after one tick interval of work.
  if (lanes_empty()) {
    maybe_tick(now_ns);
  } else if (tick_waiting_since_ns_ == 0) {
    tick_waiting_since_ns_ = now_ns;
  } else if (now_ns - tick_waiting_since_ns_ >= config_.tick_interval_ns) {
    maybe_tick(now_ns);
  }
}

std::uint64_t Processor::spin_budget_ns() const noexcept {
  switch (config_.wait_policy) {
    case WaitPolicy::kSpin:
      return kSpinNs;
    case WaitPolicy::kSleep:
      return 0;
    case WaitPolicy::kAdaptive:
      break;
  }
  return gaps_.mean_ns() < config_.adaptive_spin_ns ? config_.adaptive_spin_ns : 0;
}

void Processor::end_wait(std::uint64_t idle_since, std::uint64_t now) noexcept {
  idle_ns_.add(now - idle_since);
  // After a sleep, the work arrived when the receive thread woke this one, not when this thread
  // got its core back; a wake-up from before this wait (or none) leaves the thread's own clock.
  const std::uint64_t notified = wakeup_.notified_ns();
  const std::uint64_t arrived = notified > idle_since && notified < now ? notified : now;
  gaps_.add(arrived - idle_since);
}

void Processor::wait_once(std::uint64_t now, std::uint64_t spin_until, unsigned empty_polls,
                          const std::atomic<bool>& input_done) {
  if (now < spin_until) {
    if (empty_polls % kPollsPerYield == 0) {
      std::this_thread::yield();
    } else {
      cpu_relax();
    }
    return;
  }
  const std::uint64_t until_tick = next_tick_ns_ > now ? next_tick_ns_ - now : 0;
  sleeps_.add();
  wakeup_.sleep(until_tick,
                [&] { return !lanes_empty() || input_done.load(std::memory_order_acquire); });
}

void Processor::run(const std::atomic<bool>& input_done) {
  unsigned empty_polls = 0;
  std::uint64_t idle_since = 0;
  std::uint64_t busy_since = steady_now_ns();
  std::uint64_t spin_until = 0;  // after work: spin until then before sleeping (0: not decided)
  for (;;) {
    const std::uint64_t now = steady_now_ns();
    if (now >= next_tick_ns_) tick_when_caught_up(now);
    if (process_batch() != 0) {
      if (empty_polls != 0) {
        end_wait(idle_since, now);
        busy_since = now;
        empty_polls = 0;
      }
      spin_until = 0;
      continue;
    }
    // input_done is set after the receive threads' last push, so empty lanes seen after it are
    // final.
    if (input_done.load(std::memory_order_acquire) && lanes_empty()) break;
    if (empty_polls++ == 0) {
      idle_since = now;
      busy_ns_.add(now - busy_since);
      if (spin_until == 0) spin_until = now + spin_budget_ns();
    }
    wait_once(now, spin_until, empty_polls, input_done);
  }
  const std::uint64_t end = steady_now_ns();
  if (empty_polls == 0) {
    busy_ns_.add(end - busy_since);
  } else {
    idle_ns_.add(end - idle_since);
  }
  try {
    pipeline_.flush();
  } catch (...) {
    exceptions_.add();
    spdlog::error("pipeline flush failed: {}", current_exception_text());
  }
  events_.flush();
}

}  // namespace efu
