#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "efu/errors.h"
#include "multiblade_pipeline.h"
#include "test_support.h"

namespace efu::multiblade {
namespace {

using test::PacketBuilder;
using test::RecordingSink;

OptionValues defaults() {
  OptionValues values;
  for (std::size_t i = 0; i < kOptionCount; ++i) {
    values.set(kOptions[i].name, kOptions[i].default_value, false);
  }
  return values;
}

std::string config_error(const std::string& option, const std::string& value) {
  OptionValues values = defaults();
  values.set(option, value, true);
  try {
    config_from_options(values);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

PacketView view(const std::vector<std::uint8_t>& p) {
  return PacketView{p.data(), static_cast<std::uint32_t>(p.size())};
}

class PipelineTest : public ::testing::Test {
 protected:
  CounterRegistry counters;
  RecordingSink sink;
  MultibladePipeline pipeline{config_from_options(defaults()), counters, sink};
  // Demo geometry, cassette 2 = fiber 1 fen 0: wires are VMM 0 channels 16.., strips VMM 1.
  static constexpr std::uint32_t kCassette = 2;
};

TEST_F(PipelineTest, AnEventSplitAcrossTwoPacketsIsFormedOnce) {
  const auto first = PacketBuilder(0)
                         .hit(1, 0, 0, 16 + 10, 200, 40'000)
                         .hit(1, 0, 0, 16 + 11, 600, 40'010)
                         .build();
  const auto second = PacketBuilder(1)
                          .hit(1, 0, 0, 16 + 12, 200, 40'020)
                          .hit(1, 0, 1, 30, 500, 40'005)
                          .hit(1, 0, 1, 31, 250, 40'030)
                          .build();
  pipeline.process(PacketBatch(std::vector<PacketView>{view(first)}));
  pipeline.process(PacketBatch(std::vector<PacketView>{view(second)}));
  EXPECT_TRUE(sink.events.empty()) << "nothing has closed the group yet";
  const auto third = PacketBuilder(2).hit(1, 0, 0, 16 + 1, 200, 90'000).build();
  pipeline.process(PacketBatch(std::vector<PacketView>{view(third)}));
  ASSERT_EQ(sink.events.size(), 1U);
  const Geometry g = Geometry::from_file(default_geometry_path());
  EXPECT_EQ(sink.events[0].pixel, g.pixel(kCassette, 30, 11));  // strips 30.33, wires 11
  EXPECT_EQ(sink.events[0].tof_ns, test::quantised_tof(40'000));
  EXPECT_EQ(counters.value("events.formed"), 1U);
  EXPECT_EQ(counters.value("parser.essheader.errors.sequence"), 0U);
  pipeline.flush();  // the lone wire at 90 us has no strip
  EXPECT_EQ(counters.value("events.rejected.no_match_strip"), 1U);
}

TEST_F(PipelineTest, BadPacketsAreSkippedAndTheRestOfTheBatchIsUsed) {
  auto bad = PacketBuilder(0).hit(1, 0, 0, 20, 200, 1000).build();
  bad[3] = 'X';
  const auto heartbeat = PacketBuilder(0).build();
  const auto good = PacketBuilder(1).hit(1, 0, 0, 20, 200, 1000).hit(1, 0, 1, 5, 200, 1000).build();
  const std::vector<PacketView> batch{view(bad), view(heartbeat), view(good)};
  pipeline.process(batch);
  pipeline.flush();
  EXPECT_EQ(counters.value("parser.essheader.errors.cookie"), 1U);
  EXPECT_EQ(counters.value("parser.essheader.heartbeats"), 1U);
  EXPECT_EQ(counters.value("parser.essheader.packets"), 2U);
  EXPECT_EQ(sink.events.size(), 1U);
}

TEST_F(PipelineTest, TickClosesGroupsIdleForTheTimeout) {
  const auto p = PacketBuilder(0).hit(1, 0, 0, 20, 200, 1000).hit(1, 0, 1, 5, 200, 1000).build();
  pipeline.process(PacketBatch(std::vector<PacketView>{view(p)}));
  const std::uint64_t t0 = 5'000'000'000;
  pipeline.tick(t0);  // hits were seen since the last tick: the idle clock starts now
  pipeline.tick(t0 + 199'999'999);
  EXPECT_TRUE(sink.events.empty());
  pipeline.tick(t0 + 200'000'000);
  EXPECT_EQ(sink.events.size(), 1U);
}

TEST_F(PipelineTest, RandomlyDamagedPacketsAreEachAccountedForOnce) {
  // Every packet is either accepted by the header parser or lands in exactly one error counter,
  // and every readout of an accepted packet is either accepted or in one readout error counter.
  std::uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>(state >> 33);
  };
  constexpr int kPackets = 2000;
  for (int i = 0; i < kPackets; ++i) {
    PacketBuilder b(static_cast<std::uint32_t>(i));
    for (int k = 0; k < 8; ++k)
      b.hit(1, 0, static_cast<std::uint8_t>(k % 2), 20, 200,
            1000 + 3000 * static_cast<std::uint64_t>(k));
    auto p = b.build();
    const int flips = 1 + static_cast<int>(next() % 4);
    for (int f = 0; f < flips; ++f)
      p[next() % p.size()] ^= static_cast<std::uint8_t>(1 + next() % 255);
    if (next() % 4 == 0) p.resize(1 + next() % p.size());
    pipeline.process(PacketBatch(std::vector<PacketView>{view(p)}));
  }
  pipeline.flush();
  std::uint64_t header_errors = 0;
  for (const char* r : {"padding", "version", "cookie", "type", "length", "output_queue",
                        "time_fraction", "prev_pulse_later"}) {
    header_errors += counters.value(std::string("parser.essheader.errors.") + r);
  }
  EXPECT_EQ(counters.value("parser.essheader.packets") + header_errors, std::uint64_t{kPackets});
  std::uint64_t readout_errors = 0;
  for (const char* r : {"length", "fiber", "fen", "vmm", "channel", "time_fraction",
                        "adc_below_threshold", "tof_negative", "tof_too_large"}) {
    readout_errors += counters.value(std::string("readouts.errors.") + r);
  }
  EXPECT_EQ(counters.value("readouts.accepted") + readout_errors,
            counters.value("readouts.received"));
  EXPECT_GT(counters.value("readouts.accepted"), 0U);
  EXPECT_GT(header_errors, 0U);
}

TEST(MultibladeOptions, BadValuesNameTheOptionAndTheExpectedRange) {
  EXPECT_EQ(config_error("adc-threshold", "1024"),
            "--adc-threshold: '1024' is out of range; expected 0..1023");
  EXPECT_EQ(config_error("max-tof-ns", "0"),
            "--max-tof-ns: '0' is out of range; expected 1..2147483647");
  EXPECT_EQ(config_error("position-algorithm", "median"),
            "--position-algorithm: 'median' is not valid; expected center-of-mass or max-adc");
  EXPECT_EQ(config_error("max-coordinate-gap", "0"),
            "--max-coordinate-gap: '0' is out of range; expected 1..64");
}

TEST(MultibladeOptions, MissingGeometryFileFailsTheConstructor) {
  OptionValues values = defaults();
  values.set("geometry", "/nonexistent.json", true);
  CounterRegistry counters;
  RecordingSink sink;
  EXPECT_THROW(MultibladePipeline(config_from_options(values), counters, sink), ConfigError);
}

TEST(MultibladePlugin, ExportsItsDescriptorAndRoutesByOutputQueue) {
  const char* build = std::getenv("EFU_BUILD_DIR");
  ASSERT_NE(build, nullptr);
  const std::string path = std::string(build) + "/plugins/efu_multiblade.so";
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  using Entry = const PluginDescriptor* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, EFU_PLUGIN_ENTRY_SYMBOL));
  ASSERT_NE(entry, nullptr);
  const PluginDescriptor* d = entry();
  EXPECT_EQ(d->abi_version, kPluginAbiVersion);
  EXPECT_STREQ(d->name, "multiblade");
  EXPECT_EQ(d->option_count, kOptionCount);
  ASSERT_NE(d->route_key, nullptr);
  const auto p = PacketBuilder(0, 7).build();
  EXPECT_EQ(d->route_key(PacketView{p.data(), static_cast<std::uint32_t>(p.size())}), 7U);
  dlclose(handle);
}

}  // namespace
}  // namespace efu::multiblade
