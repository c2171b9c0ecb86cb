#include "efu/ess/ess_time.h"

#include <gtest/gtest.h>

namespace efu::ess {
namespace {

// The reference system's conversion: high * 1e9 + (uint64)(low * (1e9 / 88052500.0)), that is
// low ticks of 11.356860963... ns each, truncated. Worked out by hand:
TEST(EssTime, ConvertsTicksToNanosecondsTruncatedAsTheReferenceDoes) {
  EXPECT_EQ(to_ns(0, 0), 0U);
  EXPECT_EQ(to_ns(0, 1), 11U);            // 11.357 ns
  EXPECT_EQ(to_ns(0, 2), 22U);            // 22.714 ns: truncated, not rounded to 23
  EXPECT_EQ(to_ns(0, 35'221), 400'000U);  // 35221 ticks = 400 us exactly
  EXPECT_EQ(to_ns(0, kTicksPerSecond / 2), 500'000'000U);
  EXPECT_EQ(to_ns(0, kMaxTimeLow), 999'999'988U);  // 999999988.64
  EXPECT_EQ(to_ns(1'700'000'000, 0), 1'700'000'000'000'000'000U);
  EXPECT_EQ(to_ns(1'700'000'000, 880'525), 1'700'000'000'010'000'000U);  // 10 ms exactly
}

TEST(EssTime, EqualsTheExactFloorOfTicksTimes400000Over35221) {
  // 1e9 / 88052500 = 400000 / 35221: the double product never lands below an exact integer.
  for (std::uint64_t low = 0; low < kTicksPerSecond; low += 997) {
    ASSERT_EQ(to_ns(3, static_cast<std::uint32_t>(low)), 3'000'000'000U + low * 400'000 / 35'221)
        << low;
  }
}

TEST(EssTime, RoundTripPicksTheNearestTick) {
  for (std::uint64_t ns = 1'700'000'000'000'000'000ULL; ns < 1'700'000'000'000'100'000ULL;
       ns += 7) {
    const EssTime t = to_ess(ns);
    ASSERT_LE(t.low, kMaxTimeLow);
    const std::uint64_t back = to_ns(t.high, t.low);
    ASSERT_LE(back > ns ? back - ns : ns - back, 6U) << ns;
  }
}

TEST(EssTime, RoundingUpIntoTheNextSecondCarries) {
  const EssTime t = to_ess(1'999'999'999);  // closer to 2 s than to the last tick of second 1
  EXPECT_EQ(t.high, 2U);
  EXPECT_EQ(t.low, 0U);
}

TEST(TimeOfFlight, IsRelativeToThePulse) {
  const Tof t = time_of_flight(1'000'500, 1'000'000, 900'000, 10'000);
  EXPECT_EQ(t.status, TofStatus::kOk);
  EXPECT_EQ(t.tof_ns, 500U);
  EXPECT_EQ(t.pulse_ns, 1'000'000U);
}

TEST(TimeOfFlight, FallsBackToThePreviousPulseForEarlierReadouts) {
  const Tof t = time_of_flight(999'000, 1'000'000, 990'000, 100'000);
  EXPECT_EQ(t.status, TofStatus::kOk);
  EXPECT_EQ(t.tof_ns, 9'000U);
  EXPECT_EQ(t.pulse_ns, 990'000U);
}

TEST(TimeOfFlight, EarlierThanBothPulsesIsNegative) {
  EXPECT_EQ(time_of_flight(989'999, 1'000'000, 990'000, 100'000).status, TofStatus::kNegative);
}

TEST(TimeOfFlight, BeyondTheMaximumIsTooLargeButTheMaximumItselfIsFine) {
  EXPECT_EQ(time_of_flight(1'010'000, 1'000'000, 900'000, 10'000).status, TofStatus::kOk);
  EXPECT_EQ(time_of_flight(1'010'001, 1'000'000, 900'000, 10'000).status, TofStatus::kTooLarge);
  // The fallback TOF is checked against the maximum too.
  EXPECT_EQ(time_of_flight(999'999, 1'000'000, 900'000, 10'000).status, TofStatus::kTooLarge);
}

}  // namespace
}  // namespace efu::ess
