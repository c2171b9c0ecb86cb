// The caen pipeline and plugin: options, the shipped configs of all four instruments, the
// detector type byte, and accounting under random damage.
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "built_plugin.h"
#include "caen_pipeline.h"
#include "efu/errors.h"
#include "efu/ess/packet_assembler.h"
#include "test_support.h"

namespace efu::caen {
namespace {

using test::RecordingSink;

OptionValues defaults() {
  OptionValues values;
  for (std::size_t i = 0; i < kOptionCount; ++i) {
    values.set(kOptions[i].name, kOptions[i].default_value, false);
  }
  return values;
}

PacketView view(const std::vector<std::uint8_t>& p) {
  return PacketView{p.data(), static_cast<std::uint32_t>(p.size())};
}

TEST(CaenOptions, BadValuesNameTheOption) {
  OptionValues values = defaults();
  values.set("amplitude-threshold", "-1", true);
  try {
    settings_from_options(values);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "--amplitude-threshold: -1 is out of range; expected 0..262140");
  }
}

TEST(CaenOptions, MissingFilesFailAtStartup) {
  OptionValues values = defaults();
  values.set("geometry", "/nonexistent.json", true);
  EXPECT_THROW(load_instrument(settings_from_options(values)), ConfigError);
  values = defaults();
  values.set("calibration", "/nonexistent.json", true);
  EXPECT_THROW(load_instrument(settings_from_options(values)), ConfigError);
}

TEST(CaenOptions, ACalibrationOfAnotherInstrumentIsRefused) {
  OptionValues values = defaults();  // loki.json
  values.set("calibration", shipped_config("bifrost_calibration.json"), true);
  EXPECT_THROW(load_instrument(settings_from_options(values)), ConfigError);
}

struct Shipped {
  const char* config;
  std::uint8_t type;
};

class ShippedInstrument : public ::testing::TestWithParam<Shipped> {};

// Each shipped config loads with its default calibration; the pipeline accepts packets with the
// instrument's type byte and counts every other type as parser.essheader.errors.type.
TEST_P(ShippedInstrument, LoadsAndChecksItsTypeByte) {
  OptionValues values = defaults();
  values.set("geometry", shipped_config(GetParam().config), true);
  CounterRegistry counters;
  RecordingSink sink;
  CaenPipeline pipeline(load_instrument(settings_from_options(values)), 0, counters, sink);
  for (const std::uint8_t type : {GetParam().type, std::uint8_t{0x48}, std::uint8_t{0x30},
                                  std::uint8_t{0x34}, std::uint8_t{0x38}, std::uint8_t{0x3C}}) {
    ess::PacketAssembler packets(type, 1, 8972, 1);
    const auto heartbeat = packets.finish(0, ess::to_ess(2'000'000'000'000ULL),
                                          ess::to_ess(2'000'000'000'000ULL - 71'428'571));
    const std::vector<std::uint8_t> bytes(heartbeat.begin(), heartbeat.end());
    pipeline.process(PacketBatch(std::vector<PacketView>{view(bytes)}));
  }
  EXPECT_EQ(counters.value("parser.essheader.heartbeats"), 2U);  // its own type, and again
  EXPECT_EQ(counters.value("parser.essheader.errors.type"), 4U);
}

INSTANTIATE_TEST_SUITE_P(Caen, ShippedInstrument,
                         ::testing::Values(Shipped{"loki.json", 0x30},
                                           Shipped{"bifrost.json", 0x34},
                                           Shipped{"cspec.json", 0x3C},
                                           Shipped{"miracles.json", 0x38}));

TEST(CaenPipeline, RandomlyDamagedPacketsAreEachAccountedForOnce) {
  CounterRegistry counters;
  RecordingSink sink;
  CaenPipeline pipeline(load_instrument(settings_from_options(defaults())), 0, counters, sink);
  std::uint64_t state = 777;
  auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>(state >> 33);
  };
  constexpr int kPackets = 3000;
  ess::PacketAssembler packets(kTypeLoki, 1, 8972, 1);
  const std::uint64_t pulse = 2'000'000'000'000ULL;
  for (int i = 0; i < kPackets; ++i) {
    for (int k = 0; k < 8; ++k) {
      CaenReadout r;
      r.fiber = static_cast<std::uint8_t>(next() % 6);
      r.fen = static_cast<std::uint8_t>(next() % 2);
      r.group = static_cast<std::uint8_t>(next() % 8);
      const ess::EssTime t = ess::to_ess(pulse + 1000 + next() % 50'000'000);
      r.time_high = t.high;
      r.time_low = t.low;
      r.a = static_cast<std::uint16_t>(next() % 4000);
      r.b = static_cast<std::uint16_t>(next() % 4000);
      r.c = static_cast<std::uint16_t>(next() % 4000);
      r.d = static_cast<std::uint16_t>(next() % 4000);
      write_readout(packets.append(0, kReadoutSize), r);
    }
    const auto span = packets.finish(0, ess::to_ess(pulse), ess::to_ess(pulse - 71'428'571));
    std::vector<std::uint8_t> p(span.begin(), span.end());
    const int flips = 1 + static_cast<int>(next() % 4);
    for (int f = 0; f < flips; ++f)
      p[next() % p.size()] ^= static_cast<std::uint8_t>(1 + next() % 255);
    if (next() % 4 == 0) p.resize(1 + next() % p.size());
    pipeline.process(PacketBatch(std::vector<PacketView>{view(p)}));
  }
  std::uint64_t header_errors = 0;
  for (const char* r : ess::kHeaderErrorNames) {
    if (std::string(r) != "sequence") {
      header_errors += counters.value(std::string("parser.essheader.errors.") + r);
    }
  }
  EXPECT_EQ(counters.value("parser.essheader.packets") + header_errors, std::uint64_t{kPackets});
  std::uint64_t readout_errors =
      counters.value("readouts.errors.length") + counters.value("readouts.errors.truncated");
  for (const char* r : kReadoutErrorNames) {
    readout_errors += counters.value(std::string("readouts.errors.") + r);
  }
  EXPECT_EQ(counters.value("events.formed") + readout_errors, counters.value("readouts.received"));
  EXPECT_EQ(counters.value("events.formed"), sink.events.size());
  EXPECT_GT(sink.events.size(), 0U);
  EXPECT_GT(header_errors, 0U);
}

TEST(CaenPlugin, ExportsItsDescriptorAndRoutesByOutputQueue) {
  const efu::test::BuiltPlugin plugin("caen");
  const PluginDescriptor* d = plugin.descriptor();
  ASSERT_NE(d, nullptr) << plugin.error();
  EXPECT_EQ(d->abi_version, kPluginAbiVersion);
  EXPECT_STREQ(d->name, "caen");
  EXPECT_EQ(d->option_count, kOptionCount);
  EXPECT_FALSE(d->uses_source);  // the readouts say where they come from
  ASSERT_NE(d->route_key, nullptr);
  ess::PacketAssembler packets(kTypeLoki, 1, 8972, 8);
  const auto p = packets.finish(7, ess::to_ess(1'000'000'000), ess::to_ess(0));
  EXPECT_EQ(d->route_key(PacketView{p.data(), static_cast<std::uint32_t>(p.size())}), 7U);
}

}  // namespace
}  // namespace efu::caen
