#include <array>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "efu/spsc_ring.h"

namespace efu {
namespace {

TEST(SpscRing, RoundsCapacityUpToPowerOfTwo) {
  EXPECT_EQ(SpscRing<int>(5).capacity(), 8u);
  EXPECT_EQ(SpscRing<int>(8).capacity(), 8u);
  EXPECT_EQ(SpscRing<int>(0).capacity(), 2u);
}

TEST(SpscRing, EmptyRingPopsNothing) {
  SpscRing<int> r(4);
  int x = -1;
  EXPECT_TRUE(r.empty());
  EXPECT_FALSE(r.try_pop(x));
  EXPECT_EQ(x, -1);
  std::array<int, 3> out{};
  EXPECT_EQ(r.pop_bulk(std::span(out)), 0u);
}

TEST(SpscRing, FullRingRefusesAndKeepsContents) {
  SpscRing<int> r(4);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(r.try_push(i));
  EXPECT_FALSE(r.try_push(99));
  EXPECT_EQ(r.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    int x = -1;
    ASSERT_TRUE(r.try_pop(x));
    EXPECT_EQ(x, i);
  }
  EXPECT_TRUE(r.empty());
}

TEST(SpscRing, WrapsAroundManyTimesInOrder) {
  SpscRing<std::uint64_t> r(8);
  std::uint64_t next_in = 0, next_out = 0;
  for (int round = 0; round < 1000; ++round) {
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(r.try_push(next_in++));
    for (int i = 0; i < 5; ++i) {
      std::uint64_t x = 0;
      ASSERT_TRUE(r.try_pop(x));
      ASSERT_EQ(x, next_out++);
    }
  }
  EXPECT_EQ(next_out, 5000u);
}

TEST(SpscRing, BulkPushTakesOnlyWhatFits) {
  SpscRing<int> r(8);
  std::vector<int> in(11);
  std::iota(in.begin(), in.end(), 0);
  EXPECT_EQ(r.push_bulk(std::span<const int>(in)), 8u);
  EXPECT_EQ(r.push_bulk(std::span<const int>(in)), 0u);
  std::array<int, 3> out{};
  EXPECT_EQ(r.pop_bulk(std::span(out)), 3u);
  EXPECT_EQ(out, (std::array<int, 3>{0, 1, 2}));
  // Three slots are free again; a bulk push that wraps the end of the storage keeps order.
  EXPECT_EQ(r.push_bulk(std::span<const int>(in).subspan(8)), 3u);
  std::array<int, 16> rest{};
  ASSERT_EQ(r.pop_bulk(std::span(rest)), 8u);
  const std::array<int, 8> expected{3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), rest.begin()));
}

TEST(SpscRing, BulkPopReturnsAtMostWhatIsThere) {
  SpscRing<int> r(16);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(r.try_push(i));
  std::array<int, 10> out{};
  EXPECT_EQ(r.pop_bulk(std::span(out)), 5u);
  EXPECT_EQ(out[4], 4);
  EXPECT_EQ(r.pop_bulk(std::span(out)), 0u);
}

std::uint64_t stress_items() {
  if (const char* env = std::getenv("EFU_RING_STRESS_ITEMS"))
    return std::strtoull(env, nullptr, 10);
  return 100'000'000;
}

// Two threads, 10^8 items by default: every item arrives exactly once and in order. A small ring
// forces constant full/empty transitions, which is where ordering bugs show. Run under TSan in
// the thread-sanitizer build (scripts/test does, with fewer items).
TEST(SpscRing, TwoThreadStressKeepsOrderAndLosesNothing) {
  const std::uint64_t items = stress_items();
  SpscRing<std::uint64_t> r(1024);
  std::thread producer([&] {
    std::array<std::uint64_t, 32> chunk{};
    std::uint64_t next = 0;
    while (next < items) {
      if ((next & 1) == 0) {
        // Single pushes.
        if (r.try_push(next)) ++next;
      } else {
        const std::size_t want =
            static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), items - next));
        for (std::size_t i = 0; i < want; ++i) chunk[i] = next + i;
        next += r.push_bulk(std::span<const std::uint64_t>(chunk.data(), want));
      }
    }
  });
  std::uint64_t expected = 0;
  std::uint64_t errors = 0;
  std::array<std::uint64_t, 48> out{};
  while (expected < items) {
    const std::size_t n = r.pop_bulk(std::span(out));
    for (std::size_t i = 0; i < n; ++i) {
      if (out[i] != expected) ++errors;
      expected = out[i] + 1;
    }
  }
  producer.join();
  EXPECT_EQ(errors, 0u);
  EXPECT_EQ(expected, items);
  EXPECT_TRUE(r.empty());
}

}  // namespace
}  // namespace efu
