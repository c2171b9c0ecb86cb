#include "efu/kafka/ev44_builder.h"

#include <vector>

#include <gtest/gtest.h>

#include "efu/errors.h"
#include "efu/schemas/ev44_events_generated.h"

namespace efu::kafka {
namespace {

const Event44Message* decode(std::span<const std::uint8_t> bytes) {
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  EXPECT_TRUE(VerifyEvent44MessageBuffer(verifier));
  EXPECT_TRUE(Event44MessageBufferHasIdentifier(bytes.data()));
  return GetEvent44Message(bytes.data());
}

TEST(Ev44Builder, RoundTripsEventsAndReferenceTimes) {
  Ev44Builder b("loki", 100'000);
  b.add(1000, 5, 50);
  b.add(1000, 6, 60);
  b.add(2000, 7, 70);
  b.add(3000, 8, 80);
  b.add(3000, 4'000'000'000U, 90);
  EXPECT_EQ(b.events(), 5U);
  EXPECT_EQ(b.reference_times(), 3U);
  const auto bytes = b.finish(42);
  EXPECT_LE(bytes.size(), b.size());
  const Event44Message* m = decode(bytes);
  EXPECT_EQ(m->source_name()->str(), "loki");
  EXPECT_EQ(m->message_id(), 42);
  EXPECT_EQ(std::vector<std::int64_t>(m->reference_time()->begin(), m->reference_time()->end()),
            (std::vector<std::int64_t>{1000, 2000, 3000}));
  EXPECT_EQ(std::vector<std::int32_t>(m->reference_time_index()->begin(),
                                      m->reference_time_index()->end()),
            (std::vector<std::int32_t>{0, 2, 3}));
  EXPECT_EQ(std::vector<std::int32_t>(m->time_of_flight()->begin(), m->time_of_flight()->end()),
            (std::vector<std::int32_t>{5, 6, 7, 8, static_cast<std::int32_t>(4'000'000'000U)}));
  EXPECT_EQ(std::vector<std::int32_t>(m->pixel_id()->begin(), m->pixel_id()->end()),
            (std::vector<std::int32_t>{50, 60, 70, 80, 90}));
}

TEST(Ev44Builder, ReturningPulseTimeOpensNewReference) {
  Ev44Builder b("s", 10'000);
  b.add(1000, 1, 1);
  b.add(2000, 2, 2);
  b.add(1000, 3, 3);
  const Event44Message* m = decode(b.finish(0));
  EXPECT_EQ(m->reference_time()->size(), 3U);
  EXPECT_EQ(m->reference_time()->Get(2), 1000);
  EXPECT_EQ(m->reference_time_index()->Get(2), 2);
}

TEST(Ev44Builder, ResetStartsAnEmptyMessageAndReusesTheBuilder) {
  Ev44Builder b("s", 10'000);
  b.add(1000, 1, 1);
  b.add(1000, 2, 2);
  (void)b.finish(0);
  b.reset();
  EXPECT_TRUE(b.empty());
  b.add(1000, 9, 9);  // same pulse as before the reset: still a new reference entry
  const Event44Message* m = decode(b.finish(1));
  EXPECT_EQ(m->message_id(), 1);
  ASSERT_EQ(m->pixel_id()->size(), 1U);
  EXPECT_EQ(m->pixel_id()->Get(0), 9);
  ASSERT_EQ(m->reference_time()->size(), 1U);
  EXPECT_EQ(m->reference_time_index()->Get(0), 0);
}

TEST(Ev44Builder, FullStaysWithinMaxBytesForOnePulse) {
  const std::size_t max_bytes = 20'000;
  Ev44Builder b("a-long-source-name", max_bytes);
  std::uint32_t n = 0;
  for (; !b.full(); ++n) b.add(1000, n, n);
  EXPECT_GT(n, (max_bytes - 300) / 8);  // uses nearly all the room: ~8 bytes per event
  EXPECT_LE(n, b.event_capacity());
  const auto bytes = b.finish(7);
  EXPECT_LE(bytes.size(), max_bytes);
  const Event44Message* m = decode(bytes);
  ASSERT_EQ(m->pixel_id()->size(), n);
  EXPECT_EQ(m->pixel_id()->Get(n - 1), static_cast<std::int32_t>(n - 1));
}

TEST(Ev44Builder, FullStaysWithinMaxBytesWithAPulsePerEvent) {
  const std::size_t max_bytes = 20'000;
  Ev44Builder b("s", max_bytes);
  std::uint64_t n = 0;
  for (; !b.full(); ++n) b.add(1000 + n, 1, 2);
  EXPECT_GT(n, (max_bytes - 300) / 20);
  const auto bytes = b.finish(7);
  EXPECT_LE(bytes.size(), max_bytes);
  const Event44Message* m = decode(bytes);
  EXPECT_EQ(m->reference_time()->size(), n);
  EXPECT_EQ(m->reference_time_index()->Get(n - 1), static_cast<std::int32_t>(n - 1));
}

TEST(Ev44Builder, AddPulseAppendsARunAsAddWould) {
  const std::uint32_t tof[] = {5, 6, 4'000'000'000U};
  const std::uint32_t pixel[] = {50, 60, 70};
  Ev44Builder b("s", 10'000);
  b.add(1000, 1, 10);
  EXPECT_EQ(b.add_pulse(1000, tof, pixel, 2), 2U);  // same pulse: no new reference entry
  EXPECT_EQ(b.add_pulse(2000, tof + 2, pixel + 2, 1), 1U);
  EXPECT_EQ(b.add_pulse(3000, tof, pixel, 0), 0U);  // an empty run opens nothing
  b.add(2000, 9, 90);
  const Event44Message* m = decode(b.finish(0));
  EXPECT_EQ(std::vector<std::int64_t>(m->reference_time()->begin(), m->reference_time()->end()),
            (std::vector<std::int64_t>{1000, 2000}));
  EXPECT_EQ(std::vector<std::int32_t>(m->reference_time_index()->begin(),
                                      m->reference_time_index()->end()),
            (std::vector<std::int32_t>{0, 3}));
  EXPECT_EQ(std::vector<std::int32_t>(m->time_of_flight()->begin(), m->time_of_flight()->end()),
            (std::vector<std::int32_t>{1, 5, 6, static_cast<std::int32_t>(4'000'000'000U), 9}));
  EXPECT_EQ(std::vector<std::int32_t>(m->pixel_id()->begin(), m->pixel_id()->end()),
            (std::vector<std::int32_t>{10, 50, 60, 70, 90}));
}

// A run longer than the message has room for: add_pulse takes what fits (full() afterwards),
// the rest goes into the next message, and no message is larger than max_bytes.
TEST(Ev44Builder, AddPulseTakesWhatFitsAndTheRestGoesIntoTheNextMessage) {
  const std::size_t max_bytes = 2'000;
  Ev44Builder b("s", max_bytes);
  std::vector<std::uint32_t> tof(1000);
  std::vector<std::uint32_t> pixel(1000);
  for (std::uint32_t i = 0; i < 1000; ++i) {
    tof[i] = i;
    pixel[i] = 1000 + i;
  }
  b.add(500, 1, 1);  // another pulse first, so the run needs a reference entry of its own
  std::size_t done = 0;
  std::vector<std::int32_t> seen;
  int messages = 0;
  while (done < tof.size()) {
    const std::size_t k = b.add_pulse(600, tof.data() + done, pixel.data() + done, 1000 - done);
    ASSERT_GE(k, 1U);
    done += k;
    if (done < tof.size()) {
      EXPECT_TRUE(b.full());
    }
    const auto bytes = b.finish(messages++);
    EXPECT_LE(bytes.size(), max_bytes);
    const Event44Message* m = decode(bytes);
    for (std::int32_t p : *m->pixel_id()) seen.push_back(p);
    b.reset();
  }
  EXPECT_GT(messages, 2);
  ASSERT_EQ(seen.size(), 1001U);
  EXPECT_EQ(seen.front(), 1);
  for (std::size_t i = 1; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i], static_cast<std::int32_t>(999 + i));
  }
}

TEST(Ev44Builder, TooSmallMaxBytesIsAConfigError) {
  EXPECT_THROW(Ev44Builder("s", 100), ConfigError);
}

TEST(Ev44Builder, EmptyMessageDecodes) {
  Ev44Builder b("s", 10'000);
  const Event44Message* m = decode(b.finish(3));
  EXPECT_EQ(m->reference_time()->size(), 0U);
  EXPECT_EQ(m->pixel_id()->size(), 0U);
}

}  // namespace
}  // namespace efu::kafka
