#include "clusterer.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.h"

namespace efu::multiblade {
namespace {

using test::entry;
using test::Event;
using test::instrument_config;
using test::RecordingSink;

constexpr std::uint64_t kPulse = 1'000'000'000'000ULL;

// Freia layout, cassettes 0 and 1: wire coordinates are y (cassette 1: 32..63), strips x 0..63,
// pixel = 1 + x + 64 y.
const std::string kConfig = instrument_config("Freia", entry(0, 0, 0, 0) + "," + entry(1, 0, 0, 1));

Hit wire(std::uint16_t y, std::uint16_t adc, std::uint64_t tof) {
  return Hit{kPulse + tof, kPulse, y, adc, Plane::kWire};
}
Hit strip(std::uint16_t x, std::uint16_t adc, std::uint64_t tof) {
  return Hit{kPulse + tof, kPulse, x, adc, Plane::kStrip};
}
std::uint32_t pixel(std::uint32_t x, std::uint32_t y) { return 1 + x + 64 * y; }

class ClustererTest : public ::testing::Test {
 protected:
  std::uint64_t count(const std::string& name) const { return counters.value(name); }
  // One packet's hits, on queue 0.
  static void packet(Clusterer& c, const std::vector<std::pair<std::uint32_t, Hit>>& hits) {
    c.begin_packet(0);
    for (const auto& [cassette, hit] : hits) c.add(cassette, hit);
    c.end_packet();
  }

  Geometry geometry = Geometry::from_json(kConfig, "t");
  CounterRegistry counters;
  RecordingSink sink;
  ClusterSettings settings;  // defaults: gap 500 ns, match 500 ns, window 1 ms, no missing channel
  Clusterer clusterer{counters, geometry, settings, sink};
};

TEST_F(ClustererTest, FormsOneEventAtTheChargeWeightedCentre) {
  packet(clusterer, {{1, wire(36, 100, 1000)},
                     {1, wire(37, 300, 1010)},
                     {1, wire(38, 100, 1020)},
                     {1, strip(10, 200, 1005)},
                     {1, strip(11, 100, 1030)}});  // strip centroid 10.33 -> 10
  EXPECT_TRUE(sink.events.empty()) << "the reorder window is still open";
  clusterer.close_all();
  ASSERT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(sink.events[0], (Event{kPulse, 1000, pixel(10, 37)}));
  EXPECT_EQ(count("events.formed"), 1U);
}

TEST_F(ClustererTest, CentroidRoundsHalfUp) {
  packet(clusterer, {{0, wire(2, 100, 0)}, {0, wire(3, 100, 0)}, {0, strip(7, 100, 0)}});
  clusterer.close_all();
  ASSERT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(sink.events[0].pixel, pixel(7, 3));  // 2.5 -> 3
}

TEST_F(ClustererTest, MaxAdcPicksTheLargestSignal) {
  ClusterSettings s;
  s.algorithm = PositionAlgorithm::kMaxAdc;
  Clusterer c{counters, geometry, s, sink};
  packet(c, {{0, wire(2, 100, 0)},
             {0, wire(3, 90, 0)},
             {0, wire(4, 95, 0)},  // the centroid would say 3
             {0, strip(7, 10, 0)},
             {0, strip(8, 11, 0)}});
  c.close_all();
  ASSERT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(sink.events[0].pixel, pixel(8, 2));
}

TEST_F(ClustererTest, GroupsCloseOnceTheWindowHasPassedThem) {
  ClusterSettings s;
  s.reorder_window_ns = 10'000;
  Clusterer c{counters, geometry, s, sink};
  packet(c, {{0, wire(1, 100, 1000)}, {0, strip(1, 100, 1000)}, {0, wire(9, 100, 1500)}});
  EXPECT_TRUE(sink.events.empty());
  // Latest 11'000: horizon 1'000, the group (latest 1'500 + gap) is not yet before it.
  packet(c, {{1, wire(40, 100, 11'000)}});
  EXPECT_TRUE(sink.events.empty());
  // Latest 12'001: horizon 2'001 > 1'500 + 500: closed. The wire at 9 is in the same group (exactly
  // the gap) but another cluster, without a strip.
  packet(c, {{1, strip(2, 100, 11'100)}, {1, wire(50, 100, 12'001)}, {1, strip(20, 100, 12'001)}});
  ASSERT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(sink.events[0], (Event{kPulse, 1000, pixel(1, 1)}));
  EXPECT_EQ(count("events.rejected.no_match_strip"), 1U);
  c.close_all();
  ASSERT_EQ(sink.events.size(), 3U);
  EXPECT_EQ(sink.events[1], (Event{kPulse, 11'000, pixel(2, 40)}));
  EXPECT_EQ(sink.events[2], (Event{kPulse, 12'001, pixel(20, 50)}));
  EXPECT_EQ(count("hits.late"), 0U);
}

// Neutrons on two cassettes, some close in time (same group, two clusters), some overlapping.
std::vector<std::pair<std::uint32_t, Hit>> neutrons() {
  std::vector<std::pair<std::uint32_t, Hit>> hits;
  std::mt19937_64 rng(7);
  for (int n = 0; n < 60; ++n) {
    const std::uint32_t cassette = n % 2;
    const std::uint64_t t = 1000 + static_cast<std::uint64_t>(n / 2) * 700 + rng() % 300;
    const auto y = static_cast<std::uint16_t>(cassette * 32 + 1 + rng() % 30);
    const auto x = static_cast<std::uint16_t>(1 + rng() % 62);
    hits.push_back({cassette, wire(y, 500, t)});
    hits.push_back({cassette, wire(static_cast<std::uint16_t>(y + 1), 200, t + rng() % 100)});
    hits.push_back({cassette, strip(x, 400, t + rng() % 100)});
    hits.push_back({cassette, strip(static_cast<std::uint16_t>(x - 1), 150, t + rng() % 100)});
  }
  return hits;
}

std::vector<Event> events_of(const Geometry& g, const ClusterSettings& s,
                             const std::vector<std::vector<std::pair<std::uint32_t, Hit>>>& packets,
                             CounterRegistry& counters) {
  RecordingSink sink;
  Clusterer c{counters, g, s, sink};
  for (const auto& p : packets) {
    c.begin_packet(0);
    for (const auto& [cassette, hit] : p) c.add(cassette, hit);
    c.end_packet();
  }
  c.close_all();
  std::sort(sink.events.begin(), sink.events.end());
  return sink.events;
}

TEST_F(ClustererTest, EventsDoNotDependOnTheOrderInsideAPacket) {
  auto hits = neutrons();
  CounterRegistry ordered_counters;
  std::sort(hits.begin(), hits.end(),
            [](const auto& a, const auto& b) { return a.second.time_ns < b.second.time_ns; });
  const auto ordered = events_of(geometry, settings, {hits}, ordered_counters);
  ASSERT_GT(ordered.size(), 40U);
  std::mt19937_64 rng(3);
  for (int round = 0; round < 50; ++round) {
    std::shuffle(hits.begin(), hits.end(), rng);
    CounterRegistry c;
    EXPECT_EQ(events_of(geometry, settings, {hits}, c), ordered) << "round " << round;
    EXPECT_EQ(c.value("events.formed"), ordered_counters.value("events.formed"));
  }
}

TEST_F(ClustererTest, HitsLateWithinTheWindowJoinAcrossPackets) {
  // The time-ordered hits cut into packets of 8, then 30 % of the hits moved up to 3 packets
  // later (up to ~2.5 us of detector time), inside a 5 us window that closes groups mid-stream.
  ClusterSettings s;
  s.reorder_window_ns = 5'000;
  auto hits = neutrons();
  std::sort(hits.begin(), hits.end(),
            [](const auto& a, const auto& b) { return a.second.time_ns < b.second.time_ns; });
  CounterRegistry ordered_counters;
  std::vector<std::vector<std::pair<std::uint32_t, Hit>>> in_order;
  for (std::size_t i = 0; i < hits.size(); i += 8) {
    in_order.emplace_back(hits.begin() + static_cast<std::ptrdiff_t>(i),
                          hits.begin() + static_cast<std::ptrdiff_t>(std::min(i + 8, hits.size())));
  }
  const auto ordered = events_of(geometry, s, in_order, ordered_counters);
  std::mt19937_64 rng(11);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::vector<std::pair<std::uint32_t, Hit>>> delayed(in_order.size() + 3);
    for (std::size_t p = 0; p < in_order.size(); ++p) {
      for (const auto& h : in_order[p])
        delayed[p + (rng() % 10 < 3 ? 1 + rng() % 3 : 0)].push_back(h);
    }
    for (auto& p : delayed) std::shuffle(p.begin(), p.end(), rng);
    CounterRegistry c;
    EXPECT_EQ(events_of(geometry, s, delayed, c), ordered) << "round " << round;
    EXPECT_EQ(c.value("hits.late"), 0U);
  }
}

TEST_F(ClustererTest, AHitLaterThanTheWindowIsCountedAndStillUsed) {
  ClusterSettings s;
  s.reorder_window_ns = 10'000;
  Clusterer c{counters, geometry, s, sink};
  packet(c, {{0, wire(3, 100, 1000)}, {0, strip(3, 100, 1000)}});
  packet(c, {{0, wire(5, 100, 100'000)}, {0, strip(5, 100, 100'000)}});  // the first group closes
  ASSERT_EQ(sink.events.size(), 1U);
  // A neutron at 20'000 arrives now, 80 us behind: beyond the window, both hits late.
  packet(c, {{0, strip(9, 100, 20'010)}, {0, wire(8, 100, 20'000)}});
  EXPECT_EQ(count("hits.late"), 2U);
  ASSERT_EQ(sink.events.size(), 2U);
  EXPECT_EQ(sink.events[1], (Event{kPulse, 20'000, pixel(9, 8)}));
  // A late strip whose wire went out in a closed group: counted, used, unmatched, not lost.
  packet(c, {{0, strip(4, 100, 1100)}});
  EXPECT_EQ(count("hits.late"), 3U);
  EXPECT_EQ(count("events.rejected.no_match_wire"), 1U);
  c.close_all();
  EXPECT_EQ(sink.events.size(), 3U);
  EXPECT_EQ(count("hits.reorder_buffer_full"), 0U);
}

TEST_F(ClustererTest, APacketsHitsAreGroupedTogetherEvenWhenLate) {
  // The queue's horizon is per output queue: a late packet on queue 1 is not late on queue 0.
  ClusterSettings s;
  s.reorder_window_ns = 10'000;
  Clusterer c{counters, geometry, s, sink};
  c.begin_packet(0);
  c.add(0, wire(3, 100, 500'000));
  c.end_packet();
  c.begin_packet(1);
  c.add(1, wire(40, 100, 1000));
  c.add(1, strip(7, 100, 1000));
  c.end_packet();
  EXPECT_EQ(count("hits.late"), 0U);
  c.close_all();
  EXPECT_EQ(sink.events.size(), 1U);
}

TEST_F(ClustererTest, AFullBufferClosesWhatItHoldsAndCountsIt) {
  ClusterSettings s;
  s.buffer_hits = 64;
  Clusterer c{counters, geometry, s, sink};
  c.begin_packet(0);
  for (std::uint64_t n = 0; n < 50; ++n) {  // 100 hits in one packet: beyond 64
    c.add(0, wire(static_cast<std::uint16_t>(n % 32), 100, 1000 + n * 2000));
    c.add(0, strip(static_cast<std::uint16_t>(n % 64), 100, 1000 + n * 2000));
  }
  c.end_packet();
  c.close_all();
  EXPECT_EQ(count("hits.reorder_buffer_full"), 64U);
  EXPECT_EQ(sink.events.size(), 50U);  // every neutron still formed
}

TEST_F(ClustererTest, CassettesClusterIndependently) {
  packet(clusterer, {{0, wire(1, 100, 1000)},
                     {1, wire(34, 100, 1000)},  // same time, another cassette
                     {0, strip(1, 100, 1100)},
                     {1, strip(2, 100, 1000)}});
  clusterer.close_all();
  ASSERT_EQ(sink.events.size(), 2U);
  std::sort(sink.events.begin(), sink.events.end());
  EXPECT_EQ(sink.events[0].pixel, pixel(1, 1));
  EXPECT_EQ(sink.events[1].pixel, pixel(2, 34));
}

TEST_F(ClustererTest, UnmatchedClustersAreCountedByTheMissingPlane) {
  packet(clusterer,
         {{0, wire(1, 100, 1000)}, {0, strip(1, 100, 10'000)}, {0, strip(5, 100, 20'000)}});
  clusterer.close_all();
  EXPECT_TRUE(sink.events.empty());
  EXPECT_EQ(count("events.rejected.no_match_strip"), 1U);
  EXPECT_EQ(count("events.rejected.no_match_wire"), 2U);
}

TEST_F(ClustererTest, WireAndStripTooFarApartInTimeDoNotMatch) {
  ClusterSettings s;
  s.max_time_gap_ns = 2000;
  s.max_match_time_ns = 300;
  Clusterer c{counters, geometry, s, sink};
  packet(c, {{0, wire(1, 100, 1000)}, {0, strip(1, 100, 1301)}});
  c.close_all();
  EXPECT_TRUE(sink.events.empty());
  EXPECT_EQ(count("events.rejected.no_match_strip"), 1U);
  EXPECT_EQ(count("events.rejected.no_match_wire"), 1U);
}

TEST_F(ClustererTest, MatchesTheClosestInTime) {
  ClusterSettings s;
  s.max_time_gap_ns = 1000;
  Clusterer c{counters, geometry, s, sink};
  packet(c, {{0, wire(1, 100, 1000)}, {0, strip(20, 100, 1300)}, {0, strip(30, 100, 1050)}});
  c.close_all();
  ASSERT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(sink.events[0].pixel, pixel(30, 1));
  EXPECT_EQ(count("events.rejected.no_match_wire"), 1U);
}

TEST_F(ClustererTest, MissingChannelsFollowTheFilesMaxGap) {
  // MaxGapWire 0: wires 3 and 5 are two clusters (one unmatched).
  packet(clusterer, {{0, wire(3, 100, 0)}, {0, wire(5, 100, 0)}, {0, strip(7, 100, 0)}});
  clusterer.close_all();
  EXPECT_EQ(count("events.formed"), 1U);
  EXPECT_EQ(count("events.rejected.no_match_strip"), 1U);
  // MaxGapWire 1: one cluster with one wire missing, centred on 4.
  ClusterSettings s;
  s.max_gap_wire = 1;
  s.max_gap_strip = 1;
  RecordingSink one;
  Clusterer c{counters, geometry, s, one};
  packet(c, {{0, wire(3, 100, 0)}, {0, wire(5, 100, 0)}, {0, strip(7, 100, 0)}});
  c.close_all();
  ASSERT_EQ(one.events.size(), 1U);
  EXPECT_EQ(one.events[0].pixel, pixel(7, 4));
  // Two missing in all (3 _ 5 _ 7) is more than 1: the facility's gap rule rejects it.
  packet(c, {{0, wire(3, 100, 10'000)},
             {0, wire(5, 100, 10'000)},
             {0, wire(7, 100, 10'000)},
             {0, strip(7, 100, 10'000)}});
  packet(c, {{0, strip(3, 100, 20'000)},
             {0, strip(5, 100, 20'000)},
             {0, strip(7, 100, 20'000)},
             {0, wire(7, 100, 20'000)}});
  c.close_all();
  EXPECT_EQ(count("events.rejected.wire_gap"), 1U);
  EXPECT_EQ(count("events.rejected.strip_gap"), 1U);
}

TEST_F(ClustererTest, SpansBeyondTheLimitsAreRejected) {
  ClusterSettings s;
  s.max_wire_span = 2;
  s.max_strip_span = 3;
  Clusterer c{counters, geometry, s, sink};
  packet(c,
         {{0, wire(1, 100, 0)}, {0, wire(2, 100, 0)}, {0, wire(3, 100, 0)}, {0, strip(1, 100, 0)}});
  packet(c, {{0, wire(1, 100, 5000)},
             {0, strip(1, 100, 5000)},
             {0, strip(2, 100, 5000)},
             {0, strip(3, 100, 5000)},
             {0, strip(4, 100, 5000)}});
  c.close_all();
  EXPECT_TRUE(sink.events.empty());
  EXPECT_EQ(count("events.rejected.wire_span_too_large"), 1U);
  EXPECT_EQ(count("events.rejected.strip_span_too_large"), 1U);
}

TEST_F(ClustererTest, EventTimeIsTheEarliestHitOfEitherPlane) {
  packet(clusterer, {{0, wire(1, 100, 1200)}, {0, strip(1, 100, 1100)}, {0, wire(2, 50, 1150)}});
  clusterer.close_all();
  ASSERT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(sink.events[0].tof_ns, 1100U);
}

TEST_F(ClustererTest, ClosingAnEmptyCassetteDoesNothing) {
  clusterer.close(0);
  clusterer.close_all();
  EXPECT_TRUE(sink.events.empty());
  EXPECT_FALSE(clusterer.pending(0));
}

// A group of one wire hit and one strip hit takes a shorter path (Clusterer::pair_single); each
// case below is what the general path gives for two one-hit clusters, worked out by hand.
TEST_F(ClustererTest, OneWireAndOneStripFormTheGeneralPathsEvent) {
  // Strip first in the group, the wire earlier: the event's time is the wire's; adc 0 still
  // places a one-hit cluster at its coordinate.
  packet(clusterer, {{1, strip(12, 0, 2000)}, {1, wire(40, 50, 1900)}});
  // 500 ns apart exactly: still matched (the window includes its end).
  packet(clusterer, {{0, wire(5, 10, 10'000)}, {0, strip(60, 20, 10'500)}});
  // 501 ns apart: neither matched, each counted from its own side.
  packet(clusterer, {{0, wire(6, 10, 20'000)}, {0, strip(61, 20, 20'501)}});
  // Equal times: the wire's hit is "first" (time_start <= ...), same pulse either way.
  packet(clusterer, {{1, wire(33, 7, 30'000)}, {1, strip(0, 9, 30'000)}});
  clusterer.close_all();
  // close_all() closes cassette 0, then 1: order the events by time to compare.
  std::vector<Event> events = sink.events;
  std::sort(events.begin(), events.end(),
            [](const Event& a, const Event& b) { return a.tof_ns < b.tof_ns; });
  ASSERT_EQ(events.size(), 3U);
  EXPECT_EQ(events[0], (Event{kPulse, 1900, pixel(12, 40)}));
  EXPECT_EQ(events[1], (Event{kPulse, 10'000, pixel(60, 5)}));
  EXPECT_EQ(events[2], (Event{kPulse, 30'000, pixel(0, 33)}));
  EXPECT_EQ(count("events.formed"), 3U);
  EXPECT_EQ(count("events.rejected.no_match_strip"), 1U);
  EXPECT_EQ(count("events.rejected.no_match_wire"), 1U);
}

TEST_F(ClustererTest, OneWireAndOneStripObeyTheSpanLimitsAndThePixelRule) {
  ClusterSettings s;
  s.max_wire_span = 0;  // no cluster is that narrow: every event is rejected (the options forbid
                        // 0; the rule still holds for a ClusterSettings made by hand)
  Clusterer narrow{counters, geometry, s, sink};
  packet(narrow, {{0, wire(5, 10, 0)}, {0, strip(6, 10, 0)}});
  narrow.close_all();
  EXPECT_EQ(count("events.rejected.wire_span_too_large"), 1U);
  // A strip coordinate outside the 64-wide grid has no pixel.
  packet(clusterer, {{0, wire(5, 10, 0)}, {0, strip(64, 10, 0)}});
  clusterer.close_all();
  EXPECT_EQ(count("events.rejected.pixel"), 1U);
  EXPECT_TRUE(sink.events.empty());
}

}  // namespace
}  // namespace efu::multiblade
