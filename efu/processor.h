// A processing thread's loop: drain its lanes, call the plugin pipeline, give the slots back.
// The only processing loop in efu: plugins provide stages, never loops (design.md §1).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "data_path.h"
#include "efu/outputs.h"
#include "efu/plugin.h"
#include "wakeup.h"

namespace efu {

struct ProcessorConfig {
  unsigned batch_size = 64;            // packets handed to Pipeline::process() at most
  std::uint32_t raw_sample_every = 0;  // every Nth packet to the RawOutput (0: none)
  std::uint64_t tick_interval_ns = 10'000'000;
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
  /// empty, then lets the pipeline and the event output flush. With nothing to do it spins
  /// briefly, then sleeps until a receive thread wakes it or the next tick is due.
  void run(const std::atomic<bool>& input_done);

  /// The receive threads notify this after pushing (Lane::wakeup); the runner after input_done.
  Wakeup& wakeup() noexcept { return wakeup_; }

 private:
  bool lanes_empty() const noexcept;

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

  Counter& packets_;
  Counter& batches_;
  Counter& exceptions_;
  Counter& raw_samples_;
  Counter& idle_ns_;
  Counter& sleeps_;
};

/// Nanoseconds of CLOCK_MONOTONIC (std::chrono::steady_clock): the time base of tick().
std::uint64_t steady_now_ns() noexcept;

}  // namespace efu
