// The host's live histograms (efu/live_histograms.h): bin edges and binning against a plain
// search over the edges, windows of N pulses, empty windows, flush, range counters, the da00
// variables as published, and the tee in front of an ev44 sink.
#include "efu/live_histograms.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "efu/counters.h"
#include "efu/errors.h"
#include "recorded_da00.h"

namespace efu {
namespace {

using efu::test::RecordingHistogramSink;

class RecordingEventSink final : public EventSink {
 public:
  void add(std::uint64_t pulse, std::uint32_t tof, std::uint32_t pixel) override {
    events.push_back({pulse, tof, pixel});
  }
  struct Event {
    std::uint64_t pulse;
    std::uint32_t tof;
    std::uint32_t pixel;
  };
  std::vector<Event> events;
};

LiveHistogramSettings settings(std::uint32_t pulses, std::uint32_t bins, std::uint32_t max_ns,
                               std::uint32_t pixels) {
  LiveHistogramSettings s;
  s.topic = "live";
  s.pulses = pulses;
  s.tof_bins = bins;
  s.tof_max_ns = max_ns;
  s.pixels = pixels;
  return s;
}

// The bin by definition: the i with edge[i] <= tof < edge[i+1] (the last edge not above tof,
// found by binary search over the sorted edges), or `bins` beyond the range.
std::uint32_t bin_by_search(const std::vector<std::int32_t>& edges, std::uint32_t tof) {
  if (static_cast<std::int64_t>(tof) >= edges.back())
    return static_cast<std::uint32_t>(edges.size() - 1);
  const auto above = std::upper_bound(edges.begin(), edges.end(), static_cast<std::int64_t>(tof),
                                      [](std::int64_t t, std::int32_t e) { return t < e; });
  return static_cast<std::uint32_t>(above - edges.begin() - 1);
}

TEST(LiveHistograms, EdgesAreFloorOfIMaxOverBins) {
  CounterRegistry counters;
  RecordingHistogramSink tof, pix;
  LiveHistograms h(settings(1, 3, 1000, 4), tof, pix, counters);
  // floor(i · 1000 / 3) for i = 0..3
  EXPECT_EQ(h.tof_edges(), (std::vector<std::int32_t>{0, 333, 666, 1000}));
  EXPECT_EQ(h.tof_bin(0), 0U);
  EXPECT_EQ(h.tof_bin(332), 0U);
  EXPECT_EQ(h.tof_bin(333), 1U);
  EXPECT_EQ(h.tof_bin(665), 1U);
  EXPECT_EQ(h.tof_bin(666), 2U);
  EXPECT_EQ(h.tof_bin(999), 2U);
  EXPECT_EQ(h.tof_bin(1000), 3U);  // beyond: the bin count
  EXPECT_EQ(h.tof_bin(0xFFFFFFFFU), 3U);
}

TEST(LiveHistograms, EveryTofNearAnEdgeFallsInTheBinTheEdgesDefine) {
  // Ranges and bin counts whose ratio is not an integer, where the double estimate of the bin
  // is most likely to be one off.
  const std::uint32_t cases[][2] = {{71'428'571, 500},          {71'428'571, 7}, {1'000'003, 999},
                                    {2'147'483'647, 1'000'000}, {10, 10},        {997, 13}};
  for (const auto& c : cases) {
    CounterRegistry counters;
    RecordingHistogramSink tof, pix;
    LiveHistograms h(settings(1, c[1], c[0], 1), tof, pix, counters);
    const std::vector<std::int32_t>& edges = h.tof_edges();
    ASSERT_EQ(edges.size(), c[1] + 1U);
    ASSERT_EQ(edges.front(), 0);
    ASSERT_EQ(static_cast<std::uint32_t>(edges.back()), c[0]);
    std::uint32_t checked = 0;
    for (std::size_t i = 0; i < edges.size(); i += 1 + edges.size() / 2000) {
      for (std::int64_t d = -2; d <= 2; ++d) {
        const std::int64_t t = edges[i] + d;
        if (t < 0 || t > 0xFFFFFFFFLL) continue;
        const auto tof_ns = static_cast<std::uint32_t>(t);
        ASSERT_EQ(h.tof_bin(tof_ns), bin_by_search(edges, tof_ns))
            << "max " << c[0] << " bins " << c[1] << " tof " << tof_ns;
        ++checked;
      }
    }
    EXPECT_GT(checked, 0U);
  }
}

TEST(LiveHistograms, PublishesEveryNPulsesWithTheLastPulsesTimestamp) {
  CounterRegistry counters;
  RecordingHistogramSink tof, pix;
  LiveHistograms h(settings(2, 4, 400, 3), tof, pix, counters);  // bins of 100 ns
  h.add(1000, 50, 1);                                            // pulse 1000: bin 0, pixel 1
  h.add(1000, 150, 2);                                           //             bin 1, pixel 2
  h.add(2000, 399, 2);                                           // pulse 2000: bin 3, pixel 2
  EXPECT_TRUE(tof.messages.empty());
  const std::uint32_t tofs[] = {250, 260};
  const std::uint32_t pixels[] = {3, 3};
  h.add_pulse(3000, tofs, pixels, 2);  // the third pulse closes the window of two
  ASSERT_EQ(tof.messages.size(), 1U);
  ASSERT_EQ(pix.messages.size(), 1U);
  EXPECT_EQ(tof.messages[0].timestamp_ns, 2000U);
  EXPECT_EQ(pix.messages[0].timestamp_ns, 2000U);
  EXPECT_EQ(tof.messages[0].variables.at(1).values<std::uint32_t>(),
            (std::vector<std::uint32_t>{1, 1, 0, 1}));
  EXPECT_EQ(pix.messages[0].variables.at(1).values<std::uint32_t>(),
            (std::vector<std::uint32_t>{1, 2, 0}));
  EXPECT_EQ(counters.value("histograms.published"), 1U);

  h.flush();  // the open window holds pulse 3000's two events
  ASSERT_EQ(tof.messages.size(), 2U);
  EXPECT_EQ(tof.messages[1].timestamp_ns, 3000U);
  EXPECT_EQ(tof.messages[1].variables.at(1).values<std::uint32_t>(),
            (std::vector<std::uint32_t>{0, 0, 2, 0}));
  EXPECT_EQ(pix.messages[1].variables.at(1).values<std::uint32_t>(),
            (std::vector<std::uint32_t>{0, 0, 2}));
  h.flush();  // nothing new: nothing sent, and not counted as skipped
  EXPECT_EQ(tof.messages.size(), 2U);
  EXPECT_EQ(counters.value("histograms.published"), 2U);
  EXPECT_EQ(counters.value("histograms.skipped_empty"), 0U);
}

TEST(LiveHistograms, AnEarlierPulseCountsInTheOpenWindowAndARestartedClockStartsAPulse) {
  CounterRegistry counters;
  RecordingHistogramSink tof, pix;
  LiveHistograms h(settings(2, 1, 100, 4), tof, pix, counters);
  h.add(1000, 1, 1);
  h.add(2000, 1, 2);
  h.add(1000, 1, 3);  // pulse 1000 again (clusters of two pulses closed in turn): no new pulse
  h.add(2000, 1, 4);
  EXPECT_TRUE(tof.messages.empty());
  h.add(3000, 1, 1);  // the third pulse closes the window of two
  ASSERT_EQ(pix.messages.size(), 1U);
  EXPECT_EQ(pix.messages[0].timestamp_ns, 2000U);
  EXPECT_EQ(pix.messages[0].variables.at(1).values<std::uint32_t>(),
            (std::vector<std::uint32_t>{1, 1, 1, 1}));
  // Far earlier than the latest: the clock started again, a new pulse (the window's second).
  h.add(3000 + LiveHistograms::kPulseRestartNs + 1, 1, 2);
  h.add(5, 1, 3);  // more than kPulseRestartNs before the latest
  EXPECT_EQ(pix.messages.size(), 2U) << "the restart was the window's third pulse";
  h.flush();
  ASSERT_EQ(pix.messages.size(), 3U);
  EXPECT_EQ(pix.messages[2].timestamp_ns, 5U);
}

TEST(LiveHistograms, DescribesBothArraysAsDa00Variables) {
  CounterRegistry counters;
  RecordingHistogramSink tof, pix;
  LiveHistograms h(settings(1, 2, 10, 3), tof, pix, counters);
  h.add(7, 1, 1);
  h.flush();
  ASSERT_EQ(tof.messages.size(), 1U);
  const auto& t = tof.messages[0].variables;
  ASSERT_EQ(t.size(), 2U);
  EXPECT_EQ(t[0].name, "frame_time");
  EXPECT_EQ(t[0].unit, std::optional<std::string>("ns"));
  EXPECT_EQ(t[0].axes, std::vector<std::string>{"frame_time"});
  EXPECT_EQ(t[0].shape, std::vector<std::int64_t>{3});
  EXPECT_EQ(t[0].type, Da00Type::int32);
  EXPECT_EQ(t[0].values<std::int32_t>(), (std::vector<std::int32_t>{0, 5, 10}));
  EXPECT_EQ(t[1].name, "signal");
  EXPECT_EQ(t[1].unit, std::optional<std::string>("counts"));
  EXPECT_EQ(t[1].shape, std::vector<std::int64_t>{2});
  EXPECT_EQ(t[1].type, Da00Type::uint32);
  const auto& p = pix.messages.at(0).variables;
  ASSERT_EQ(p.size(), 2U);
  EXPECT_EQ(p[0].name, "pixel_id");
  EXPECT_EQ(p[0].type, Da00Type::int32);
  EXPECT_EQ(p[0].values<std::int32_t>(), (std::vector<std::int32_t>{1, 2, 3}));
  EXPECT_EQ(p[1].name, "signal");
  EXPECT_EQ(p[1].axes, std::vector<std::string>{"pixel_id"});
  EXPECT_EQ(p[1].values<std::uint32_t>(), (std::vector<std::uint32_t>{1, 0, 0}));
}

TEST(LiveHistograms, OutOfRangeEventsAreCountedAndAWindowOfOnlyThoseIsSkipped) {
  CounterRegistry counters;
  RecordingHistogramSink tof, pix;
  LiveHistograms h(settings(1, 2, 100, 4), tof, pix, counters);
  h.add(1, 100, 0);  // TOF at the range's end and pixel 0: counted in neither histogram
  h.add(1, 500, 5);  // beyond, and above the 4 pixels
  h.add(2, 10, 4);   // pulse 2 closes pulse 1's window, which is empty
  EXPECT_TRUE(tof.messages.empty());
  EXPECT_EQ(counters.value("histograms.skipped_empty"), 1U);
  EXPECT_EQ(counters.value("histograms.tof.beyond_range"), 2U);
  EXPECT_EQ(counters.value("histograms.pixels.out_of_range"), 2U);
  h.add(2, 200, 1);  // TOF beyond, pixel in range: the window is not empty
  h.flush();
  ASSERT_EQ(tof.messages.size(), 1U);
  EXPECT_EQ(tof.messages[0].variables.at(1).values<std::uint32_t>(),
            (std::vector<std::uint32_t>{1, 0}));
  EXPECT_EQ(pix.messages[0].variables.at(1).values<std::uint32_t>(),
            (std::vector<std::uint32_t>{1, 0, 0, 1}));
  EXPECT_EQ(counters.value("histograms.tof.beyond_range"), 3U);
}

TEST(LiveHistograms, EveryEventIsInOneWindowAcrossManyPulses) {
  CounterRegistry counters;
  RecordingHistogramSink tof, pix;
  LiveHistograms h(settings(3, 10, 1000, 50), tof, pix, counters);
  std::uint64_t sent = 0;
  for (std::uint64_t pulse = 1; pulse <= 20; ++pulse) {
    for (std::uint32_t i = 0; i < pulse; ++i) {
      h.add(pulse * 71'428'571, (i * 97) % 1000, 1 + (i % 50));
      ++sent;
    }
  }
  h.flush();
  // 20 pulses in windows of 3: 6 closed by a pulse change and the 7th (two pulses) by flush.
  EXPECT_EQ(tof.messages.size(), 7U);
  std::uint64_t tof_total = 0, pixel_total = 0;
  for (const efu::test::RecordedArray& a : tof.messages) {
    for (std::uint32_t c : a.variables.at(1).values<std::uint32_t>()) tof_total += c;
  }
  for (const efu::test::RecordedArray& a : pix.messages) {
    for (std::uint32_t c : a.variables.at(1).values<std::uint32_t>()) pixel_total += c;
  }
  EXPECT_EQ(tof_total, sent);
  EXPECT_EQ(pixel_total, sent);
  EXPECT_EQ(tof.messages[0].timestamp_ns, 3U * 71'428'571);
  EXPECT_EQ(tof.messages[6].timestamp_ns, 20U * 71'428'571);
}

TEST(LiveHistograms, BadSettingsAreConfigErrors) {
  CounterRegistry counters;
  RecordingHistogramSink tof, pix;
  EXPECT_THROW(LiveHistograms(settings(0, 10, 100, 10), tof, pix, counters), ConfigError);
  EXPECT_THROW(LiveHistograms(settings(1, 0, 100, 10), tof, pix, counters), ConfigError);
  EXPECT_THROW(LiveHistograms(settings(1, 101, 100, 10), tof, pix, counters), ConfigError);
  EXPECT_THROW(LiveHistograms(settings(1, 10, 100, 0), tof, pix, counters), ConfigError);
  EXPECT_THROW(
      LiveHistograms(settings(1, 10, 100, kMaxLiveHistogramPixels + 1), tof, pix, counters),
      ConfigError);
  EXPECT_NO_THROW(
      LiveHistograms(settings(1, 100, 100, kMaxLiveHistogramPixels), tof, pix, counters));
}

TEST(HistogrammedSink, PassesEveryEventOnUnchangedAndCountsIt) {
  CounterRegistry counters;
  RecordingHistogramSink tof, pix;
  LiveHistograms h(settings(1, 1, 100, 10), tof, pix, counters);
  RecordingEventSink next;
  HistogrammedSink tee(next, h);
  tee.add(5, 10, 3);
  const std::uint32_t tofs[] = {20, 30};
  const std::uint32_t pixels[] = {4, 4};
  tee.add_pulse(6, tofs, pixels, 2);
  ASSERT_EQ(next.events.size(), 3U);
  EXPECT_EQ(next.events[0].pulse, 5U);
  EXPECT_EQ(next.events[0].tof, 10U);
  EXPECT_EQ(next.events[0].pixel, 3U);
  EXPECT_EQ(next.events[2].pulse, 6U);
  EXPECT_EQ(next.events[2].tof, 30U);
  EXPECT_EQ(next.events[2].pixel, 4U);
  h.flush();
  ASSERT_EQ(pix.messages.size(), 2U);  // pulse 5 closed by pulse 6, then pulse 6 by flush
  EXPECT_EQ(pix.messages[0].variables.at(1).values<std::uint32_t>()[2], 1U);
  EXPECT_EQ(pix.messages[1].variables.at(1).values<std::uint32_t>()[3], 2U);
}

}  // namespace
}  // namespace efu
