// EventBuffer (efu/event_buffer.h): a pipeline's events reach the sink in order, one
// add_pulse() per run of one pulse time, and nothing stays behind after flush().
#include "efu/event_buffer.h"

#include <tuple>
#include <vector>

#include <gtest/gtest.h>

namespace efu {
namespace {

using Event = std::tuple<std::uint64_t, std::uint32_t, std::uint32_t>;

/// Records every event and the length of every add_pulse() run.
class RecordingSink final : public EventSink {
 public:
  void add(std::uint64_t pulse, std::uint32_t tof, std::uint32_t pixel) override {
    events.emplace_back(pulse, tof, pixel);
    runs.push_back(1);
  }
  void add_pulse(std::uint64_t pulse, const std::uint32_t* tof, const std::uint32_t* pixel,
                 std::size_t n) override {
    for (std::size_t i = 0; i < n; ++i) events.emplace_back(pulse, tof[i], pixel[i]);
    runs.push_back(n);
  }
  std::vector<Event> events;
  std::vector<std::size_t> runs;
};

TEST(EventBuffer, OneRunPerPulseInOrder) {
  RecordingSink sink;
  EventBuffer buffer(sink);
  buffer.add(1000, 1, 10);
  buffer.add(1000, 2, 20);
  buffer.add(2000, 3, 30);  // a new pulse ends the first run
  buffer.add(1000, 4, 40);  // back to the previous pulse (a late readout): a run of its own
  buffer.add(1000, 5, 50);
  EXPECT_EQ(sink.runs, (std::vector<std::size_t>{2, 1}));
  EXPECT_EQ(buffer.size(), 2U);
  buffer.flush();
  EXPECT_EQ(buffer.size(), 0U);
  EXPECT_EQ(sink.runs, (std::vector<std::size_t>{2, 1, 2}));
  EXPECT_EQ(sink.events,
            (std::vector<Event>{
                {1000, 1, 10}, {1000, 2, 20}, {2000, 3, 30}, {1000, 4, 40}, {1000, 5, 50}}));
}

// add() of N events at once: the same events in the same order as N single add()s; a new pulse
// ends the run before them, and so does a buffer with fewer than N places left (here after
// 31 runs of eight and one single event, 249 of 256: the next eight start a new run).
TEST(EventBuffer, EventsAddedEightAtATimeKeepTheirOrder) {
  RecordingSink sink;
  EventBuffer buffer(sink);
  std::vector<Event> want;
  std::uint32_t next = 0;
  auto eight = [&](std::uint64_t pulse) {
    std::uint32_t tof[8], pixel[8];
    for (std::uint32_t i = 0; i < 8; ++i, ++next) {
      tof[i] = next;
      pixel[i] = next + 100;
      want.emplace_back(pulse, tof[i], pixel[i]);
    }
    buffer.add(pulse, tof, pixel);
  };
  buffer.add(500, 9999, 1);  // a single event of another pulse first
  want.emplace_back(500, 9999, 1);
  for (int run = 0; run < 31; ++run) eight(1000);
  buffer.add(1000, 7777, 2);
  want.emplace_back(1000, 7777, 2);
  EXPECT_EQ(buffer.size(), 249U);
  eight(1000);  // 8 > 256 − 249 places left
  EXPECT_EQ(buffer.size(), 8U);
  eight(2000);  // a new pulse
  buffer.flush();
  EXPECT_EQ(sink.runs, (std::vector<std::size_t>{1, 249, 8, 8}));
  EXPECT_EQ(sink.events, want);
}

TEST(EventBuffer, AFullBufferStartsANewRunOfTheSamePulse) {
  RecordingSink sink;
  EventBuffer buffer(sink);
  const std::size_t n = 2 * EventBuffer::kCapacity + 3;
  for (std::uint32_t i = 0; i < n; ++i) buffer.add(7, i, i + 1);
  buffer.flush();
  EXPECT_EQ(sink.runs,
            (std::vector<std::size_t>{EventBuffer::kCapacity, EventBuffer::kCapacity, 3}));
  ASSERT_EQ(sink.events.size(), n);
  for (std::uint32_t i = 0; i < n; ++i) EXPECT_EQ(sink.events[i], (Event{7, i, i + 1}));
}

TEST(EventBuffer, FlushOfAnEmptyBufferCallsNothing) {
  RecordingSink sink;
  EventBuffer buffer(sink);
  buffer.flush();
  buffer.add(0, 1, 2);  // pulse time 0 is an ordinary pulse time
  buffer.flush();
  buffer.flush();
  EXPECT_EQ(sink.runs, (std::vector<std::size_t>{1}));
  EXPECT_EQ(sink.events, (std::vector<Event>{{0, 1, 2}}));
}

/// A sink with add() only: the contract's default add_pulse() gives the same events, in order.
class AddOnlySink final : public EventSink {
 public:
  void add(std::uint64_t pulse, std::uint32_t tof, std::uint32_t pixel) override {
    events.emplace_back(pulse, tof, pixel);
  }
  std::vector<Event> events;
};

TEST(EventSink, DefaultAddPulseIsOneAddPerEvent) {
  AddOnlySink sink;
  const std::uint32_t tof[] = {5, 6, 7};
  const std::uint32_t pixel[] = {50, 60, 70};
  sink.add_pulse(99, tof, pixel, 3);
  sink.add_pulse(98, tof, pixel, 0);
  EXPECT_EQ(sink.events, (std::vector<Event>{{99, 5, 50}, {99, 6, 60}, {99, 7, 70}}));
}

}  // namespace
}  // namespace efu
