// Receive coalescing's decisions (efu/receive/receive_coalescing.h), with the clock supplied by the test:
// when the receive thread pauses before its next recvmmsg(), and for how long.
#include "receive/receive_coalescing.h"

#include <algorithm>
#include <cstdint>

#include <gtest/gtest.h>

namespace efu {
namespace {

constexpr std::uint64_t kUs = 1000;

// Simulates `calls` receive calls asking for `asked` datagrams each, with datagrams arriving
// evenly, `gap_ns` apart, from `now` on: a call blocks until the next datagram if none has
// arrived (after its pause, if any), then takes every datagram that has (at most `asked`).
// Returns the last call's pause.
std::uint64_t arrivals(ReceiveCoalescing& c, std::uint64_t& now, int calls, unsigned asked,
                       std::uint64_t gap_ns) {
  std::uint64_t next = now + gap_ns;  // the next datagram's arrival
  std::uint64_t pause = 0;
  for (int i = 0; i < calls; ++i) {
    now = std::max(now + pause, next);
    const std::uint64_t arrived = (now - next) / gap_ns + 1;
    const std::uint64_t taken = std::min<std::uint64_t>(asked, arrived);
    next += taken * gap_ns;
    pause = c.pause_after(static_cast<int>(taken), asked, now);
  }
  return pause;
}

TEST(ReceiveCoalescing, DatagramsOneByOneAtAModerateRatePauseForHalfABatch) {
  ReceiveCoalescing c(1000 * kUs);
  std::uint64_t now = 1'000'000'000;
  // 20,000 datagrams/s, one per call, calls asking for 28 (LoKI's 8972 B under 256 KiB).
  const std::uint64_t pause = arrivals(c, now, 200, 28, 50 * kUs);
  EXPECT_NEAR(static_cast<double>(c.mean_gap_ns()), 50e3, 2e3);
  // Half the batch (14 datagrams) at the mean gap, inside the 1 ms window.
  EXPECT_NEAR(static_cast<double>(pause), 14 * 50e3, 14 * 2e3);
}

TEST(ReceiveCoalescing, TheWindowBoundsThePause) {
  ReceiveCoalescing c(300 * kUs);
  std::uint64_t now = 1'000'000'000;
  EXPECT_EQ(arrivals(c, now, 200, 64, 40 * kUs), 300 * kUs);
}

TEST(ReceiveCoalescing, AfterPausingTheMeanGapIsStillTheArrivalGap) {
  // While pausing, a call takes several datagrams; the gap per datagram stays what it was, so
  // the thread keeps pausing rather than oscillating.
  ReceiveCoalescing c(1000 * kUs);
  std::uint64_t now = 1'000'000'000;
  arrivals(c, now, 200, 28, 50 * kUs);
  const std::uint64_t pause = arrivals(c, now, 50, 28, 50 * kUs);
  EXPECT_NEAR(static_cast<double>(c.mean_gap_ns()), 50e3, 2e3);
  EXPECT_GT(pause, 0u);
}

TEST(ReceiveCoalescing, AFullBatchMeansMoreIsWaiting) {
  ReceiveCoalescing c(1000 * kUs);
  std::uint64_t now = 1'000'000'000;
  arrivals(c, now, 200, 28, 50 * kUs);
  now += 28 * 50 * kUs;
  EXPECT_EQ(c.pause_after(28, 28, now), 0u);
}

TEST(ReceiveCoalescing, HighRatesNeverPause) {
  ReceiveCoalescing c(1000 * kUs);
  std::uint64_t now = 1'000'000'000;
  // 200,000 datagrams/s, drained one at a time: under kMinGapNs, no added latency.
  EXPECT_EQ(arrivals(c, now, 400, 28, 5 * kUs), 0u);
  EXPECT_LT(c.mean_gap_ns(), ReceiveCoalescing::kMinGapNs);
}

TEST(ReceiveCoalescing, LowRatesNeverPause) {
  ReceiveCoalescing c(1000 * kUs);
  std::uint64_t now = 1'000'000'000;
  // 1,000 datagrams/s: one per window, nothing to gain from a pause.
  EXPECT_EQ(arrivals(c, now, 200, 28, 1000 * kUs), 0u);
  // 2,500/s: two and a half per window, so it pauses.
  EXPECT_GT(arrivals(c, now, 400, 28, 400 * kUs), 0u);
}

TEST(ReceiveCoalescing, ATimeoutMeansIdle) {
  ReceiveCoalescing c(1000 * kUs);
  std::uint64_t now = 1'000'000'000;
  ASSERT_GT(arrivals(c, now, 200, 28, 50 * kUs), 0u);
  now += 100'000 * kUs;  // the socket's receive timeout: nothing came
  EXPECT_EQ(c.pause_after(0, 28, now), 0u);
  now += 50 * kUs;
  EXPECT_EQ(c.pause_after(1, 28, now), 0u) << "the first datagram after a silence";
}

TEST(ReceiveCoalescing, AWindowOfZeroNeverPauses) {
  ReceiveCoalescing c(0);
  std::uint64_t now = 1'000'000'000;
  EXPECT_EQ(arrivals(c, now, 200, 28, 50 * kUs), 0u);
}

}  // namespace
}  // namespace efu
