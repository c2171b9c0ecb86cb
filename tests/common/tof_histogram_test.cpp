// efu::da00::TofHistogram against cases worked by hand from the reference system's
// DA00HistogramSerializer (int32 signal, int32 axis, uint64 total; bin offset 0; Drop).
#include "efu/da00/tof_histogram.h"

#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "efu/errors.h"
#include "recorded_da00.h"

namespace efu::da00 {
namespace {

using Message = efu::test::RecordedArray;
using Variable = efu::test::RecordedVariable;
using RecordingSink = efu::test::RecordingHistogramSink;
Message copy(const DataArrayView& array) { return efu::test::record(array); }

constexpr std::uint64_t kP0 = 1'700'000'000'123'456'789ULL;  // a pulse time, ns since epoch

TofHistogramSpec spec(std::int32_t period, std::int32_t bins, std::uint32_t frames,
                      Aggregation aggregation = Aggregation::sum) {
  return {period, bins, frames, aggregation, "A"};
}

TEST(TofHistogram, EdgesAreMultiplesOfTheIntegerWidth) {
  // width = 20 / 3 = 6: edges 0, 6, 12, 18 (the last edge short of the period).
  TofHistogram h(spec(20, 3, 1));
  EXPECT_EQ(h.bin_width_ns(), 6);
  EXPECT_EQ(std::vector<std::int32_t>(h.edges().begin(), h.edges().end()),
            (std::vector<std::int32_t>{0, 6, 12, 18}));
  const Message m = copy(h.view());
  EXPECT_EQ(m.get("frame_time").values<std::int32_t>(), (std::vector<std::int32_t>{0, 6, 12, 18}));
}

TEST(TofHistogram, BinsByWidthAndDropsOutsideThePeriod) {
  TofHistogram h(spec(20, 3, 1));
  using Add = TofHistogram::Add;
  EXPECT_EQ(h.add(-1, 1), Add::before_offset);
  EXPECT_EQ(h.add(0, 1), Add::added);            // bin 0
  EXPECT_EQ(h.add(5, 2), Add::added);            // bin 0
  EXPECT_EQ(h.add(6, 4), Add::added);            // bin 1
  EXPECT_EQ(h.add(17, 8), Add::added);           // bin 2
  EXPECT_EQ(h.add(18, 16), Add::beyond_period);  // 18 / 6 = 3: past the last bin
  EXPECT_EQ(h.add(19, 16), Add::beyond_period);  // inside the period, past the last edge
  EXPECT_EQ(h.add(1'000'000'000'000, 16), Add::beyond_period);
  EXPECT_EQ(h.add(std::numeric_limits<std::int64_t>::min(), 16), Add::before_offset);
  const Message m = copy(h.view());
  EXPECT_EQ(m.signal(), (std::vector<std::int32_t>{3, 4, 8}));
  EXPECT_EQ(m.frame_total(), (std::vector<std::uint64_t>{15}));  // only what was binned
}

TEST(TofHistogram, AverageIsTheSumOverTheCountRoundedTowardsZero) {
  TofHistogram h(spec(100, 4, 1, Aggregation::average));
  h.add(1, 10);
  h.add(2, 11);  // bin 0: 21 / 2 = 10
  h.add(30, 7);  // bin 1: 7
  h.add(60, -3);
  h.add(61, -4);  // bin 2: -7 / 2 = -3 (the reference's unsigned division would not)
  const Message m = copy(h.view());
  EXPECT_EQ(m.signal(), (std::vector<std::int32_t>{10, 7, -3, 0}));
  // The frame total is the uint64 sum of the values as the reference adds them: -7 wraps.
  EXPECT_EQ(m.frame_total(), (std::vector<std::uint64_t>{10 + 11 + 7 - 7}));
}

TEST(TofHistogram, SumSaturatesAtTheInt32Range) {
  constexpr std::int32_t max = std::numeric_limits<std::int32_t>::max();
  constexpr std::int32_t min = std::numeric_limits<std::int32_t>::min();
  TofHistogram sum(spec(100, 2, 1));
  TofHistogram average(spec(100, 2, 1, Aggregation::average));
  for (TofHistogram* h : {&sum, &average}) {
    h->add(0, max);
    h->add(1, max);
    h->add(60, min);
    h->add(61, min);
  }
  EXPECT_EQ(copy(sum.view()).signal(), (std::vector<std::int32_t>{max, min}));
  EXPECT_EQ(copy(average.view()).signal(), (std::vector<std::int32_t>{max, min}));
}

TEST(TofHistogram, NegativeValuesWrapTheUnsignedFrameTotal) {
  TofHistogram h(spec(100, 1, 1));
  h.add(0, -1);
  EXPECT_EQ(copy(h.view()).frame_total(),
            (std::vector<std::uint64_t>{std::numeric_limits<std::uint64_t>::max()}));
}

TEST(TofHistogram, VariablesAreTheReferencesNamesTypesUnitsAndShapes) {
  TofHistogram h(spec(1000, 10, 3));
  const Message m = copy(h.view());
  ASSERT_EQ(m.variables.size(), 4U);
  const char* names[] = {"frame_time", "signal", "reference_time", "frame_total"};
  const char* units[] = {"ns", "A", "ns", "counts"};
  const char* axes[] = {"frame_time", "frame_time", "reference_time", "reference_time"};
  const std::int64_t shapes[] = {11, 10, 3, 3};
  const Da00Type types[] = {Da00Type::int32, Da00Type::int32, Da00Type::int32, Da00Type::uint64};
  const std::size_t sizes[] = {4, 4, 4, 8};
  for (std::size_t i = 0; i < 4; ++i) {
    const Variable& v = m.variables[i];
    EXPECT_EQ(v.name, names[i]);
    EXPECT_EQ(v.unit, std::optional<std::string>(units[i])) << v.name;
    EXPECT_EQ(v.axes, std::vector<std::string>{axes[i]}) << v.name;
    EXPECT_EQ(v.shape, std::vector<std::int64_t>{shapes[i]}) << v.name;
    EXPECT_EQ(v.type, types[i]) << v.name;
    EXPECT_EQ(v.bytes.size(), static_cast<std::size_t>(shapes[i]) * sizes[i]) << v.name;
  }
}

TEST(TofHistogram, NullSignalUnitHasNoUnit) {
  TofHistogram h({100, 1, 1, Aggregation::sum, nullptr});
  EXPECT_FALSE(copy(h.view()).get("signal").unit.has_value());
}

// Aggregation over 1 frame: each pulse change publishes the frame that ended, stamped with its
// pulse; the reference_time offset carries on from window to window (0, then 1000, then 3500).
TEST(TofHistogram, OneFramePerMessageCarriesTheOffsetAcrossWindows) {
  TofHistogram h(spec(100, 2, 1));
  RecordingSink sink;
  EXPECT_FALSE(h.set_pulse(kP0, sink));  // the first pulse only sets the time
  h.add(10, 5);
  EXPECT_FALSE(h.set_pulse(kP0, sink));  // the same pulse again: nothing
  h.add(60, 6);
  EXPECT_TRUE(h.set_pulse(kP0 + 1000, sink));
  h.add(70, 7);
  EXPECT_TRUE(h.set_pulse(kP0 + 3500, sink));
  h.add(20, 1);
  EXPECT_TRUE(h.set_pulse(kP0 + 3600, sink));
  ASSERT_EQ(sink.messages.size(), 3U);
  EXPECT_EQ(h.published(), 3U);
  const Message& a = sink.messages[0];
  EXPECT_EQ(a.timestamp_ns, kP0);
  EXPECT_EQ(a.signal(), (std::vector<std::int32_t>{5, 6}));
  EXPECT_EQ(a.reference_time(), (std::vector<std::int32_t>{0}));
  EXPECT_EQ(a.frame_total(), (std::vector<std::uint64_t>{11}));
  const Message& b = sink.messages[1];
  EXPECT_EQ(b.timestamp_ns, kP0 + 1000);
  EXPECT_EQ(b.signal(), (std::vector<std::int32_t>{0, 7}));  // the bins restart per window
  EXPECT_EQ(b.reference_time(), (std::vector<std::int32_t>{1000}));
  EXPECT_EQ(b.frame_total(), (std::vector<std::uint64_t>{7}));
  const Message& c = sink.messages[2];
  EXPECT_EQ(c.timestamp_ns, kP0 + 3500);
  EXPECT_EQ(c.signal(), (std::vector<std::int32_t>{1, 0}));
  EXPECT_EQ(c.reference_time(), (std::vector<std::int32_t>{3500}));
  EXPECT_EQ(c.frame_total(), (std::vector<std::uint64_t>{1}));
}

// Aggregation over 3 frames with uneven pulse intervals: one message per 3 pulse changes, its
// offsets relative to the first pulse of the run (the second window starts at 1350, not 0).
TEST(TofHistogram, ThreeFramesPerMessage) {
  TofHistogram h(spec(1000, 10, 3));
  RecordingSink sink;
  const std::uint64_t p[] = {kP0,        kP0 + 100,  kP0 + 350, kP0 + 1350,
                             kP0 + 1400, kP0 + 2400, kP0 + 2401};
  h.set_pulse(p[0], sink);
  h.add(300, 10);
  h.add(800, 9);
  h.add(1200, 8);  // beyond the period: not in the frame total
  EXPECT_FALSE(h.set_pulse(p[1], sink));
  h.add(300, 5);
  h.add(999, 7);
  EXPECT_FALSE(h.set_pulse(p[2], sink));
  h.add(0, 3);
  EXPECT_TRUE(h.set_pulse(p[3], sink));
  ASSERT_EQ(sink.messages.size(), 1U);
  const Message& a = sink.messages[0];
  EXPECT_EQ(a.timestamp_ns, p[2]);
  EXPECT_EQ(a.signal(), (std::vector<std::int32_t>{3, 0, 0, 15, 0, 0, 0, 0, 9, 7}));
  EXPECT_EQ(a.reference_time(), (std::vector<std::int32_t>{0, 100, 350}));
  EXPECT_EQ(a.frame_total(), (std::vector<std::uint64_t>{19, 12, 3}));

  h.add(450, 1);
  EXPECT_FALSE(h.set_pulse(p[4], sink));
  EXPECT_FALSE(h.set_pulse(p[5], sink));  // an empty frame
  h.add(450, 2);
  EXPECT_TRUE(h.set_pulse(p[6], sink));
  ASSERT_EQ(sink.messages.size(), 2U);
  const Message& b = sink.messages[1];
  EXPECT_EQ(b.timestamp_ns, p[5]);
  EXPECT_EQ(b.signal(), (std::vector<std::int32_t>{0, 0, 0, 0, 3, 0, 0, 0, 0, 0}));
  EXPECT_EQ(b.reference_time(), (std::vector<std::int32_t>{1350, 1400, 2400}));
  EXPECT_EQ(b.frame_total(), (std::vector<std::uint64_t>{1, 0, 2}));
}

TEST(TofHistogram, AveragesOverTheWholeWindow) {
  TofHistogram h(spec(1000, 10, 3, Aggregation::average));
  RecordingSink sink;
  h.set_pulse(kP0, sink);
  for (std::uint64_t i = 1; i <= 3; ++i) {
    h.add(300, 10);
    h.add(800, static_cast<std::int32_t>(8 + i));  // 9, 10, 11: average 10
    h.set_pulse(kP0 + i * 10, sink);
  }
  ASSERT_EQ(sink.messages.size(), 1U);
  EXPECT_EQ(sink.messages[0].signal(), (std::vector<std::int32_t>{0, 0, 0, 10, 0, 0, 0, 0, 10, 0}));
  EXPECT_EQ(sink.messages[0].frame_total(), (std::vector<std::uint64_t>{19, 20, 21}));
}

// A window whose bins are all empty is not published; readouts outside the bins leave it
// empty, while a binned value of 0 does not.
TEST(TofHistogram, EmptyWindowsAreSkippedAndCounted) {
  TofHistogram h(spec(100, 2, 1));
  RecordingSink sink;
  h.set_pulse(kP0, sink);
  EXPECT_FALSE(h.set_pulse(kP0 + 10, sink));
  h.add(-5, 1);
  h.add(500, 1);
  EXPECT_FALSE(h.set_pulse(kP0 + 20, sink));
  EXPECT_EQ(h.skipped_empty(), 2U);
  h.add(10, 0);
  EXPECT_TRUE(h.set_pulse(kP0 + 30, sink));
  ASSERT_EQ(sink.messages.size(), 1U);
  EXPECT_EQ(h.published(), 1U);
  EXPECT_EQ(h.skipped_empty(), 2U);
  EXPECT_EQ(sink.messages[0].signal(), (std::vector<std::int32_t>{0, 0}));
  // The skipped windows still moved the offset on: 10 + 10.
  EXPECT_EQ(sink.messages[0].reference_time(), (std::vector<std::int32_t>{20}));
  EXPECT_EQ(sink.messages[0].timestamp_ns, kP0 + 20);
}

// The offsets are int32: they wrap modulo 2^32, as the reference's int32 sum does in practice.
TEST(TofHistogram, ReferenceTimeOffsetWrapsModulo2To32) {
  TofHistogram h(spec(100, 1, 1));
  RecordingSink sink;
  h.set_pulse(kP0, sink);
  h.set_pulse(kP0 + 3'000'000'000ULL, sink);  // slot 0 := 3e9 - 2^32
  h.add(0, 1);
  ASSERT_TRUE(h.set_pulse(kP0 + 3'000'000'001ULL, sink));
  EXPECT_EQ(sink.messages[0].reference_time(), (std::vector<std::int32_t>{-1'294'967'296}));
}

// The reference writes past its array here; efu counts these readouts in the first window.
TEST(TofHistogram, ReadoutsBeforeTheFirstPulseBelongToTheFirstWindow) {
  TofHistogram h(spec(100, 1, 2));
  RecordingSink sink;
  h.add(0, 4);
  h.set_pulse(kP0, sink);
  h.add(0, 1);
  h.set_pulse(kP0 + 5, sink);
  h.add(0, 2);
  ASSERT_TRUE(h.set_pulse(kP0 + 7, sink));
  EXPECT_EQ(sink.messages[0].signal(), (std::vector<std::int32_t>{7}));
  EXPECT_EQ(sink.messages[0].frame_total(), (std::vector<std::uint64_t>{5, 2}));
  EXPECT_EQ(sink.messages[0].reference_time(), (std::vector<std::int32_t>{0, 5}));
}

TEST(TofHistogram, FlushPublishesThePartialWindowWithUnbegunSlotsZero) {
  TofHistogram h(spec(100, 2, 3));
  RecordingSink sink;
  h.set_pulse(kP0, sink);
  for (std::uint64_t i = 1; i <= 3; ++i) {
    h.add(10, 1);
    h.set_pulse(kP0 + 100 * i, sink);  // a full window: offsets 0, 100, 200
  }
  ASSERT_EQ(sink.messages.size(), 1U);
  h.add(60, 4);
  h.set_pulse(kP0 + 450, sink);
  h.add(60, 5);
  EXPECT_TRUE(h.flush(sink));
  ASSERT_EQ(sink.messages.size(), 2U);
  const Message& m = sink.messages[1];
  EXPECT_EQ(m.timestamp_ns, kP0 + 450);
  EXPECT_EQ(m.signal(), (std::vector<std::int32_t>{0, 9}));
  // The window's first slot starts at 300 (carried), its second at 450, the third never began.
  EXPECT_EQ(m.reference_time(), (std::vector<std::int32_t>{300, 450, 0}));
  EXPECT_EQ(m.frame_total(), (std::vector<std::uint64_t>{4, 5, 0}));
  EXPECT_EQ(h.published(), 2U);
  EXPECT_FALSE(h.flush(sink));  // the bins are empty now
  EXPECT_EQ(h.skipped_empty(), 0U);
  EXPECT_EQ(sink.messages.size(), 2U);
}

TEST(TofHistogram, FlushWithoutAPulseTimeCountsTheWindowAsUnpublished) {
  TofHistogram h(spec(100, 2, 1));
  RecordingSink sink;
  EXPECT_FALSE(h.flush(sink));  // empty: nothing to count
  EXPECT_EQ(h.unpublished_no_pulse(), 0U);
  h.add(10, 3);
  EXPECT_FALSE(h.flush(sink));
  EXPECT_EQ(h.unpublished_no_pulse(), 1U);
  EXPECT_TRUE(sink.messages.empty());
  EXPECT_FALSE(h.flush(sink));  // the lost window was emptied
  EXPECT_EQ(h.unpublished_no_pulse(), 1U);
}

TEST(TofHistogram, BadSpecsAreConfigErrors) {
  EXPECT_THROW(TofHistogram(spec(100, 0, 1)), ConfigError);
  EXPECT_THROW(TofHistogram(spec(100, -3, 1)), ConfigError);
  EXPECT_THROW(TofHistogram(spec(0, 1, 1)), ConfigError);
  EXPECT_THROW(TofHistogram(spec(-100, 1, 1)), ConfigError);
  EXPECT_THROW(TofHistogram(spec(100, 1, 0)), ConfigError);
  // Bins narrower than 1 ns: the reference would divide by a step of 0.
  EXPECT_THROW(TofHistogram(spec(9, 10, 1)), ConfigError);
  try {
    TofHistogram(spec(9, 10, 1));
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("period_ns '9'"), std::string::npos) << e.what();
  }
  TofHistogram narrowest(spec(10, 10, 1));
  EXPECT_EQ(narrowest.bin_width_ns(), 1);
}

TEST(TofHistogram, MovedHistogramPublishesItsOwnArrays) {
  TofHistogram a(spec(100, 2, 1));
  RecordingSink sink;
  a.set_pulse(kP0, sink);
  a.add(70, 9);
  TofHistogram b(std::move(a));
  ASSERT_TRUE(b.set_pulse(kP0 + 1, sink));
  EXPECT_EQ(sink.messages[0].signal(), (std::vector<std::int32_t>{0, 9}));
  EXPECT_EQ(sink.messages[0].get("frame_time").values<std::int32_t>(),
            (std::vector<std::int32_t>{0, 50, 100}));
}

}  // namespace
}  // namespace efu::da00
