// A processing thread's loop: drain its lanes, call the plugin pipeline, give the slots back.
// The only processing loop in efu: plugins provide stages, never loops (docs/architecture.md
// §1.2).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "process/data_path.h"
#include "efu/outputs.h"
#include "efu/plugin.h"
#include "process/wakeup.h"

namespace efu {

/// How a processing thread waits when its lanes are empty (--wait-policy; docs/host.md
/// "Waiting for packets").
enum class WaitPolicy : std::uint8_t {
  kAdaptive,  // spin only while the recent gaps between packets are shorter than a sleep costs
  kSpin,      // spin 100 us after every batch, then sleep: for cores given to efu alone
  kSleep,     // sleep as soon as the lanes are empty
};

/// "adaptive", "spin" or "sleep"; anything else throws ConfigError naming --wait-policy.
WaitPolicy parse_wait_policy(const std::string& text);

/// WaitPolicy::kAdaptive spins through a gap only when the recent gaps are shorter than this:
/// what one sleep and wake-up cost in CPU, both sides (3.4 us measured here, rounded up; the
/// reasoning and the measurement are in processor.cpp and docs/host.md). It is also the longest
/// such spin.
inline constexpr std::uint64_t kAdaptiveSpinNs = 5'000;

struct ProcessorConfig {
  unsigned batch_size = 64;            // packets handed to Pipeline::process() at most
  std::uint32_t raw_sample_every = 0;  // every Nth packet to the RawOutput (0: none)
  std::uint64_t tick_interval_ns = 10'000'000;
  WaitPolicy wait_policy = WaitPolicy::kAdaptive;
  std::uint64_t adaptive_spin_ns = kAdaptiveSpinNs;  // the threshold (tests raise it)
};

/// The adaptive policy's estimate of the next gap between packets: an exponentially weighted
/// mean of the gaps of the last waits, the newest weighing 1/8 (about the last 8 count). A
/// gap enters capped at 8 thresholds, so one long silence (a 10 ms tick) says "long" without
/// outweighing what follows: from the cap, 16 short gaps bring the mean back under the
/// threshold. It starts at the cap: an efu starts idle.
class GapAverage {
 public:
  explicit GapAverage(std::uint64_t threshold_ns) noexcept
      : cap_(8 * threshold_ns), mean_(static_cast<std::int64_t>(cap_)) {}

  //   mean <- mean + (min(gap, cap) - mean) / 8
  void add(std::uint64_t gap_ns) noexcept {
    const auto gap = static_cast<std::int64_t>(std::min(gap_ns, cap_));
    mean_ += (gap - mean_) / 8;
  }
  std::uint64_t mean_ns() const noexcept { return static_cast<std::uint64_t>(mean_); }

 private:
  std::uint64_t cap_;
  std::int64_t mean_;
};

class Processor {
 public:
  /// `lanes`: one from each receive thread. Sets each lane's wakeup to this processor's.
  Processor(std::vector<Lane*> lanes, Pipeline& pipeline, EventOutput& events, RawOutput* raw,
            const ProcessorConfig& config, CounterRegistry& counters);

  /// Pops up to one batch from the next non-empty lane (round robin), runs the pipeline on it
  /// and gives the slots back. Returns the number of packets processed (0: every lane empty).
  std::size_t process_batch();

  /// Time-based work: Pipeline::tick() and EventOutput::tick(), at most every tick interval.
  void maybe_tick(std::uint64_t now_ns);

  /// What run() does when a tick is due: tick if the lanes are empty; if packets wait, tick
  /// only once the tick has waited a whole tick interval (the thread works them off first).
  void tick_when_caught_up(std::uint64_t now_ns);

  /// Loops until `input_done` is set (every receive thread has stopped) and the lanes are
  /// empty, then lets the pipeline and the event output flush. With nothing to do it waits as
  /// its WaitPolicy says: it spins for a while or not at all, then sleeps until a receive
  /// thread wakes it or the next tick is due.
  void run(const std::atomic<bool>& input_done);

  /// The receive threads notify this after pushing (Lane::wakeup); the runner after input_done.
  Wakeup& wakeup() noexcept { return wakeup_; }

 private:
  bool lanes_empty() const noexcept;
  /// How long to spin at the start of a wait before sleeping (0: sleep at once).
  std::uint64_t spin_budget_ns() const noexcept;
  /// Work found at `now` after a wait that began at `idle_since`: counts the idle time and
  /// gives the gap to the adaptive estimate.
  void end_wait(std::uint64_t idle_since, std::uint64_t now) noexcept;
  /// One poll of a wait that found the lanes empty: spin (yielding now and then) until
  /// `spin_until`, then sleep until woken or the next tick.
  void wait_once(std::uint64_t now, std::uint64_t spin_until, unsigned empty_polls,
                 const std::atomic<bool>& input_done);

  std::vector<Lane*> lanes_;
  std::size_t next_lane_ = 0;
  Pipeline& pipeline_;
  EventOutput& events_;
  RawOutput* raw_;
  ProcessorConfig config_;
  Wakeup wakeup_;

  std::vector<PacketRef> refs_;
  std::vector<PacketView> views_;
  std::vector<std::uint32_t> slots_;
  std::vector<std::uint8_t> gathered_;  // chained datagrams, one chain_max_size each per batch
  std::size_t gather_stride_ = 0;
  std::uint32_t raw_countdown_;
  std::uint64_t next_tick_ns_ = 0;
  std::uint64_t tick_waiting_since_ns_ = 0;  // when a due tick found packets waiting (0: not)
  GapAverage gaps_;

  Counter& packets_;
  Counter& batches_;
  Counter& exceptions_;
  Counter& raw_samples_;
  Counter& idle_ns_;
  Counter& busy_ns_;
  Counter& sleeps_;
};

}  // namespace efu
