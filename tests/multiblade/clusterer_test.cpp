#include "clusterer.h"

#include <string>

#include <gtest/gtest.h>

#include "test_support.h"

namespace efu::multiblade {
namespace {

using test::Event;
using test::RecordingSink;

constexpr std::uint64_t kPulse = 1'000'000'000'000ULL;

const char* const kGeometry = R"({
  "wires_per_cassette": 16, "strips_per_cassette": 32,
  "cassettes": [
    {"id": 0, "wires": {"fiber": 0, "fen": 0, "vmm": 0, "first_channel": 0},
              "strips": {"fiber": 0, "fen": 0, "vmm": 1, "first_channel": 0}},
    {"id": 1, "wires": {"fiber": 0, "fen": 1, "vmm": 0, "first_channel": 0},
              "strips": {"fiber": 0, "fen": 1, "vmm": 1, "first_channel": 0}}
  ]})";

Hit wire(std::uint16_t coordinate, std::uint16_t adc, std::uint64_t tof) {
  return Hit{kPulse + tof, kPulse, coordinate, adc, Plane::kWire};
}
Hit strip(std::uint16_t coordinate, std::uint16_t adc, std::uint64_t tof) {
  return Hit{kPulse + tof, kPulse, coordinate, adc, Plane::kStrip};
}

class ClustererTest : public ::testing::Test {
 protected:
  std::uint64_t count(const std::string& name) const { return counters.value(name); }

  Geometry geometry = Geometry::from_json(kGeometry, "t");
  CounterRegistry counters;
  RecordingSink sink;
  ClusterSettings settings;  // defaults: gap 500 ns, adjacent channels, match 500 ns
  Clusterer clusterer{counters, geometry, settings, sink};
};

TEST_F(ClustererTest, FormsOneEventAtTheChargeWeightedCentre) {
  clusterer.add(1, wire(4, 100, 1000));
  clusterer.add(1, wire(5, 300, 1010));
  clusterer.add(1, wire(6, 100, 1020));
  clusterer.add(1, strip(10, 200, 1005));
  clusterer.add(1, strip(11, 100, 1030));  // centroid 10.33 → 10
  EXPECT_TRUE(sink.events.empty()) << "the group is still open";
  clusterer.close_all();
  ASSERT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(sink.events[0], (Event{kPulse, 1000, geometry.pixel(1, 10, 5)}));
  EXPECT_EQ(count("events.formed"), 1U);
}

TEST_F(ClustererTest, CentroidRoundsHalfUp) {
  clusterer.add(0, wire(2, 100, 0));
  clusterer.add(0, wire(3, 100, 0));  // 2.5 → 3
  clusterer.add(0, strip(7, 100, 0));
  clusterer.close_all();
  ASSERT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(sink.events[0].pixel, geometry.pixel(0, 7, 3));
}

TEST_F(ClustererTest, MaxAdcPicksTheLargestSignal) {
  ClusterSettings s;
  s.algorithm = PositionAlgorithm::kMaxAdc;
  Clusterer c{counters, geometry, s, sink};
  c.add(0, wire(2, 100, 0));
  c.add(0, wire(3, 90, 0));
  c.add(0, wire(4, 95, 0));  // centroid would say 3
  c.add(0, strip(7, 10, 0));
  c.add(0, strip(8, 11, 0));
  c.close_all();
  ASSERT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(sink.events[0].pixel, geometry.pixel(0, 8, 2));
}

TEST_F(ClustererTest, AHitBeyondTheTimeGapClosesTheGroup) {
  clusterer.add(0, wire(1, 100, 1000));
  clusterer.add(0, strip(1, 100, 1000));
  clusterer.add(0, wire(9, 100, 1500));  // exactly the gap: same group, second wire cluster
  EXPECT_TRUE(sink.events.empty());
  clusterer.add(0, wire(9, 100, 2001));  // 501 ns after the latest hit: closes
  ASSERT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(count("events.rejected.no_match_strip"), 1U);  // the wire cluster at 9
  clusterer.add(0, strip(3, 100, 2100));
  clusterer.close_all();
  ASSERT_EQ(sink.events.size(), 2U);
  EXPECT_EQ(sink.events[1], (Event{kPulse, 2001, geometry.pixel(0, 3, 9)}));
}

TEST_F(ClustererTest, CassettesClusterIndependently) {
  clusterer.add(0, wire(1, 100, 1000));
  clusterer.add(1, wire(2, 100, 5000));  // far later, but another cassette: 0 stays open
  clusterer.add(0, strip(1, 100, 1100));
  clusterer.add(1, strip(2, 100, 5000));
  clusterer.close_all();
  ASSERT_EQ(sink.events.size(), 2U);
  EXPECT_EQ(sink.events[0].pixel, geometry.pixel(0, 1, 1));
  EXPECT_EQ(sink.events[1].pixel, geometry.pixel(1, 2, 2));
}

TEST_F(ClustererTest, UnmatchedClustersAreCountedByTheMissingPlane) {
  clusterer.add(0, wire(1, 100, 1000));
  clusterer.add(0, strip(1, 100, 10'000));
  clusterer.add(0, strip(5, 100, 20'000));
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
  c.add(0, wire(1, 100, 1000));
  c.add(0, strip(1, 100, 1301));
  c.close_all();
  EXPECT_TRUE(sink.events.empty());
  EXPECT_EQ(count("events.rejected.no_match_strip"), 1U);
  EXPECT_EQ(count("events.rejected.no_match_wire"), 1U);
}

TEST_F(ClustererTest, MatchesTheClosestInTime) {
  ClusterSettings s;
  s.max_time_gap_ns = 2000;
  Clusterer c{counters, geometry, s, sink};
  c.add(0, wire(1, 100, 1000));
  c.add(0, strip(20, 100, 1400));
  c.add(0, strip(5, 100, 1050));
  c.close_all();
  ASSERT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(sink.events[0].pixel, geometry.pixel(0, 5, 1));
  EXPECT_EQ(count("events.rejected.no_match_wire"), 1U);
}

TEST_F(ClustererTest, ChannelGapSplitsClustersUnlessAllowed) {
  clusterer.add(0, wire(1, 100, 0));
  clusterer.add(0, wire(3, 100, 0));  // one missing wire: two clusters by default
  clusterer.add(0, strip(1, 100, 0));
  clusterer.close_all();
  EXPECT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(count("events.rejected.no_match_strip"), 1U);

  ClusterSettings s;
  s.max_coordinate_gap = 2;
  RecordingSink other;
  Clusterer c{counters, geometry, s, other};
  c.add(0, wire(1, 100, 0));
  c.add(0, wire(3, 100, 0));
  c.add(0, strip(1, 100, 0));
  c.close_all();
  ASSERT_EQ(other.events.size(), 1U);
  EXPECT_EQ(other.events[0].pixel, geometry.pixel(0, 1, 2));
}

TEST_F(ClustererTest, SpansBeyondTheLimitsAreRejected) {
  ClusterSettings s;
  s.max_wire_span = 2;
  s.max_strip_span = 3;
  Clusterer c{counters, geometry, s, sink};
  c.add(0, wire(1, 100, 0));
  c.add(0, wire(2, 100, 0));
  c.add(0, strip(1, 100, 0));
  c.add(0, strip(2, 100, 0));
  c.add(0, strip(3, 100, 0));
  c.add(0, wire(5, 100, 10'000));
  c.add(0, wire(6, 100, 10'000));
  c.add(0, wire(7, 100, 10'000));
  c.add(0, strip(1, 100, 10'000));
  c.add(0, strip(1, 100, 20'000));
  c.add(0, wire(1, 100, 20'000));
  for (std::uint16_t k = 0; k < 4; ++k) c.add(0, strip(k, 100, 20'000));
  c.close_all();
  EXPECT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(count("events.rejected.wire_span_too_large"), 1U);
  EXPECT_EQ(count("events.rejected.strip_span_too_large"), 1U);
}

TEST_F(ClustererTest, EventTimeIsTheEarliestHitOfEitherPlane) {
  clusterer.add(0, wire(1, 100, 1200));
  clusterer.add(0, strip(1, 100, 1100));
  clusterer.add(0, wire(2, 100, 1050));  // arrives late but is the earliest
  clusterer.close_all();
  ASSERT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(sink.events[0].tof_ns, 1050U);
}

TEST_F(ClustererTest, HitsOfAnAlreadyClosedGroupAreDroppedAsOutOfOrder) {
  clusterer.add(0, wire(1, 100, 1000));
  clusterer.add(0, strip(1, 100, 1000));
  clusterer.add(0, wire(4, 100, 5000));   // closes the first group
  clusterer.add(0, strip(1, 100, 1100));  // belongs to the closed group
  EXPECT_EQ(count("hits.dropped.out_of_order"), 1U);
  clusterer.add(0, strip(4, 100, 5000));
  clusterer.close_all();
  EXPECT_EQ(sink.events.size(), 2U);
}

TEST_F(ClustererTest, AFullGroupCountsAndDropsFurtherHits) {
  ClusterSettings s;
  s.group_capacity = 4;
  Clusterer c{counters, geometry, s, sink};
  c.add(0, wire(1, 100, 0));
  c.add(0, strip(1, 100, 0));
  c.add(0, strip(2, 100, 0));
  c.add(0, strip(3, 100, 0));
  c.add(0, strip(4, 100, 10));
  c.add(0, strip(5, 100, 10));
  EXPECT_EQ(count("hits.dropped.buffer_full"), 2U);
  c.add(0, wire(7, 100, 1000));  // still closes at the next gap
  EXPECT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(sink.events[0].pixel, geometry.pixel(0, 2, 1));
}

TEST_F(ClustererTest, ClosingAnEmptyCassetteDoesNothing) {
  clusterer.close_all();
  EXPECT_TRUE(sink.events.empty());
  EXPECT_FALSE(clusterer.pending(0));
  clusterer.add(0, wire(1, 100, 0));
  EXPECT_TRUE(clusterer.pending(0));
}

}  // namespace
}  // namespace efu::multiblade
