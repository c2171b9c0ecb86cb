// NMX's event forming (docs/nmx.md "Events"): uTPC, the GapMatcher's split, the cuts and their
// counters, with hand-worked expectations. Hits go in directly (the readout path is
// readout_test.cpp's).
#include "events.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nmx_test_support.h"

namespace efu::nmx {
namespace {

using test::RecordingSink;

constexpr std::uint64_t kPulse = test::kPulseNs;
constexpr std::uint64_t kT0 = kPulse + 1000;

Hit hit(std::uint16_t coordinate, std::uint64_t time, std::uint16_t adc = 100,
        std::uint8_t plane = kX) {
  return Hit{time, kPulse, coordinate, adc, plane};
}

std::uint16_t utpc(std::vector<Hit> hits) {
  return utpc_coordinate(hits.data(), static_cast<std::uint32_t>(hits.size()));
}

TEST(NmxUtpc, OneLatestHitIsThePosition) {
  EXPECT_EQ(utpc({hit(10, 100), hit(11, 110), hit(12, 120)}), 12U);
  EXPECT_EQ(utpc({hit(10, 120), hit(11, 110), hit(12, 100)}), 10U);
  EXPECT_EQ(utpc({hit(10, 100), hit(11, 130), hit(12, 100)}), 11U);
  EXPECT_EQ(utpc({hit(7, 5)}), 7U);
}

TEST(NmxUtpc, LatestHitsNearerAnEdgeWin) {
  // lo = 0, hi = 1, (n - 1) - hi = 3: lo is nearer the low edge.
  EXPECT_EQ(utpc({hit(10, 130), hit(11, 130), hit(12, 100), hit(13, 100), hit(14, 100)}), 10U);
  // lo = 3, hi = 4, (n - 1) - hi = 0: hi is nearer the high edge.
  EXPECT_EQ(utpc({hit(10, 100), hit(11, 100), hit(12, 100), hit(13, 130), hit(14, 130)}), 14U);
}

TEST(NmxUtpc, EqualDistancesTakeTheLargerAdcAndHiOnEqualAdcs) {
  // lo = 1, hi = 2, (n - 1) - hi = 1.
  EXPECT_EQ(utpc({hit(10, 100), hit(11, 130, 300), hit(12, 130, 200), hit(13, 100)}), 11U);
  EXPECT_EQ(utpc({hit(10, 100), hit(11, 130, 200), hit(12, 130, 300), hit(13, 100)}), 12U);
  EXPECT_EQ(utpc({hit(10, 100), hit(11, 130, 200), hit(12, 130, 200), hit(13, 100)}), 12U);
  // Not neighbours: lo = 0, hi = 2 of 3.
  EXPECT_EQ(utpc({hit(10, 130, 200), hit(11, 100), hit(12, 130, 200)}), 12U);
  EXPECT_EQ(utpc({hit(10, 130, 300), hit(11, 100), hit(12, 130, 200)}), 10U);
}

SplitParts split_of(const std::vector<std::uint16_t>& coordinates) {
  std::vector<Hit> hits;
  for (std::uint16_t c : coordinates) hits.push_back(hit(c, 100));
  return split_plane(hits.data(), static_cast<std::uint32_t>(hits.size()));
}

TEST(NmxSplit, PartsAtGapsLargerThanTen) {
  EXPECT_EQ(split_of({1, 2, 3, 20, 21}).first, 3U);
  EXPECT_EQ(split_of({1, 2, 3, 20, 21}).second, 2U);
  EXPECT_EQ(split_of({1, 11}).first, 2U);  // a difference of 10 is no gap
  EXPECT_EQ(split_of({1, 11}).second, 0U);
  EXPECT_EQ(split_of({1, 12}).first, 1U);
  EXPECT_EQ(split_of({1, 12}).second, 1U);
  EXPECT_EQ(split_of({1, 20, 40}).first, 0U);  // three parts: the plane is emptied
  EXPECT_EQ(split_of({1, 20, 40}).second, 0U);
  EXPECT_EQ(split_of({}).first, 0U);
}

TEST(NmxSplit, AdcSumsMatchWithFloatCoefficientsInDouble) {
  // 0.8F is 0.800000011920929: 100 * 0.8F > 80, so 80 is out and 81 in; 1.2F is 1.2000000477.
  EXPECT_FALSE(adc_sums_match(100, 80, 0.8F, 1.2F));
  EXPECT_TRUE(adc_sums_match(100, 81, 0.8F, 1.2F));
  EXPECT_TRUE(adc_sums_match(100, 120, 0.8F, 1.2F));
  EXPECT_FALSE(adc_sums_match(100, 121, 0.8F, 1.2F));
  EXPECT_TRUE(adc_sums_match(0, 0, 0.8F, 1.2F));
  EXPECT_FALSE(adc_sums_match(0, 1, 0.8F, 1.2F));
}

// An EventFormer on the small config (x and y strips 0..127 of panel 0) with `extra` fields.
class Former {
 public:
  explicit Former(const std::string& extra = "")
      : config_(Config::from_json(test::small_config(extra), "test.json")),
        former_(counters, config_, settings(config_), sink) {}

  static EventSettings settings(const Config& c) {
    EventSettings s;
    s.parameters = c.events();
    s.max_time_gap_ns = 500;
    return s;
  }

  /// `count` hits of `plane` on strips first, first + 1, ... at times t0, t0 + dt, ...
  Former& track(std::uint8_t plane, std::uint16_t first, std::uint16_t count, std::uint64_t t0,
                std::int64_t dt = 10, std::uint16_t adc = 100) {
    for (std::uint16_t i = 0; i < count; ++i) {
      hits_.push_back(Hit{t0 + static_cast<std::uint64_t>(dt * i), kPulse,
                          static_cast<std::uint16_t>(first + i), adc, plane});
    }
    return *this;
  }

  std::vector<test::Event>& run() {
    former_.begin_packet(0);
    for (const Hit& h : hits_) former_.add(0, h);
    former_.end_packet();
    former_.close_all();
    former_.flush_events();
    hits_.clear();
    return sink.events;
  }

  std::uint64_t rejected() const {
    std::uint64_t sum = 0;
    for (const char* name : {"no_match_x", "no_match_y", "x_span_too_large", "x_span_too_small",
                             "x_time_span_too_large", "y_span_too_large", "y_span_too_small",
                             "y_time_span_too_large", "pixel", "split_unmatched"}) {
      sum += counters.value(std::string("events.rejected.") + name);
    }
    return sum;
  }

  CounterRegistry counters;
  RecordingSink sink;

 private:
  Config config_;
  EventFormer former_;
  std::vector<Hit> hits_;
};

TEST(NmxEvents, OneTrackGivesTheUtpcPixelAndTheEndTime) {
  Former f;
  f.track(kX, 10, 3, kT0, 20).track(kY, 50, 2, kT0 + 10, 20);
  const auto& events = f.run();
  ASSERT_EQ(events.size(), 1U);
  // x: latest is strip 12 (t0 + 40); y: strip 51 (t0 + 30). pixel = 1 + 12 + 1280 * 51.
  EXPECT_EQ(events[0].pixel, 65293U);
  EXPECT_EQ(events[0].pulse_ns, kPulse);
  EXPECT_EQ(events[0].tof_ns, 1040U);  // the end: t0 + 40
  EXPECT_EQ(f.counters.value("events.formed"), 1U);
  EXPECT_EQ(f.counters.value("events.groups"), 1U);
}

TEST(NmxEvents, GroupsApartInTimeAreSeparateEvents) {
  Former f;
  f.track(kX, 10, 1, kT0).track(kY, 20, 1, kT0);
  f.track(kX, 30, 1, kT0 + 501).track(kY, 40, 1, kT0 + 501);  // 501 ns later: a new group
  const auto& events = f.run();
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0].pixel, 1U + 10 + 1280 * 20);
  EXPECT_EQ(events[1].pixel, 1U + 30 + 1280 * 40);
  EXPECT_EQ(events[1].tof_ns, 1501U);
}

struct RejectionCase {
  const char* extra;  // config fields
  std::uint16_t x_first, x_count;
  std::uint16_t y_first, y_count;
  std::int64_t x_dt;
  const char* counter;
};

TEST(NmxEvents, EachRejectionIsCountedOnce) {
  const RejectionCase cases[] = {
      {"", 0, 0, 50, 2, 10, "no_match_x"},
      {"", 10, 2, 0, 0, 10, "no_match_y"},
      {"", 10, 11, 50, 2, 10, "x_span_too_large"},                 // span 11 > 10
      {"\"MinSpanX\": 2,", 10, 1, 50, 2, 10, "x_span_too_small"},  // span 1 < 2
      {"", 10, 2, 50, 2, 500, "x_time_span_too_large"},            // 500 + 1 > 500
      {"", 10, 2, 50, 11, 10, "y_span_too_large"},
      {"\"MinSpanY\": 3,", 10, 2, 50, 2, 10, "y_span_too_small"},
      {"\"MaxTimeSpan\": 10,", 10, 1, 50, 2, 10, "y_time_span_too_large"},  // y: 10 + 1 > 10
      {"\"SizeX\": 12,", 10, 3, 50, 2, 10, "pixel"},  // x = 12 is outside 0..11
  };
  for (const RejectionCase& c : cases) {
    SCOPED_TRACE(c.counter);
    Former f(c.extra);
    f.track(kX, c.x_first, c.x_count, kT0, c.x_dt).track(kY, c.y_first, c.y_count, kT0 + 5);
    EXPECT_TRUE(f.run().empty());
    EXPECT_EQ(f.counters.value(std::string("events.rejected.") + c.counter), 1U);
    EXPECT_EQ(f.rejected(), 1U);
    EXPECT_EQ(f.counters.value("events.groups"), 1U);
    EXPECT_EQ(f.counters.value("events.formed"), 0U);
  }
}

TEST(NmxEvents, SpansAtTheLimitsPass) {
  Former f("\"MinSpanX\": 2,");
  f.track(kX, 10, 10, kT0, 10).track(kY, 50, 1, kT0);  // x span 10 = MaxSpanX, y span 1
  EXPECT_EQ(f.run().size(), 1U);
  Former g;
  g.track(kX, 10, 2, kT0, 499).track(kY, 50, 1, kT0);  // time span 500 = MaxTimeSpan
  EXPECT_EQ(g.run().size(), 1U);
}

constexpr const char* kSplit = "\"SplitMultiEvents\": true,";

TEST(NmxEvents, SplitPairsPartsStraight) {
  Former f(kSplit);
  // x parts: 10..12 (ADC sum 300), 40..42 (600); y parts: 60..62 (300), 90..92 (600).
  f.track(kX, 10, 3, kT0, 10, 100).track(kX, 40, 3, kT0, 10, 200);
  f.track(kY, 60, 3, kT0, 10, 100).track(kY, 90, 3, kT0, 10, 200);
  const auto& events = f.run();
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0].pixel, 1U + 12 + 1280 * 62);  // 79373
  EXPECT_EQ(events[1].pixel, 1U + 42 + 1280 * 92);  // 117803
  EXPECT_EQ(f.counters.value("events.split.attempted"), 1U);
  EXPECT_EQ(f.counters.value("events.split.done"), 1U);
  EXPECT_EQ(f.counters.value("events.formed"), 2U);
}

TEST(NmxEvents, SplitPairsPartsCrossed) {
  Former f(kSplit);
  f.track(kX, 10, 3, kT0, 10, 100).track(kX, 40, 3, kT0, 10, 200);
  f.track(kY, 60, 3, kT0, 10, 200).track(kY, 90, 3, kT0, 10, 100);
  const auto& events = f.run();
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0].pixel, 1U + 12 + 1280 * 92);  // x 10..12 with y 90..92
  EXPECT_EQ(events[1].pixel, 1U + 42 + 1280 * 62);
  EXPECT_EQ(f.counters.value("events.split.done"), 1U);
}

TEST(NmxEvents, SplitWithoutAUniquePairingDropsTheGroup) {
  Former f(kSplit);
  f.track(kX, 10, 3, kT0, 10, 100).track(kX, 40, 3, kT0, 10, 200);
  f.track(kY, 60, 3, kT0, 10, 100).track(kY, 90, 3, kT0, 10, 100);  // both y parts 300
  EXPECT_TRUE(f.run().empty());
  EXPECT_EQ(f.counters.value("events.rejected.split_unmatched"), 1U);
  EXPECT_EQ(f.rejected(), 1U);
}

TEST(NmxEvents, SplitOfThreePartsDropsTheGroup) {
  Former f(kSplit);
  f.track(kX, 10, 1, kT0).track(kX, 30, 1, kT0).track(kX, 50, 1, kT0);
  f.track(kY, 60, 3, kT0);
  EXPECT_TRUE(f.run().empty());
  EXPECT_EQ(f.counters.value("events.rejected.split_unmatched"), 1U);
}

TEST(NmxEvents, SplitWithoutAGapLeavesOneEventForTheCuts) {
  Former f(kSplit);
  f.track(kX, 10, 11, kT0).track(kY, 60, 3, kT0, 10, 366);  // sums 1100 and 1098: a match
  EXPECT_TRUE(f.run().empty());
  EXPECT_EQ(f.counters.value("events.split.attempted"), 1U);
  EXPECT_EQ(f.counters.value("events.split.done"), 0U);
  EXPECT_EQ(f.counters.value("events.rejected.x_span_too_large"), 1U);  // span 11 > 10
}

TEST(NmxEvents, SmallSpansAreNotSplit) {
  Former f(kSplit);
  f.track(kX, 10, 9, kT0).track(kY, 60, 9, kT0);  // spans 9 < 10
  EXPECT_EQ(f.run().size(), 1U);
  EXPECT_EQ(f.counters.value("events.split.attempted"), 0U);
}

}  // namespace
}  // namespace efu::nmx
