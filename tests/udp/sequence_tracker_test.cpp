#include "sequence_tracker.h"

#include <cstdint>
#include <initializer_list>
#include <vector>

#include <gtest/gtest.h>

namespace efu::udp {
namespace {

constexpr std::uint64_t kW = SequenceTracker::kWindow;

// Both formats, in each format's own numbering: offsets are added to its start value.
class SequenceTrackerTest : public ::testing::TestWithParam<SeqFormat> {
 protected:
  SequenceTracker tracker_{GetParam()};
  std::uint64_t start() const { return seq_start(GetParam()); }
  void feed(std::initializer_list<std::uint64_t> offsets) {
    for (const std::uint64_t o : offsets) tracker_.on_sequence(start() + o);
  }
  void feed_range(std::uint64_t from, std::uint64_t to) {  // offsets [from, to)
    for (std::uint64_t o = from; o < to; ++o) tracker_.on_sequence(start() + o);
  }
  const SequenceStats& stats() { return tracker_.stats(); }
};

TEST_P(SequenceTrackerTest, InOrderStreamHasNoLoss) {
  feed_range(0, 5000);
  tracker_.flush();
  EXPECT_EQ(stats().expected, 5000U);
  EXPECT_EQ(stats().lost, 0U);
  EXPECT_EQ(stats().out_of_order, 0U);
  EXPECT_EQ(stats().duplicates, 0U);
  EXPECT_EQ(stats().restarts, 0U);
}

TEST_P(SequenceTrackerTest, GapIsLostOnceItLeavesTheWindow) {
  feed_range(0, 10);
  feed_range(13, 20);  // 10, 11, 12 missing
  EXPECT_EQ(stats().expected, 20U);
  EXPECT_EQ(stats().lost, 0U) << "still inside the reordering window";
  feed_range(20, 10 + kW);  // 10 has just left? not yet: it leaves when 10 + kW arrives
  EXPECT_EQ(stats().lost, 0U);
  feed({10 + kW});
  EXPECT_EQ(stats().lost, 1U);
  feed({11 + kW, 12 + kW});
  EXPECT_EQ(stats().lost, 3U);
  tracker_.flush();
  EXPECT_EQ(stats().lost, 3U);
  EXPECT_EQ(stats().expected, 13 + kW);
}

TEST_P(SequenceTrackerTest, FlushCountsGapsStillInTheWindowOnce) {
  feed({0, 1, 4, 5, 9});
  tracker_.flush();
  EXPECT_EQ(stats().lost, 5U);  // 2, 3, 6, 7, 8
  tracker_.flush();
  EXPECT_EQ(stats().lost, 5U);
  EXPECT_EQ(stats().expected, 10U);
}

TEST_P(SequenceTrackerTest, SettlingMarksEveryPositionWhereverTheWindowWraps) {
  // Settling marks the run's positions a word at a time; the bitmap is circular, so runs of
  // every length (partly covered words at either end, the end of the bitmap crossed) must come
  // out fully marked: every third number is missing, each is lost exactly once, and a second
  // flush finds nothing new.
  for (const std::uint64_t length :
       std::initializer_list<std::uint64_t>{5, 63, 64, 65, 700, kW - 1, kW, kW + 37, 3 * kW + 5}) {
    SequenceTracker t{GetParam()};
    std::uint64_t missing = 0;
    for (std::uint64_t o = 0; o < length; ++o) {
      if (o % 3 == 1 && o + 1 < length) {
        ++missing;  // (the last number always arrives: it is the highest)
      } else {
        t.on_sequence(start() + o);
      }
    }
    t.flush();
    EXPECT_EQ(t.stats().lost, missing) << length;
    t.flush();
    EXPECT_EQ(t.stats().lost, missing) << length;
    EXPECT_EQ(t.stats().expected, length) << length;
  }
}

TEST_P(SequenceTrackerTest, LateArrivalInsideWindowIsOutOfOrderNotLost) {
  feed({0, 1, 3, 4, 2, 5});
  tracker_.flush();
  EXPECT_EQ(stats().out_of_order, 1U);
  EXPECT_EQ(stats().lost, 0U);
  EXPECT_EQ(stats().duplicates, 0U);
  EXPECT_EQ(stats().expected, 6U);
}

TEST_P(SequenceTrackerTest, DuplicatesAreCountedWhetherHighestOrOlder) {
  feed({0, 1, 2, 2, 1, 3, 0});
  tracker_.flush();
  EXPECT_EQ(stats().duplicates, 3U);
  EXPECT_EQ(stats().out_of_order, 0U);
  EXPECT_EQ(stats().lost, 0U);
  EXPECT_EQ(stats().expected, 4U);
}

TEST_P(SequenceTrackerTest, LossBeforeTheFirstArrivalCountsFromTheStartValue) {
  feed({5, 6, 7});
  tracker_.flush();
  EXPECT_EQ(stats().expected, 8U);
  EXPECT_EQ(stats().lost, 5U);
}

TEST_P(SequenceTrackerTest, JoiningARunningSenderCountsFromTheFirstArrival) {
  feed_range(100000, 100010);
  tracker_.flush();
  EXPECT_EQ(stats().expected, 10U);
  EXPECT_EQ(stats().lost, 0U);
}

TEST_P(SequenceTrackerTest, ArrivalJustBeforeTheFirstOneExtendsTheRun) {
  feed({100005, 100006, 100003});
  tracker_.flush();
  EXPECT_EQ(stats().expected, 4U);  // 100003..100006
  EXPECT_EQ(stats().lost, 1U);      // 100004
  EXPECT_EQ(stats().out_of_order, 1U);
}

TEST_P(SequenceTrackerTest, BigForwardJumpIsLoss) {
  feed({0, 1});
  feed({1 + 10 * kW});
  EXPECT_EQ(stats().lost, 10 * kW - kW) << "numbers that never entered the window";
  tracker_.flush();
  EXPECT_EQ(stats().lost, 10 * kW - 1);
  EXPECT_EQ(stats().expected, 10 * kW + 2);
}

TEST_P(SequenceTrackerTest, SenderRestartStartsANewRun) {
  feed_range(0, 5000);
  feed({3});  // far behind the highest and within kW of the start value
  EXPECT_EQ(stats().restarts, 1U);
  feed_range(4, 100);  // the restarted sender goes on; 0..2 of the new run were lost
  tracker_.flush();
  EXPECT_EQ(stats().expected, 5000U + 100U);
  EXPECT_EQ(stats().lost, 3U);
  EXPECT_EQ(stats().out_of_order, 0U);
}

TEST_P(SequenceTrackerTest, RestartAfterGapsSettlesTheOldRun) {
  feed({0, 1, 3});        // 2 pending
  feed_range(0, 3 + kW);  // 0, 1, 3 duplicates and 2 late: none of it a restart
  EXPECT_EQ(stats().restarts, 0U);
  feed_range(3 + kW, 3000);
  feed_range(0, 10);  // restart at the start value
  tracker_.flush();
  EXPECT_EQ(stats().restarts, 1U);
  EXPECT_EQ(stats().lost, 0U);
  EXPECT_EQ(stats().expected, 3000U + 10U);
}

TEST_P(SequenceTrackerTest, StaleNumberFarBehindIsOutOfOrderAndDoesNotRestart) {
  feed_range(0, 20000);
  feed({10000});
  feed_range(20000, 20010);
  tracker_.flush();
  EXPECT_EQ(stats().restarts, 0U);
  EXPECT_EQ(stats().out_of_order, 1U);
  EXPECT_EQ(stats().lost, 0U);
  EXPECT_EQ(stats().expected, 20010U);
}

TEST_P(SequenceTrackerTest, RuntsAreCountedAndSkipped) {
  const std::uint8_t bytes[8] = {};
  const std::uint32_t need = seq_size(GetParam());
  for (std::uint32_t size = 0; size < need; ++size) tracker_.on_packet(bytes, size);
  EXPECT_EQ(stats().runts, need);
  EXPECT_EQ(stats().packets, need);
  EXPECT_EQ(stats().expected, 0U);
  tracker_.on_packet(nullptr, 0);  // never dereferenced
  EXPECT_EQ(stats().runts, need + 1);
}

TEST_P(SequenceTrackerTest, PacketsAndBytesCountEveryDatagram) {
  std::vector<std::uint8_t> datagram(100);
  for (std::uint64_t i = 0; i < 3; ++i) {
    write_seq(GetParam(), start() + i, datagram.data());
    tracker_.on_packet(datagram.data(), static_cast<std::uint32_t>(datagram.size()));
  }
  EXPECT_EQ(stats().packets, 3U);
  EXPECT_EQ(stats().bytes, 300U);
  EXPECT_EQ(stats().expected, 3U);
}

INSTANTIATE_TEST_SUITE_P(Formats, SequenceTrackerTest,
                         ::testing::Values(SeqFormat::kEfu64, SeqFormat::kUdptx32),
                         [](const auto& param_info) {
                           return std::string(seq_format_name(param_info.param));
                         });

TEST(SequenceTrackerWrap, SixtyFourBitWrapIsContinuous) {
  SequenceTracker t(SeqFormat::kEfu64);
  const std::uint64_t near_end = ~0ULL - 2;                            // 2^64 - 3
  for (std::uint64_t i = 0; i < 10; ++i) t.on_sequence(near_end + i);  // wraps through 0
  t.on_sequence(near_end + 12);                                        // offsets 10 and 11 missing
  t.flush();
  EXPECT_EQ(t.stats().restarts, 0U);
  EXPECT_EQ(t.stats().expected, 13U);
  EXPECT_EQ(t.stats().lost, 2U);
}

TEST(SequenceTrackerWrap, ThirtyTwoBitWrapIsContinuous) {
  SequenceTracker t(SeqFormat::kUdptx32);
  std::uint32_t seq = 0xFFFFFFF0U;
  for (int i = 0; i < 40; ++i) t.on_sequence(seq++);    // wraps through 0 and 1
  t.on_sequence(static_cast<std::uint32_t>(seq + 1));   // one missing after the wrap
  t.on_sequence(static_cast<std::uint32_t>(seq - 20));  // late duplicate across the wrap
  t.flush();
  EXPECT_EQ(t.stats().restarts, 0U);
  EXPECT_EQ(t.stats().expected, 42U);
  EXPECT_EQ(t.stats().lost, 1U);
  EXPECT_EQ(t.stats().duplicates, 1U);
}

TEST(SequenceTrackerWrap, ThirtyTwoBitRestartFromHighNumbersIsDetected) {
  SequenceTracker t(SeqFormat::kUdptx32);
  for (std::uint32_t s = 3'000'000'000U; s < 3'000'005'000U; ++s) t.on_sequence(s);
  // udptx restarts at 1: in 32-bit serial arithmetic that looks ~1.3e9 *ahead*.
  for (std::uint32_t s = 1; s <= 10; ++s) t.on_sequence(s);
  t.flush();
  EXPECT_EQ(t.stats().restarts, 1U);
  EXPECT_EQ(t.stats().lost, 0U);
  EXPECT_EQ(t.stats().expected, 5010U);
}

TEST(SequenceTrackerForeign, A64BitNumberFarAheadDoesNotInventLoss) {
  SequenceTracker t(SeqFormat::kEfu64);
  for (std::uint64_t s = 0; s < 100; ++s) t.on_sequence(s);
  t.on_sequence(0x123456789ABCDEFULL);  // someone else's datagram on the port
  for (std::uint64_t s = 100; s < 200; ++s) t.on_sequence(s);
  t.flush();
  EXPECT_EQ(t.stats().expected, 200U);
  EXPECT_EQ(t.stats().lost, 0U);
  EXPECT_EQ(t.stats().out_of_order, 1U);
  EXPECT_EQ(t.stats().restarts, 0U);
}

TEST(SequenceTrackerForeign, ForwardJumpJustBelowTheLimitIsLoss) {
  SequenceTracker t(SeqFormat::kEfu64);
  t.on_sequence(5000);
  t.on_sequence(5000 + SequenceTracker::kMaxJump);
  t.flush();
  EXPECT_EQ(t.stats().lost, SequenceTracker::kMaxJump - 1);
  EXPECT_EQ(t.stats().out_of_order, 0U);
}

// Issue: one corrupted sequence number could add up to 2^31 to udp.lost. Now a forward jump
// beyond kMaxJump is not believed, in either format.
TEST(SequenceTrackerForeign, OneCorrupted32BitNumberAddsNoLoss) {
  SequenceTracker t(SeqFormat::kUdptx32);
  for (std::uint32_t s = 1; s <= 100; ++s) t.on_sequence(s);
  t.on_sequence(100 + (1U << 30));  // a corrupted number 2^30 ahead
  for (std::uint32_t s = 101; s <= 200; ++s) t.on_sequence(s);
  t.flush();
  EXPECT_EQ(t.stats().expected, 200U);
  EXPECT_EQ(t.stats().lost, 0U);
  EXPECT_EQ(t.stats().out_of_order, 1U);
  EXPECT_EQ(t.stats().restarts, 0U);
}

TEST(SequenceTrackerForeign, AConfirmedJumpIsARestartNotLoss) {
  SequenceTracker t(SeqFormat::kEfu64);
  for (std::uint64_t s = 0; s < 100; ++s) t.on_sequence(s);
  // The sender really continues 2^40 further on: after kJumpConfirm numbers in a row that is a
  // new run, and every number from there on is accounted in it.
  const std::uint64_t far = 100 + (1ULL << 40);
  for (std::uint64_t s = far; s < far + 50; ++s) t.on_sequence(s);
  t.on_sequence(far + 51);  // one lost in the new run
  t.flush();
  EXPECT_EQ(t.stats().restarts, 1U);
  EXPECT_EQ(t.stats().out_of_order, 0U);
  EXPECT_EQ(t.stats().expected, 100U + 52U);
  EXPECT_EQ(t.stats().lost, 1U);
  EXPECT_EQ(t.stats().packets, 0U);  // on_sequence() accounts numbers, not datagrams
}

TEST(SequenceTrackerForeign, ForeignNumbersThatDoNotFollowEachOtherStayForeign) {
  SequenceTracker t(SeqFormat::kEfu64);
  for (std::uint64_t s = 0; s < 10; ++s) t.on_sequence(s);
  for (std::uint64_t k = 1; k <= 6; ++k) t.on_sequence(k << 40);  // noise, not a stream
  for (std::uint64_t s = 10; s < 20; ++s) t.on_sequence(s);
  t.flush();
  EXPECT_EQ(t.stats().restarts, 0U);
  EXPECT_EQ(t.stats().out_of_order, 6U);
  EXPECT_EQ(t.stats().expected, 20U);
  EXPECT_EQ(t.stats().lost, 0U);
}

TEST(SequenceTrackerWrap, FormatsReadTheirOwnFieldWidthAndOrder) {
  std::uint8_t bytes[8] = {1, 0, 0, 0, 1, 0, 0, 0};
  EXPECT_EQ(read_seq(SeqFormat::kEfu64, bytes), (1ULL << 32) + 1);
  EXPECT_EQ(read_seq(SeqFormat::kUdptx32, bytes), 1U);  // host order on this little-endian CPU
}

}  // namespace
}  // namespace efu::udp
