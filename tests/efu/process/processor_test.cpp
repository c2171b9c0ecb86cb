#include "process/processor.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <span>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "efu/errors.h"

namespace efu {
namespace {

class RecordingPipeline final : public Pipeline {
 public:
  void process(PacketBatch batch) override {
    ++batches;
    for (const PacketView& p : batch) {
      std::uint64_t seq = 0;
      std::memcpy(&seq, p.data, sizeof(seq));
      seen.push_back(seq);
      if (seq == throw_on) throw std::runtime_error("bad packet");
    }
  }
  void tick(std::uint64_t) override {
    ++ticks;
    seen_at_tick.push_back(seen.size());
  }
  void flush() override { ++flushes; }
  std::vector<std::uint64_t> seen;
  std::vector<std::size_t> seen_at_tick;  // how many packets the pipeline had seen at each tick
  int batches = 0, ticks = 0, flushes = 0;
  std::uint64_t throw_on = ~0ULL;
};

class CountingOutput final : public EventOutput {
 public:
  void add(std::uint64_t, std::uint32_t, std::uint32_t) override {}
  void tick(std::uint64_t) override { ++ticks; }
  void flush() override { ++flushes; }
  int ticks = 0, flushes = 0;
};

class RecordingRaw final : public RawOutput {
 public:
  void sample(const std::uint8_t* data, std::uint32_t) override {
    std::uint64_t seq = 0;
    std::memcpy(&seq, data, sizeof(seq));
    samples.push_back(seq);
  }
  std::vector<std::uint64_t> samples;
};

struct Rig {
  Rig() : pool(256, 64), lane(64, pool) {}
  void push(std::uint64_t seq) {
    const auto slot = static_cast<std::uint32_t>(seq % pool.slots());
    std::memcpy(pool.data(slot), &seq, sizeof(seq));
    ASSERT_TRUE(lane.packets.try_push(PacketRef{slot, 8}));
  }
  CounterRegistry counters;
  PacketPool pool;
  Lane lane;
  RecordingPipeline pipeline;
  CountingOutput output;
};

TEST(Processor, PassesPacketsInOrderAndReturnsSlots) {
  Rig rig;
  Processor p({&rig.lane}, rig.pipeline, rig.output, nullptr, ProcessorConfig{16, 0, 1000},
              rig.counters);
  for (std::uint64_t i = 0; i < 40; ++i) rig.push(i);
  std::size_t total = 0;
  while (std::size_t n = p.process_batch()) total += n;
  EXPECT_EQ(total, 40u);
  ASSERT_EQ(rig.pipeline.seen.size(), 40u);
  for (std::uint64_t i = 0; i < 40; ++i) EXPECT_EQ(rig.pipeline.seen[i], i);
  EXPECT_EQ(rig.pipeline.batches, 3);  // 16 + 16 + 8
  EXPECT_EQ(rig.lane.returned.size(), 40u);
  EXPECT_EQ(rig.counters.value("process.packets"), 40u);
}

// The af_xdp backend in place: the pool is memory the socket owns (its UMEM), each datagram at
// its own offset in its slot; the pipeline sees exactly those bytes and the slots come back.
TEST(Processor, ReadsDatagramsAtTheirOffsetInAPoolOverMemoryItDoesNotOwn) {
  constexpr std::size_t kSlots = 8, kSlotSize = 4096;
  std::vector<std::uint8_t> memory(kSlots * kSlotSize, 0xEE);
  PacketPool pool(kSlots, kSlotSize, memory.data());
  ASSERT_EQ(pool.slot_size(), kSlotSize);
  ASSERT_EQ(pool.data(3), memory.data() + 3 * kSlotSize);
  Lane lane(16, pool);
  RecordingPipeline pipeline;
  CountingOutput output;
  CounterRegistry counters;
  for (std::uint32_t slot = 0; slot < kSlots; ++slot) {
    const std::uint64_t seq = 100 + slot;
    const std::uint16_t offset = static_cast<std::uint16_t>(256 + 42 + 8 * slot);
    std::memcpy(memory.data() + slot * kSlotSize + offset, &seq, sizeof(seq));
    ASSERT_TRUE(lane.packets.try_push(PacketRef{slot, 8, offset}));
  }
  Processor p({&lane}, pipeline, output, nullptr, ProcessorConfig{16, 0, 1000}, counters);
  EXPECT_EQ(p.process_batch(), kSlots);
  ASSERT_EQ(pipeline.seen.size(), kSlots);
  for (std::uint32_t slot = 0; slot < kSlots; ++slot) EXPECT_EQ(pipeline.seen[slot], 100 + slot);
  std::uint32_t back[kSlots];
  ASSERT_EQ(lane.returned.pop_bulk(std::span(back)), kSlots);
  for (std::uint32_t i = 0; i < kSlots; ++i) EXPECT_EQ(back[i], i);
}

// A jumbo frame in place: its bytes lie in three slots, in the order the chain gives. The
// pipeline sees them as one datagram; only the head slot comes back (the receive thread frees
// the others when it reuses the head).
TEST(Processor, GathersAChainedDatagramAndGivesBackItsHeadSlot) {
  constexpr std::size_t kSlots = 8, kSlotSize = 4096;
  std::vector<std::uint8_t> memory(kSlots * kSlotSize, 0xEE);
  PacketPool pool(kSlots, kSlotSize, memory.data());
  std::vector<SlotChain> chains(kSlots);
  Lane lane(16, pool);
  lane.chains = chains.data();
  lane.chain_max_size = 9000;
  RecordingPipeline pipeline;
  CountingOutput output;
  CounterRegistry counters;
  // Pieces in slots 5, 2, 6: 3798 + 3840 + 1334 = 8972 bytes, byte i of the datagram = i % 251.
  const std::uint32_t slot[3] = {5, 2, 6};
  const std::uint16_t offset[3] = {298, 256, 256}, size[3] = {3798, 3840, 1334};
  SlotChain& c = chains[5];
  c.pieces = 3;
  std::uint32_t at = 0;
  for (int k = 0; k < 3; ++k) {
    c.slot[k] = slot[k];
    c.offset[k] = offset[k];
    c.size[k] = size[k];
    for (std::uint32_t b = 0; b < size[k]; ++b, ++at) {
      memory[slot[k] * kSlotSize + offset[k] + b] = static_cast<std::uint8_t>(at % 251);
    }
  }
  const std::uint64_t seq = 7;
  std::memcpy(memory.data() + 1 * kSlotSize + 100, &seq, sizeof(seq));  // an ordinary one too
  ASSERT_TRUE(lane.packets.try_push(PacketRef{5, 8972, 298 | kChainedOffset}));
  ASSERT_TRUE(lane.packets.try_push(PacketRef{1, 8, 100}));

  struct Capture final : Pipeline {
    void process(PacketBatch batch) override {
      for (const PacketView& p : batch) datagrams.emplace_back(p.data, p.data + p.size);
    }
    std::vector<std::vector<std::uint8_t>> datagrams;
  } capture;
  Processor p({&lane}, capture, output, nullptr, ProcessorConfig{16, 0, 1000}, counters);
  EXPECT_EQ(p.process_batch(), 2u);
  ASSERT_EQ(capture.datagrams.size(), 2u);
  ASSERT_EQ(capture.datagrams[0].size(), 8972u);
  for (std::uint32_t i = 0; i < 8972; ++i) {
    ASSERT_EQ(capture.datagrams[0][i], i % 251) << "byte " << i;
  }
  ASSERT_EQ(capture.datagrams[1].size(), 8u);
  std::uint64_t got = 0;
  std::memcpy(&got, capture.datagrams[1].data(), sizeof(got));
  EXPECT_EQ(got, seq);
  std::uint32_t back[kSlots];
  ASSERT_EQ(lane.returned.pop_bulk(std::span(back)), 2u);
  EXPECT_EQ(back[0], 5u);
  EXPECT_EQ(back[1], 1u);
}

TEST(Processor, ExceptionFromPipelineIsCountedNotFatal) {
  Rig rig;
  rig.pipeline.throw_on = 3;
  Processor p({&rig.lane}, rig.pipeline, rig.output, nullptr, ProcessorConfig{4, 0, 1000},
              rig.counters);
  for (std::uint64_t i = 0; i < 8; ++i) rig.push(i);
  while (p.process_batch() != 0) {
  }
  EXPECT_EQ(rig.counters.value("process.errors.exception"), 1u);
  EXPECT_EQ(rig.counters.value("process.packets"), 8u);
  EXPECT_EQ(rig.lane.returned.size(), 8u);  // the slots of the failed batch come back too
}

TEST(Processor, SamplesEveryNthPacket) {
  Rig rig;
  RecordingRaw raw;
  Processor p({&rig.lane}, rig.pipeline, rig.output, &raw, ProcessorConfig{64, 10, 1000},
              rig.counters);
  for (std::uint64_t i = 0; i < 35; ++i) rig.push(i);
  while (p.process_batch() != 0) {
  }
  EXPECT_EQ(raw.samples, (std::vector<std::uint64_t>{9, 19, 29}));
  EXPECT_EQ(rig.counters.value("process.raw_samples"), 3u);
}

TEST(Processor, RunDrainsTheLaneAfterInputEndsThenFlushes) {
  Rig rig;
  Processor p({&rig.lane}, rig.pipeline, rig.output, nullptr, ProcessorConfig{8, 0, 1000},
              rig.counters);
  for (std::uint64_t i = 0; i < 50; ++i) rig.push(i);
  std::atomic<bool> done{true};  // input already ended: run() must still drain everything
  p.run(done);
  EXPECT_EQ(rig.pipeline.seen.size(), 50u);
  EXPECT_EQ(rig.pipeline.flushes, 1);
  EXPECT_EQ(rig.output.flushes, 1);
  EXPECT_GE(rig.pipeline.ticks, 1);
}

TEST(Processor, TicksAtMostOncePerInterval) {
  Rig rig;
  Processor p({&rig.lane}, rig.pipeline, rig.output, nullptr, ProcessorConfig{8, 0, 10'000'000},
              rig.counters);
  p.maybe_tick(100'000'000);
  p.maybe_tick(105'000'000);
  p.maybe_tick(110'000'000);
  EXPECT_EQ(rig.pipeline.ticks, 2);
  EXPECT_EQ(rig.output.ticks, 2);
}

TEST(Processor, ADueTickWaitsUntilThePacketsThatWaitedAreProcessed) {
  // A thread kept off its core finds its tick due and packets waiting: it processes them first,
  // so a plugin's idle timeout does not close groups whose next hits were already waiting.
  Rig rig;
  Processor p({&rig.lane}, rig.pipeline, rig.output, nullptr,
              ProcessorConfig{8, 0, 3'600'000'000'000ULL}, rig.counters);
  for (std::uint64_t i = 0; i < 50; ++i) rig.push(i);
  std::atomic<bool> done{true};
  p.run(done);
  ASSERT_EQ(rig.pipeline.seen.size(), 50u);
  ASSERT_EQ(rig.pipeline.ticks, 1);
  EXPECT_EQ(rig.pipeline.seen_at_tick[0], 50u) << "the tick came before the waiting packets";
  EXPECT_EQ(rig.output.ticks, 1);
}

class SlowPipeline final : public Pipeline {
 public:
  void process(PacketBatch batch) override {
    seen += batch.size();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  void tick(std::uint64_t) override { seen_at_tick.push_back(seen); }
  void flush() override {}
  std::size_t seen = 0;
  std::vector<std::size_t> seen_at_tick;
};

TEST(Processor, UnderALoadThatNeverEmptiesTheLanesTicksStillCome) {
  // Every batch takes at least 2 ms, the tick interval is 1 ms: a due tick that found packets
  // waiting comes after one interval of work, long before the 7 batches are done.
  Rig rig;
  SlowPipeline slow;
  Processor p({&rig.lane}, slow, rig.output, nullptr, ProcessorConfig{8, 0, 1'000'000},
              rig.counters);
  for (std::uint64_t i = 0; i < 50; ++i) rig.push(i);
  std::atomic<bool> done{true};
  p.run(done);
  EXPECT_EQ(slow.seen, 50u);
  ASSERT_GE(slow.seen_at_tick.size(), 2u);
  EXPECT_LT(slow.seen_at_tick[0], 50u) << "no tick while the lane was busy";
}

// ---- waiting: the wait policies ------------------------------------------------------------

TEST(WaitPolicy, ParsesTheThreeNamesAndRefusesOthersInOneLine) {
  EXPECT_EQ(parse_wait_policy("adaptive"), WaitPolicy::kAdaptive);
  EXPECT_EQ(parse_wait_policy("spin"), WaitPolicy::kSpin);
  EXPECT_EQ(parse_wait_policy("sleep"), WaitPolicy::kSleep);
  try {
    parse_wait_policy("busy");
    ADD_FAILURE() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "--wait-policy: 'busy' is not a policy; expected adaptive, spin or sleep");
  }
}

TEST(GapAverage, StartsLongAndSixteenShortGapsBringItUnderTheThreshold) {
  GapAverage gaps(1000);
  EXPECT_EQ(gaps.mean_ns(), 8000u);  // the cap: an efu starts idle
  for (int i = 0; i < 15; ++i) gaps.add(0);
  EXPECT_GE(gaps.mean_ns(), 1000u);
  gaps.add(0);
  EXPECT_LT(gaps.mean_ns(), 1000u);
  gaps.add(3'600'000'000'000ULL);  // an hour of silence enters as the cap
  EXPECT_LE(gaps.mean_ns(), 1000u + 8000u / 8);
  GapAverage steady(1000);
  for (int i = 0; i < 200; ++i) steady.add(400);
  EXPECT_NEAR(static_cast<double>(steady.mean_ns()), 400.0, 8.0);  // integer steps of 1/8
}

// A processing thread running on its own, fed by this thread as a receive thread feeds it: one
// packet at a time, each pushed (and the processor notified) once the one before is processed.
class RunningProcessor {
 public:
  RunningProcessor(Rig& rig, const ProcessorConfig& config)
      : rig_(rig),
        processor_({&rig.lane}, rig.pipeline, rig.output, nullptr, config, rig.counters) {
    rig.counters.freeze();
    thread_ = std::thread([this] { processor_.run(done_); });
  }
  ~RunningProcessor() {
    done_.store(true, std::memory_order_release);
    processor_.wakeup().notify();
    thread_.join();
  }

  /// Pushes `count` packets, each after `gap` once the one before was processed. False if the
  /// processor does not take one within 10 s.
  bool feed(std::uint64_t count, std::chrono::microseconds gap) {
    for (std::uint64_t i = 0; i < count; ++i) {
      if (gap.count() > 0) std::this_thread::sleep_for(gap);
      rig_.push(next_++);
      processor_.wakeup().notify();
      if (!wait_until([&] { return value("process.packets") == next_; })) return false;
      std::uint32_t slots[64];
      while (rig_.lane.returned.pop_bulk(std::span(slots)) != 0) {
      }
    }
    return true;
  }

  /// Waits up to 10 s for `done()`; false if it never came.
  template <typename Done>
  bool wait_until(Done&& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::yield();
    }
    return true;
  }

  std::uint64_t value(const char* name) const { return rig_.counters.find(name)->get(); }

 private:
  Rig& rig_;
  Processor processor_;
  std::atomic<bool> done_{false};
  std::thread thread_;
  std::uint64_t next_ = 0;
};

ProcessorConfig waiting_config(WaitPolicy policy, std::uint64_t threshold_ns) {
  ProcessorConfig c{8, 0, 3'600'000'000'000ULL};  // no tick during the test
  c.wait_policy = policy;
  c.adaptive_spin_ns = threshold_ns;
  return c;
}

TEST(Processor, TheAdaptiveWaitSleepsWhenPacketsComeWithLongGaps) {
  // Gaps of 2 ms, 400 times the default threshold: each one is slept through (at once, or
  // after a spin of at most the threshold if the estimate had said short).
  Rig rig;
  RunningProcessor p(rig, waiting_config(WaitPolicy::kAdaptive, kAdaptiveSpinNs));
  const std::uint64_t before = p.value("process.sleeps");
  ASSERT_TRUE(p.feed(10, std::chrono::microseconds(2000)));
  EXPECT_GE(p.value("process.sleeps") - before, 10u);
  EXPECT_EQ(rig.pipeline.seen.size(), 10u);
}

TEST(Processor, TheAdaptiveWaitSpinsWhilePacketsComeBackToBack) {
  // Back to back: each packet is pushed as soon as the one before is processed. The threshold
  // is raised to 200 ms so that this thread losing its core on a loaded machine does not make a
  // long gap. The estimate starts long (an efu starts idle), so the first waits sleep; within
  // 16 short gaps it says short, and from then on the thread spins through every gap.
  Rig rig;
  RunningProcessor p(rig, waiting_config(WaitPolicy::kAdaptive, 200'000'000));
  ASSERT_TRUE(p.feed(20, std::chrono::microseconds(0)));
  const std::uint64_t warmed_up = p.value("process.sleeps");
  EXPECT_GE(warmed_up, 1u) << "the idle thread never slept before the first packet";
  ASSERT_TRUE(p.feed(40, std::chrono::microseconds(0)));
  EXPECT_EQ(p.value("process.sleeps"), warmed_up) << "slept between back-to-back packets";
  EXPECT_EQ(p.value("process.packets"), 60u);
}

TEST(Processor, TheSleepPolicySleepsAfterEveryBatchEvenBackToBack) {
  // Under the same back-to-back feed (and the same raised threshold, which it ignores), the
  // sleep policy sleeps whenever the lane is empty: after each packet the thread goes back to
  // sleep, and the next packet is pushed once it has.
  Rig rig;
  RunningProcessor p(rig, waiting_config(WaitPolicy::kSleep, 200'000'000));
  for (int i = 0; i < 20; ++i) {
    const std::uint64_t sleeps = p.value("process.sleeps");
    ASSERT_TRUE(p.feed(1, std::chrono::microseconds(0)));
    ASSERT_TRUE(p.wait_until([&] { return p.value("process.sleeps") > sleeps; })) << i;
  }
  EXPECT_EQ(p.value("process.packets"), 20u);
}

TEST(Processor, BusyTimeHoldsThePipelinesWork) {
  // Every batch takes at least 2 ms (SlowPipeline sleeps that long at the least): the thread's
  // busy time holds at least those 7 batches' worth, and it is never counted as idle.
  Rig rig;
  SlowPipeline slow;
  Processor p({&rig.lane}, slow, rig.output, nullptr, ProcessorConfig{8, 0, 1'000'000},
              rig.counters);
  for (std::uint64_t i = 0; i < 50; ++i) rig.push(i);
  std::atomic<bool> done{true};
  p.run(done);
  EXPECT_GE(rig.counters.value("process.busy_ns"), 7u * 2'000'000u);
  EXPECT_EQ(rig.counters.value("process.idle_ns"), 0u);
}

}  // namespace
}  // namespace efu
