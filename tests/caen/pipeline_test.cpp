// The caen pipeline and plugin: options, the shipped configs of all four instruments, the
// detector type byte, accounting under random damage, and BIFROST's events per triplet source.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
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

// --- Sources: BIFROST's events under their triplet's sink ----------------------------------

// BIFROST with the test config (MaxRing 2: 45 sources) and calibration (intervals [0, .25],
// [.375, .625], [.75, 1] for each of the 45 groups).
LoadedInstrument bifrost_instrument() {
  return LoadedInstrument{
      CaenConfig::from_text(test::kBifrostConfig, "bifrost.json"),
      Calibration::from_text(test::calibration_text("bifrost", 45, 3, test::kBifrostIntervals),
                             "calib.json", "bifrost")};
}

struct Placed {
  CaenReadout readout;
  std::uint32_t source;  // MapResult::source = ring·15 + group
  std::uint32_t pixel;   // worked by hand (docs/caen.md's BIFROST formula)
};

// x = ring·300 + (group%3)·100 + trunc((ratio − lo)/(hi − lo)·99), y = (group/3)·3 + tube,
// pixel = 1 + x + 900·y.
std::vector<Placed> placed_readouts(std::uint64_t pulse) {
  auto r = [pulse](std::uint8_t fiber, std::uint8_t group, std::uint16_t a, std::uint16_t b,
                   std::uint64_t tof) {
    CaenReadout out;
    out.fiber = fiber;
    out.group = group;
    out.a = a;
    out.b = b;
    const ess::EssTime t = ess::to_ess(pulse + tof);
    out.time_high = t.high;
    out.time_low = t.low;
    return out;
  };
  return {
      // Fibre 3 → ring 1, group 7, ratio 0.5 → tube 1, along (0.5−0.375)/0.25 = 0.5 → 49:
      // x = 300 + 100 + 49 = 449, y = 6 + 1 = 7 → 6750; source 15 + 7 = 22 (arc=2;triplet=4).
      {r(3, 7, 500, 500, 1000), 22, 6750},
      // Fibre 0 → ring 0, group 0, ratio 0 → tube 0, x 0, y 0 → 1; source 0.
      {r(0, 0, 0, 1000, 2000), 0, 1},
      // Fibre 5 → ring 2, group 14, ratio 1 → tube 2, along 1 → 99: x = 600 + 200 + 99 = 899,
      // y = 12 + 2 = 14 → 13500; source 30 + 14 = 44 (arc=4;triplet=8).
      {r(5, 14, 1000, 0, 3000), 44, 13500},
      // Fibre 4 → ring 2, group 1, ratio 0.5: x = 600 + 100 + 49 = 749, y = 1 → 1650; source 31.
      {r(4, 1, 500, 500, 4000), 31, 1650},
      // Fibre 2 → ring 1 again, group 7: a second event of source 22, x = 300 + 100 + 0 (ratio
      // 0.375 → along 0) = 400, y = 7 → 6701.
      {r(2, 7, 375, 625, 5000), 22, 6701},
  };
}

std::vector<std::uint8_t> bifrost_packet(const std::vector<Placed>& placed, std::uint64_t pulse) {
  ess::PacketAssembler packets(kTypeBifrost, 1, 8972, 1);
  for (const Placed& p : placed) write_readout(packets.append(0, kReadoutSize), p.readout);
  const auto span = packets.finish(0, ess::to_ess(pulse), ess::to_ess(pulse - 71'428'571));
  return std::vector<std::uint8_t>(span.begin(), span.end());
}

TEST(CaenSources, BifrostEventsLandInTheirTripletsSink) {
  const std::uint64_t pulse = 2'000'000'000'000ULL;
  const std::vector<Placed> placed = placed_readouts(pulse);
  std::vector<RecordingSink> sinks(45);
  std::vector<EventSink*> pointers;
  for (RecordingSink& s : sinks) pointers.push_back(&s);
  CounterRegistry counters;
  CaenPipeline pipeline(bifrost_instrument(), 0, counters, pointers);
  const std::vector<std::uint8_t> p = bifrost_packet(placed, pulse);
  pipeline.process(PacketBatch(std::vector<PacketView>{view(p)}));

  std::vector<std::vector<test::Event>> want(45);
  for (const Placed& e : placed) {
    const std::uint64_t tof = ess::to_ns(e.readout.time_high, e.readout.time_low) - pulse;
    want[e.source].push_back(test::Event{pulse, static_cast<std::uint32_t>(tof), e.pixel});
  }
  for (std::size_t i = 0; i < 45; ++i) {
    EXPECT_EQ(sinks[i].events, want[i])
        << "source " << i << " (" << bifrost_source_name(static_cast<std::uint32_t>(i)) << ")";
  }
  EXPECT_EQ(counters.value("events.formed"), placed.size());
  EXPECT_EQ(sinks[22].events.size(), 2U);  // in readout order within the source
}

TEST(CaenSources, OneSinkForAllGetsTheSameEvents) {
  // The single-sink constructor (tools, benchmarks) sees every source's events unchanged.
  const std::uint64_t pulse = 2'000'000'000'000ULL;
  const std::vector<Placed> placed = placed_readouts(pulse);
  RecordingSink all;
  CounterRegistry counters;
  CaenPipeline pipeline(bifrost_instrument(), 0, counters, all);
  const std::vector<std::uint8_t> p = bifrost_packet(placed, pulse);
  pipeline.process(PacketBatch(std::vector<PacketView>{view(p)}));
  ASSERT_EQ(all.events.size(), placed.size());
  std::vector<std::uint32_t> pixels, want;
  for (const test::Event& e : all.events) pixels.push_back(e.pixel);
  for (const Placed& e : placed) want.push_back(e.pixel);
  std::sort(pixels.begin(), pixels.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(pixels, want);
}

TEST(CaenSources, AWrongNumberOfSinksIsRefused) {
  RecordingSink sink;
  std::vector<EventSink*> three(3, &sink);
  CounterRegistry counters;
  EXPECT_THROW(CaenPipeline(bifrost_instrument(), 0, counters, three), std::invalid_argument);
}

/// SourceOutputs that records the names asked for, each with a sink of its own.
class RecordingSources final : public SourceOutputs {
 public:
  EventSink& events(std::string_view name) override {
    asked.emplace_back(name);
    sinks.push_back(std::make_unique<RecordingSink>());
    return *sinks.back();
  }
  HistogramSink& histograms(std::string_view) override { return discard_; }
  std::vector<std::string> asked;
  std::vector<std::unique_ptr<RecordingSink>> sinks;

 private:
  DiscardingHistogramSink discard_;
};

TEST(CaenSources, BifrostAsksTheHostForEachTripletOnceOthersUseTheOwnSource) {
  const OptionValues options = defaults();
  CounterRegistry counters;
  RecordingSink own;
  RecordingSources sources;
  const PipelineContext context{options, counters, own, 0, 1, nullptr, &sources};
  const LoadedInstrument b = bifrost_instrument();
  const std::vector<EventSink*> sinks = event_sinks(b.config, context);
  ASSERT_EQ(sinks.size(), 45U);
  ASSERT_EQ(sources.asked.size(), 45U);
  for (std::uint32_t i = 0; i < 45; ++i) {
    EXPECT_EQ(sources.asked[i], bifrost_source_name(i));
    EXPECT_EQ(sinks[i], sources.sinks[i].get());
  }
  EXPECT_EQ(sources.asked[22], "arc=2;triplet=4");

  RecordingSources none;
  const PipelineContext loki_context{options, counters, own, 0, 1, nullptr, &none};
  const LoadedInstrument loki = load_instrument(settings_from_options(defaults()));
  const std::vector<EventSink*> loki_sinks = event_sinks(loki.config, loki_context);
  ASSERT_EQ(loki_sinks.size(), 1U);
  EXPECT_EQ(loki_sinks[0], &own);
  EXPECT_TRUE(none.asked.empty());
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
