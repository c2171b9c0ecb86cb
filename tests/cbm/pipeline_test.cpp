// The cbm pipeline on byte-literal packets: one case per rejection (its counter moves by one and
// nothing else does), and what each monitor type publishes on its own source (0D ev44 and da00,
// 2D, IBM ev44, IBM da00 summed and averaged, BEER), worked out by hand.
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cbm_pipeline.h"
#include "cbm_test_support.h"

namespace efu::cbm {
namespace {

using namespace test;  // NOLINT: the test support's helpers

constexpr std::uint8_t k0D = 1;
constexpr std::uint8_t k2D = 2;
constexpr std::uint8_t kIbm = 3;

// --- Rejections ------------------------------------------------------------------------------

struct Rejection {
  const char* name;
  std::vector<std::uint8_t> readout;  // one block after the header
  const char* counter;                // the one error counter it must move
  const char* config_root = "";       // extra root keys of the test config
};

std::vector<std::uint8_t> with_length(std::uint16_t length) {
  auto r = at(kPulseNs, 1000, 0, 0, k0D);
  r[2] = static_cast<std::uint8_t>(length);
  r[3] = static_cast<std::uint8_t>(length >> 8);
  return r;
}

std::vector<std::uint8_t> with_low(std::uint32_t low) {
  return readout(kFiber, 0, 20, static_cast<std::uint32_t>(kPulseNs / 1'000'000'000), low, k0D, 0,
                 0, 0);
}

std::vector<Rejection> rejections() {
  return {
      {"length", with_length(19), "readouts.errors.length"},
      {"fiber", at(kPulseNs, 1000, 0, 0, k0D, 0, 24), "readouts.errors.fiber"},
      {"time_fraction", with_low(88'052'500), "readouts.errors.time_fraction"},
      {"type_zero", at(kPulseNs, 1000, 0, 0, 0), "readouts.errors.type"},
      {"type_four", at(kPulseNs, 1000, 0, 0, 4), "readouts.errors.type"},
      {"ring", at(kPulseNs, 1000, 0, 0, k0D), "readouts.errors.ring",
       R"("MaxRing": 10, "MonitorRing": 5,)"},
      {"monitor_ring", at(kPulseNs, 1000, 0, 0, k0D, 0, 0), "readouts.errors.monitor_ring"},
      {"fen", at(kPulseNs, 1000, 4, 0, k0D), "readouts.errors.fen"},
      {"channel_unused_fen", at(kPulseNs, 1000, 3, 0, k0D), "readouts.errors.channel"},
      {"channel_unused", at(kPulseNs, 1000, 0, 9, k0D), "readouts.errors.channel"},
      {"type_mismatch", at(kPulseNs, 1000, 0, 0, k2D), "readouts.errors.type_mismatch"},
      {"type_mismatch_ibm", at(kPulseNs, 1000, 2, 0, k0D), "readouts.errors.type_mismatch"},
      {"xpos", at(kPulseNs, 1000, 1, 0, k2D, position(512, 0)), "readouts.errors.xpos"},
      {"ypos", at(kPulseNs, 1000, 1, 0, k2D, position(0, 256)), "readouts.errors.ypos"},
      // Before the previous pulse (kPulseNs - one period): no pulse to measure it from.
      {"tof_negative", at(kPulseNs - 2 * kPeriodNs, 0, 0, 0, k0D), "readouts.errors.tof_negative"},
      {"tof_too_large", at(kPulseNs, 1'000'001'000, 0, 0, k0D), "readouts.errors.tof_too_large"},
      // 0D da00 "h0d" covers 1 ms: 1.5 ms is past its last bin.
      {"tof_beyond_period", at(kPulseNs, 1'500'000, 0, 1, k0D),
       "readouts.errors.tof_beyond_period"},
  };
}

void PrintTo(const Rejection& r, std::ostream* os) { *os << r.name; }

class CbmRejection : public ::testing::TestWithParam<Rejection> {};

TEST_P(CbmRejection, CountsOnceAndNothingElseMoves) {
  const Rejection& r = GetParam();
  Harness h(cbm_config(r.config_root));
  const auto before = h.snapshot();
  h.feed(CbmPacket().raw(r.readout).build());
  auto after = h.snapshot();
  EXPECT_EQ(after[r.counter], before.at(r.counter) + 1);
  EXPECT_EQ(after["readouts.received"], 1U);
  EXPECT_EQ(after["parser.essheader.packets"], 1U);
  for (const auto& [name, value] : after) {
    if (name == r.counter || name == "readouts.received" || name == "parser.essheader.packets") {
      continue;
    }
    EXPECT_EQ(value, before.at(name)) << name << " moved";
  }
  EXPECT_EQ(h.unaccounted(), 0);
  for (const auto& [name, sink] : h.sources.event_sinks) EXPECT_TRUE(sink->events.empty()) << name;
  EXPECT_TRUE(h.host_events.events.empty());
}

INSTANTIATE_TEST_SUITE_P(Readouts, CbmRejection, ::testing::ValuesIn(rejections()),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(CbmPipeline, TruncatedTailIsCountedAndTheWholeReadoutBeforeItUsed) {
  Harness h(cbm_config());
  auto tail = at(kPulseNs, 1000, 0, 0, k0D);
  tail.resize(7);
  h.feed(CbmPacket().raw(at(kPulseNs, 1000, 0, 0, k0D)).raw(tail).build());
  EXPECT_EQ(h.value("readouts.received"), 2U);
  EXPECT_EQ(h.value("readouts.errors.truncated"), 1U);
  EXPECT_EQ(h.value("readouts.accepted.event_0d"), 1U);
  EXPECT_EQ(h.sources.events_of("m0d").size(), 1U);
  EXPECT_EQ(h.unaccounted(), 0);
}

TEST(CbmPipeline, HeaderRejectionsAreTheHeaderParsers) {
  Harness h(cbm_config());
  // BEER's type byte on a CBM config.
  h.feed(CbmPacket(0, 0, 0x50).raw(at(kPulseNs, 1000, 0, 0, k0D)).build());
  EXPECT_EQ(h.value("parser.essheader.errors.type"), 1U);
  // The previous pulse 2 s before the pulse: beyond MaxPulseTimeDiffNS (1 s).
  h.feed(CbmPacket(1)
             .pulse(kPulseNs, kPulseNs - 2'000'000'000)
             .raw(at(kPulseNs, 1000, 0, 0, k0D))
             .build());
  EXPECT_EQ(h.value("parser.essheader.errors.pulse_time_diff"), 1U);
  EXPECT_EQ(h.value("readouts.received"), 0U);
  EXPECT_TRUE(h.sources.events_of("m0d").empty());
}

// --- What each type publishes ------------------------------------------------------------------

TEST(CbmPipeline, Event0DEv44IsThePixelOffset) {
  Harness h(cbm_config());
  h.feed(
      CbmPacket().raw(at(kPulseNs, 12'345, 0, 0, k0D)).raw(at(kPulseNs, 500, 0, 0, k0D)).build());
  const std::vector<Event> expected{{decoded(kPulseNs), quantised_tof(12'345), 7},
                                    {decoded(kPulseNs), quantised_tof(500), 7}};
  EXPECT_EQ(h.sources.events_of("m0d"), expected);
  EXPECT_EQ(h.value("readouts.accepted.event_0d"), 2U);
  EXPECT_TRUE(h.host_events.events.empty());  // each monitor has its own source
  EXPECT_EQ(h.unaccounted(), 0);
}

// A readout earlier than the packet's pulse belongs to the previous pulse (the reference's
// getTOF): its event carries that pulse and the TOF from it.
TEST(CbmPipeline, AReadoutBeforeThePulseIsMeasuredFromThePreviousPulse) {
  Harness h(cbm_config());
  const std::uint64_t prev = kPulseNs - kPeriodNs;
  h.feed(CbmPacket().raw(at(prev, 70'000'000, 0, 0, k0D)).build());
  const auto& events = h.sources.events_of("m0d");
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].pulse_ns, decoded(prev));
  EXPECT_EQ(events[0].tof_ns, decoded(prev + 70'000'000) - decoded(prev));
  EXPECT_EQ(events[0].pixel, 7U);
}

// 2D: pixel = 1 + x + Width·y + PixelOffset. x 3, y 2 on 512 × 256 with offset 1024:
// 1 + 3 + 1024 + 1024 = 2052; the last pixel (511, 255): 1 + 511 + 512·255 + 1024 = 132096.
TEST(CbmPipeline, Event2DPixel) {
  Harness h(cbm_config());
  h.feed(CbmPacket()
             .raw(at(kPulseNs, 1000, 1, 0, k2D, position(3, 2)))
             .raw(at(kPulseNs, 2000, 1, 0, k2D, position(511, 255)))
             .raw(at(kPulseNs, 3000, 1, 0, k2D, position(0, 0)))
             .build());
  const auto& events = h.sources.events_of("m2d");
  ASSERT_EQ(events.size(), 3U);
  EXPECT_EQ(events[0].pixel, 2052U);
  EXPECT_EQ(events[1].pixel, 132'096U);
  EXPECT_EQ(events[2].pixel, 1025U);
  EXPECT_EQ(events[1].tof_ns, quantised_tof(2000));
  EXPECT_EQ(h.value("readouts.accepted.event_2d"), 3U);
}

// IBM into ev44: the pixel id carries NADC / MCASum (NADC when MCASum is 0).
TEST(CbmPipeline, IbmEv44CarriesTheNormalisedAdc) {
  Harness h(cbm_config());
  h.feed(CbmPacket()
             .raw(at(kPulseNs, 1000, 2, 0, kIbm, ibm(1000, 4)))
             .raw(at(kPulseNs, 2000, 2, 0, kIbm, ibm(1001, 0)))
             .raw(at(kPulseNs, 3000, 2, 0, kIbm, ibm(0xFFFFFF, 3)))
             .raw(at(kPulseNs, 4000, 2, 0, kIbm, ibm(0xFFFFFE, 255)))  // 255 · 65793 = 0xFFFFFF
             .raw(at(kPulseNs, 5000, 2, 0, kIbm, ibm(254, 255)))
             .build());
  const auto& events = h.sources.events_of("ibm_ev");
  ASSERT_EQ(events.size(), 5U);
  EXPECT_EQ(events[0].pixel, 250U);
  EXPECT_EQ(events[1].pixel, 1001U);
  EXPECT_EQ(events[2].pixel, 0xFFFFFFU / 3);
  EXPECT_EQ(events[3].pixel, 65'792U);
  EXPECT_EQ(events[4].pixel, 0U);
  EXPECT_EQ(h.value("readouts.accepted.ibm"), 5U);
}

TEST(CbmPipeline, IbmWithoutNormalisationKeepsNadc) {
  Harness h(cbm_config(R"("NormalizeIBMReadouts": false,)"));
  h.feed(CbmPacket().raw(at(kPulseNs, 1000, 2, 0, kIbm, ibm(1000, 4))).build());
  ASSERT_EQ(h.sources.events_of("ibm_ev").size(), 1U);
  EXPECT_EQ(h.sources.events_of("ibm_ev")[0].pixel, 1000U);
}

// 0D into da00: 1 per readout in its TOF bin (1 ms / 10 = 100 µs bins); one frame per message,
// published when the next pulse arrives, stamped with its pulse.
TEST(CbmPipeline, Event0DDa00CountsReadoutsPerBin) {
  Harness h(cbm_config());
  h.feed(CbmPacket(0)
             .raw(at(kPulseNs, 150'000, 0, 1, k0D))
             .raw(at(kPulseNs, 250'000, 0, 1, k0D))
             .raw(at(kPulseNs, 299'000, 0, 1, k0D))
             .build());
  EXPECT_TRUE(h.sources.messages_of("h0d").empty());
  h.feed(CbmPacket(1).pulse(kPulseNs + kPeriodNs, kPulseNs).build());  // a heartbeat
  const auto& messages = h.sources.messages_of("h0d");
  ASSERT_EQ(messages.size(), 1U);
  EXPECT_EQ(messages[0].timestamp_ns, decoded(kPulseNs));
  EXPECT_EQ(messages[0].signal(), (std::vector<std::int32_t>{0, 1, 2, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(messages[0].frame_total(), (std::vector<std::uint64_t>{3}));
  EXPECT_EQ(messages[0].get("signal").unit, std::optional<std::string>("A"));
  EXPECT_EQ(h.value("readouts.accepted.event_0d"), 3U);
  h.pipeline.tick(0);
  EXPECT_EQ(h.value("histograms.published"), 1U);
}

// IBM into da00 over 2 frames: NADC/MCASum 100 then 300 in bin 1; summed 400, averaged 200.
// The window closes on the third pulse.
TEST(CbmPipeline, IbmDa00SumsAndAveragesOverAggregatedFrames) {
  Harness h(cbm_config());
  const std::uint64_t p1 = kPulseNs + kPeriodNs;
  const std::uint64_t p2 = kPulseNs + 2 * kPeriodNs;
  h.feed(CbmPacket(0)
             .raw(at(kPulseNs, 150'000, 2, 1, kIbm, ibm(200, 2)))
             .raw(at(kPulseNs, 150'000, 2, 2, kIbm, ibm(200, 2)))
             .build());
  h.feed(CbmPacket(1)
             .pulse(p1, kPulseNs)
             .raw(at(p1, 120'000, 2, 1, kIbm, ibm(300, 1)))
             .raw(at(p1, 120'000, 2, 2, kIbm, ibm(300, 1)))
             .build());
  EXPECT_TRUE(h.sources.messages_of("ibm_sum").empty());
  h.feed(CbmPacket(2).pulse(p2, p1).build());
  const auto& sum = h.sources.messages_of("ibm_sum");
  const auto& avg = h.sources.messages_of("ibm_avg");
  ASSERT_EQ(sum.size(), 1U);
  ASSERT_EQ(avg.size(), 1U);
  EXPECT_EQ(sum[0].signal()[1], 400);
  EXPECT_EQ(avg[0].signal()[1], 200);
  EXPECT_EQ(sum[0].frame_total(), (std::vector<std::uint64_t>{100, 300}));
  EXPECT_EQ(sum[0].timestamp_ns, decoded(p1));  // the window's last pulse
  EXPECT_EQ(h.value("readouts.accepted.ibm"), 4U);
  EXPECT_EQ(h.unaccounted(), 0);
}

// flush() at stop publishes the window that has begun.
TEST(CbmPipeline, FlushPublishesThePendingWindow) {
  Harness h(cbm_config());
  h.feed(CbmPacket().raw(at(kPulseNs, 150'000, 2, 1, kIbm, ibm(50, 1))).build());
  EXPECT_TRUE(h.sources.messages_of("ibm_sum").empty());
  h.pipeline.flush();
  const auto& sum = h.sources.messages_of("ibm_sum");
  ASSERT_EQ(sum.size(), 1U);
  EXPECT_EQ(sum[0].signal()[1], 50);
  EXPECT_TRUE(h.sources.messages_of("h0d").empty());  // an empty window is not published
  EXPECT_EQ(h.value("histograms.published"), 1U);
}

// Every source gets only its own monitor's readouts, in one packet mixing all of them.
TEST(CbmPipeline, EachMonitorPublishesOnItsOwnSource) {
  Harness h(cbm_config());
  h.feed(CbmPacket()
             .raw(at(kPulseNs, 1000, 0, 0, k0D))
             .raw(at(kPulseNs, 1000, 1, 0, k2D, position(1, 1)))
             .raw(at(kPulseNs, 1000, 2, 0, kIbm, ibm(9, 1)))
             .raw(at(kPulseNs, 1000, 0, 9, k0D))  // no monitor
             .build());
  EXPECT_EQ(h.sources.events_of("m0d").size(), 1U);
  EXPECT_EQ(h.sources.events_of("m2d").size(), 1U);
  EXPECT_EQ(h.sources.events_of("ibm_ev").size(), 1U);
  EXPECT_EQ(h.sources.events_of("ibm_ev")[0].pixel, 9U);
  EXPECT_EQ(h.value("readouts.errors.channel"), 1U);
  EXPECT_EQ(h.unaccounted(), 0);
  // Every configured source was asked for, with its schema.
  EXPECT_EQ(h.sources.event_sinks.size(), 3U);
  EXPECT_EQ(h.sources.histogram_sinks.size(), 3U);
}

// BEER: 2D only, under type byte 0x50; any other readout type is counted as `type`.
TEST(CbmPipeline, BeerTakesOnly2D) {
  Harness h(beer_config());
  h.feed(BeerPacket()
             .raw(at(kPulseNs, 1000, 0, 1, k2D, position(2, 1)))
             .raw(at(kPulseNs, 1000, 0, 0, k0D))
             .raw(at(kPulseNs, 1000, 0, 0, kIbm))
             .build());
  const auto& events = h.sources.events_of("beer2");
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].pixel, 1U + 2 + 512 * 1 + 262'144);
  EXPECT_EQ(h.value("readouts.errors.type"), 2U);
  EXPECT_EQ(h.value("readouts.accepted.event_2d"), 1U);
  EXPECT_EQ(h.unaccounted(), 0);
  // A CBM type byte is not BEER's.
  h.feed(CbmPacket(1).raw(at(kPulseNs, 1000, 0, 1, k2D)).build());
  EXPECT_EQ(h.value("parser.essheader.errors.type"), 1U);
}

// Without SourceOutputs (the fuzz driver), ev44 goes to the host's sink and da00 is discarded.
TEST(CbmPipeline, WithoutSourcesEv44GoesToTheHostSink) {
  OptionValues options;
  CounterRegistry counters;
  RecordingSink events;
  auto shared = make_shared(load_config_json(cbm_config(), "t.json"));
  CbmPipeline p(*shared, PipelineContext{options, counters, events, 0, 1, shared.get(), nullptr});
  const auto packet = CbmPacket().raw(at(kPulseNs, 1000, 0, 0, k0D)).build();
  const PacketView view{packet.data(), static_cast<std::uint32_t>(packet.size())};
  p.process(PacketBatch(&view, 1));
  p.flush();
  ASSERT_EQ(events.events.size(), 1U);
  EXPECT_EQ(events.events[0].pixel, 7U);
}

TEST(CbmPipeline, RouteKeyIsOneThreadForEveryPacket) {
  const auto a = CbmPacket(0, 0).build();
  const auto b = CbmPacket(0, 5).build();
  EXPECT_EQ(route_key(PacketView{a.data(), static_cast<std::uint32_t>(a.size())}),
            route_key(PacketView{b.data(), static_cast<std::uint32_t>(b.size())}));
}

}  // namespace
}  // namespace efu::cbm
