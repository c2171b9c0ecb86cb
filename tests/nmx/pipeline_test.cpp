// The nmx pipeline end to end in process (docs/nmx.md): hand-worked pixels at every panel's
// corners and inside, the same events whatever the readout order, the accounting, the options
// and the plugin as efu loads it.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "built_plugin.h"
#include "config_error_of.h"
#include "efu/errors.h"
#include "nmx_pipeline.h"
#include "nmx_test_support.h"

namespace efu::nmx {
namespace {

using test::PacketBuilder;
using test::RecordingSink;

NmxSettings shipped_settings() {
  NmxSettings s;
  s.geometry_path = std::string(EFU_NMX_CONFIGS_DIR) + "/nmx.json";
  return s;
}

PacketView view(const std::vector<std::uint8_t>& p) {
  return PacketView{p.data(), static_cast<std::uint32_t>(p.size())};
}

// A strip as nmx.json wires it: FEN, VMM, channel (ring 0).
struct Strip {
  std::uint8_t fen, vmm, channel;
};
struct PixelCase {
  Strip x, y;
  std::uint32_t pixel;  // 1 + x + 1280 * y, worked by hand
};

// Corners of each panel: x = 0/639 or 640/1279 and y likewise, then one inner pixel each.
const PixelCase kPixels[] = {
    // panel 0: x on FEN 0 (reversed, hybrid 4 from 0, hybrid 0 from 512), y on FEN 7 (normal)
    {{0, 9, 63}, {7, 0, 0}, 1},        // (0, 0)
    {{0, 0, 0}, {7, 0, 0}, 640},       // (639, 0)
    {{0, 9, 63}, {7, 9, 63}, 817921},  // (0, 639)
    {{0, 0, 0}, {7, 9, 63}, 818560},   // (639, 639)
    {{0, 5, 19}, {7, 3, 8}, 256301},   // (300, 200)
    // panel 1: x on FEN 1 (reversed, 640..1279), y on FEN 2 (reversed, 0..639)
    {{1, 9, 63}, {2, 9, 63}, 641},    // (640, 0)
    {{1, 0, 0}, {2, 9, 63}, 1280},    // (1279, 0)
    {{1, 9, 63}, {2, 0, 0}, 818561},  // (640, 639)
    {{1, 0, 0}, {2, 0, 0}, 819200},   // (1279, 639)
    {{1, 9, 3}, {2, 8, 27}, 128701},  // (700, 100)
    // panel 2: x on FEN 5 (normal, 0..639), y on FEN 6 (normal, 640..1279)
    {{5, 0, 0}, {6, 0, 0}, 819201},     // (0, 640)
    {{5, 9, 63}, {6, 0, 0}, 819840},    // (639, 640)
    {{5, 0, 0}, {6, 9, 63}, 1637121},   // (0, 1279)
    {{5, 9, 63}, {6, 9, 63}, 1637760},  // (639, 1279)
    {{5, 1, 36}, {6, 8, 48}, 1536101},  // (100, 1200)
    // panel 3: x on FEN 4 (normal, 640..1279), y on FEN 3 (reversed, 640..1279)
    {{4, 0, 0}, {3, 9, 63}, 819841},    // (640, 640)
    {{4, 9, 63}, {3, 9, 63}, 820480},   // (1279, 640)
    {{4, 0, 0}, {3, 0, 0}, 1637761},    // (640, 1279)
    {{4, 9, 63}, {3, 0, 0}, 1638400},   // (1279, 1279)
    {{4, 5, 40}, {3, 5, 59}, 1153001},  // (1000, 900)
};

TEST(NmxPipeline, PixelsAtEveryPanelsCornersAndInside) {
  CounterRegistry counters;
  RecordingSink sink;
  NmxPipeline pipeline(shipped_settings(), counters, sink);
  PacketBuilder packet;
  std::uint64_t tof = 10'000;
  for (const PixelCase& c : kPixels) {
    packet.hit(0, c.x.fen, c.x.vmm, c.x.channel, 300, tof);
    packet.hit(1, c.y.fen, c.y.vmm, c.y.channel, 300, tof + 5);
    tof += 10'000;
  }
  const auto bytes = packet.build();
  pipeline.process(PacketBatch(std::vector<PacketView>{view(bytes)}));
  pipeline.flush();
  ASSERT_EQ(sink.events.size(), std::size(kPixels));
  std::vector<std::uint32_t> got;
  for (const auto& e : sink.events) got.push_back(e.pixel);
  std::vector<std::uint32_t> want;
  for (const PixelCase& c : kPixels) want.push_back(c.pixel);
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
  EXPECT_EQ(counters.value("events.formed"), std::size(kPixels));
}

// Random tracks on random panels of nmx.json: per event 3..6 x strips and 2..5 y strips
// (neighbours, 20 ns apart), events 2 us apart, so every group is one event.
std::vector<std::vector<std::uint8_t>> track_readouts(std::uint32_t events, std::mt19937& rng) {
  const Config config = Config::from_file(shipped_settings().geometry_path);
  std::vector<std::vector<std::uint8_t>> out;
  for (std::uint32_t n = 0; n < events; ++n) {
    const std::uint32_t panel = rng() % 4;
    const std::uint64_t t = test::kPulseNs + 10'000 + 2'000ULL * n;
    for (std::uint32_t plane = 0; plane < 2; ++plane) {
      const std::uint32_t count = (plane == kX ? 3 : 2) + rng() % 4;
      // nmx.json: panel p has x from 640 * (p & 1) and y from 640 * (p >> 1).
      const std::uint32_t base = 640 * (plane == kX ? panel & 1U : panel >> 1U);
      const std::uint32_t first = base + rng() % (640 - count);
      for (std::uint32_t i = 0; i < count; ++i) {
        Config::Channel ch{};
        EXPECT_TRUE(config.channel_of(panel, plane, first + i, ch));
        const HybridConfig& h = config.hybrid(ch.hybrid_index);
        const ess::EssTime et = ess::to_ess(t + 20 * i);
        out.push_back(test::readout_bytes(
            static_cast<std::uint8_t>(h.ring * 2 + (rng() & 1)), h.fen, 20, et.high, et.low,
            static_cast<std::uint16_t>(60 + rng() % 900), 0, ch.vmm, ch.channel));
      }
    }
  }
  return out;
}

std::vector<test::Event> run_packets(const std::vector<std::vector<std::uint8_t>>& packets,
                                     CounterRegistry& counters) {
  RecordingSink sink;
  NmxPipeline pipeline(shipped_settings(), counters, sink);
  for (const auto& p : packets) pipeline.process(PacketBatch(std::vector<PacketView>{view(p)}));
  pipeline.flush();
  std::sort(sink.events.begin(), sink.events.end());
  return sink.events;
}

std::vector<std::vector<std::uint8_t>> pack(const std::vector<std::vector<std::uint8_t>>& readouts,
                                            std::size_t per_packet) {
  std::vector<std::vector<std::uint8_t>> packets;
  for (std::size_t i = 0; i < readouts.size(); i += per_packet) {
    PacketBuilder b(static_cast<std::uint32_t>(packets.size()));
    for (std::size_t k = i; k < std::min(readouts.size(), i + per_packet); ++k) b.raw(readouts[k]);
    packets.push_back(b.build());
  }
  return packets;
}

TEST(NmxPipeline, OrderedAndShuffledGiveTheSameEvents) {
  std::mt19937 rng(24);
  const auto readouts = track_readouts(400, rng);
  CounterRegistry ordered_counters;
  const auto ordered = run_packets(pack(readouts, 100), ordered_counters);
  EXPECT_EQ(ordered.size(), 400U);  // spans 2..6, time spans 21..101: all pass
  // Shuffled inside each packet of 100 readouts.
  auto shuffled_readouts = readouts;
  for (std::size_t i = 0; i < shuffled_readouts.size(); i += 100) {
    std::shuffle(shuffled_readouts.begin() + static_cast<std::ptrdiff_t>(i),
                 shuffled_readouts.begin() +
                     static_cast<std::ptrdiff_t>(std::min(i + 100, shuffled_readouts.size())),
                 rng);
  }
  CounterRegistry shuffled_counters;
  EXPECT_EQ(run_packets(pack(shuffled_readouts, 100), shuffled_counters), ordered);
  // Shuffled across the whole stream but within the reorder window (all 400 events span 0.8 ms).
  auto all = readouts;
  std::shuffle(all.begin(), all.end(), rng);
  CounterRegistry all_counters;
  EXPECT_EQ(run_packets(pack(all, 100), all_counters), ordered);
  for (CounterRegistry* c : {&ordered_counters, &shuffled_counters, &all_counters}) {
    EXPECT_EQ(c->value("hits.late"), 0U);
    EXPECT_EQ(c->value("readouts.accepted"), readouts.size());
    EXPECT_EQ(c->value("events.groups"), c->value("events.formed"));
  }
}

TEST(NmxPipeline, AnEventSplitAcrossPacketsIsFormedOnce) {
  CounterRegistry counters;
  RecordingSink sink;
  NmxPipeline pipeline(shipped_settings(), counters, sink);
  const auto first = PacketBuilder(0).hit(0, 0, 5, 19, 300, 10'000).build();     // x = 300
  const auto second = PacketBuilder(1).hit(1, 7, 3, 8, 200, 10'100).build();     // y = 200
  const auto third = PacketBuilder(2).hit(0, 0, 5, 20, 300, 2'010'000).build();  // 2 ms on
  for (const auto* p : {&first, &second, &third}) {
    pipeline.process(PacketBatch(std::vector<PacketView>{view(*p)}));
  }
  ASSERT_EQ(sink.events.size(), 1U) << "the first group is closed by the third packet";
  EXPECT_EQ(sink.events[0].pixel, 256301U);
  EXPECT_EQ(sink.events[0].tof_ns, test::quantised_tof(10'100));
  pipeline.flush();
  EXPECT_EQ(counters.value("events.rejected.no_match_y"), 1U);  // the third packet's lone x
  EXPECT_EQ(counters.value("events.groups"),
            counters.value("events.formed") + counters.value("events.rejected.no_match_y"));
}

TEST(NmxPipeline, TickClosesAQuietPanelAfterTheTimeout) {
  CounterRegistry counters;
  RecordingSink sink;
  NmxPipeline pipeline(shipped_settings(), counters, sink);
  const auto packet =
      PacketBuilder().hit(0, 0, 5, 19, 300, 10'000).hit(1, 7, 3, 8, 200, 10'005).build();
  pipeline.process(PacketBatch(std::vector<PacketView>{view(packet)}));
  pipeline.tick(1'000'000'000);
  EXPECT_TRUE(sink.events.empty());
  pipeline.tick(1'100'000'000);  // 100 ms quiet: below the 200 ms timeout
  EXPECT_TRUE(sink.events.empty());
  pipeline.tick(1'200'000'000);
  EXPECT_EQ(sink.events.size(), 1U);
}

// The fuzz seed tests/fuzz/corpus/nmx_packets/one_track (datagrams: 2-byte length, bytes) is a
// track on panel 0: x strips 300, 301, 302 and y 200, 201, the latest of each last.
TEST(NmxPipeline, FuzzSeedOneTrackIsAnEvent) {
  std::ifstream in(std::string(EFU_SOURCE_DIR) + "/tests/fuzz/corpus/nmx_packets/one_track",
                   std::ios::binary);
  const std::vector<std::uint8_t> seed((std::istreambuf_iterator<char>(in)),
                                       std::istreambuf_iterator<char>());
  ASSERT_GE(seed.size(), 2U);
  const std::size_t length = seed[0] | seed[1] << 8;
  ASSERT_EQ(seed.size(), 2 + length);
  CounterRegistry counters;
  RecordingSink sink;
  NmxPipeline pipeline(shipped_settings(), counters, sink);
  pipeline.process(PacketBatch(
      std::vector<PacketView>{PacketView{seed.data() + 2, static_cast<std::uint32_t>(length)}}));
  pipeline.flush();
  ASSERT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(sink.events[0].pixel, 1U + 302 + 1280 * 201);  // 257583
  EXPECT_EQ(counters.value("readouts.accepted"), 5U);
}

OptionValues defaults() {
  OptionValues values;
  for (std::size_t i = 0; i < kOptionCount; ++i) {
    values.set(kOptions[i].name, kOptions[i].default_value, false);
  }
  return values;
}

TEST(NmxOptions, DefaultsAndRangeErrors) {
  const NmxSettings s = settings_from_options(defaults());
  EXPECT_NE(s.geometry_path.find("nmx.json"), std::string::npos);
  EXPECT_TRUE(s.calibration_path.empty());
  EXPECT_EQ(s.max_tof_ns, 1'000'000'000U);
  EXPECT_EQ(s.max_time_gap_ns, 0U);
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"max-tof-ns", "0"},
                                                        {"reorder-buffer-hits", "10"},
                                                        {"cluster-timeout-ms", "0"},
                                                        {"max-time-gap-ns", "-1"}}) {
    OptionValues v = defaults();
    v.set(name, value, true);
    const std::string e = efu::test::config_error_of([&] { settings_from_options(v); });
    EXPECT_NE(e.find(name), std::string::npos) << e;
  }
}

TEST(NmxOptions, TimeGapIsTheLargerOfTheFilesUnlessGiven) {
  NmxSettings s = shipped_settings();
  EXPECT_EQ(load_shared(s)->events.max_time_gap_ns, 500U);  // max(200, 500)
  s.max_time_gap_ns = 300;
  EXPECT_EQ(load_shared(s)->events.max_time_gap_ns, 300U);
}

TEST(NmxPlugin, DescriptorAsEfuLoadsIt) {
  efu::test::BuiltPlugin plugin("nmx");
  ASSERT_NE(plugin.descriptor(), nullptr) << plugin.error();
  const PluginDescriptor& d = *plugin.descriptor();
  EXPECT_STREQ(d.name, "nmx");
  std::vector<std::string> names;
  for (std::size_t i = 0; i < d.option_count; ++i) names.push_back(d.options[i].name);
  for (const char* want : {"geometry", "calibration", "max-tof-ns", "reorder-window-ns",
                           "reorder-buffer-hits", "cluster-timeout-ms"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
}

}  // namespace
}  // namespace efu::nmx
