#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "built_plugin.h"
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
  // The shipped configs/freia.json: cassette 2 is ring 0 (fibres 0, 1), FEN 1, hybrid 0: wires on
  // VMM 0 (y = 64 + 47 - channel), strips on VMM 1 (x = 63 - channel).
};

TEST_F(PipelineTest, AnEventSplitAcrossTwoPacketsIsFormedOnce) {
  const auto first = PacketBuilder(0)
                         .hit(1, 1, 0, 37, 200, 40'000)  // y = 74
                         .hit(1, 1, 0, 36, 600, 40'010)  // y = 75
                         .build();
  const auto second = PacketBuilder(1)
                          .hit(0, 1, 0, 35, 200, 40'020)  // y = 76
                          .hit(0, 1, 1, 33, 500, 40'005)  // x = 30
                          .hit(1, 1, 1, 32, 250, 40'030)  // x = 31
                          .build();
  pipeline.process(PacketBatch(std::vector<PacketView>{view(first)}));
  pipeline.process(PacketBatch(std::vector<PacketView>{view(second)}));
  EXPECT_TRUE(sink.events.empty()) << "the reorder window is still open";
  // 2 ms later on the same queue: the window (1 ms) has passed the group.
  const auto third = PacketBuilder(2).hit(1, 1, 0, 17, 200, 2'040'000).build();
  pipeline.process(PacketBatch(std::vector<PacketView>{view(third)}));
  ASSERT_EQ(sink.events.size(), 1U);
  // strips 30.33 -> 30, wires 75: pixel 1 + 30 + 64 * 75
  EXPECT_EQ(sink.events[0].pixel, 4831U);
  EXPECT_EQ(sink.events[0].pulse_ns, test::decoded(test::kPulseNs));
  EXPECT_EQ(sink.events[0].tof_ns, test::quantised_tof(40'000));
  EXPECT_EQ(counters.value("events.formed"), 1U);
  EXPECT_EQ(counters.value("parser.essheader.errors.sequence"), 0U);
  pipeline.flush();  // the lone wire has no strip
  EXPECT_EQ(counters.value("events.rejected.no_match_strip"), 1U);
}

TEST_F(PipelineTest, TheFacilitysLiteralPacketGivesItsPixelAndTof) {
  // Header + a wire and a strip readout of cassette 0 (ring 0, FEN 0, hybrid 0), written byte by
  // byte: wire channel 47 -> y 0, strip channel 63 -> x 0, so pixel 1; times 0x1100 and 0x1101
  // ticks after 0x65000000 s against a pulse at 0x1000 ticks: TOF 49425 - 46517 = 2908 ns.
  const std::vector<std::uint8_t> packet = {
      0x00, 0x01, 'E',  'S',  'S',  0x48, 0x48, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x65, 0x00,
      0x10, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0x64, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x01, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x65, 0x00, 0x11, 0x00, 0x00, 0x00,
      0x00, 0x2C, 0x01, 0x00, 0x00, 0x00, 0x2F, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x65,
      0x01, 0x11, 0x00, 0x00, 0x00, 0x00, 0xC8, 0x80, 0x00, 0x00, 0x01, 0x3F};
  pipeline.process(PacketBatch(std::vector<PacketView>{view(packet)}));
  pipeline.flush();
  ASSERT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(sink.events[0], (test::Event{0x65000000ULL * 1'000'000'000ULL + 46517, 2908, 1}));
}

TEST_F(PipelineTest, BadPacketsAreSkippedAndTheRestOfTheBatchIsUsed) {
  auto bad = PacketBuilder(0).hit(1, 1, 0, 20, 200, 1000).build();
  bad[3] = 'X';
  const auto heartbeat = PacketBuilder(0).build();
  const auto good = PacketBuilder(1).hit(1, 1, 0, 20, 200, 1000).hit(1, 1, 1, 5, 200, 1000).build();
  const std::vector<PacketView> batch{view(bad), view(heartbeat), view(good)};
  pipeline.process(batch);
  pipeline.flush();
  EXPECT_EQ(counters.value("parser.essheader.errors.cookie"), 1U);
  EXPECT_EQ(counters.value("parser.essheader.heartbeats"), 1U);
  EXPECT_EQ(counters.value("parser.essheader.packets"), 2U);
  EXPECT_EQ(sink.events.size(), 1U);
}

TEST_F(PipelineTest, TickClosesGroupsIdleForTheTimeout) {
  const auto p = PacketBuilder(0).hit(1, 1, 0, 20, 200, 1000).hit(1, 1, 1, 5, 200, 1000).build();
  pipeline.process(PacketBatch(std::vector<PacketView>{view(p)}));
  const std::uint64_t t0 = 5'000'000'000;
  pipeline.tick(t0);  // hits were seen since the last tick: the idle clock starts now
  pipeline.tick(t0 + 199'999'999);
  EXPECT_TRUE(sink.events.empty());
  pipeline.tick(t0 + 200'000'000);
  EXPECT_EQ(sink.events.size(), 1U);
}

TEST(MultibladeInstrument, TheTypeByteIsTheInstruments) {
  const std::string dir = std::string(EFU_SOURCE_DIR) + "/modules/multiblade/configs/";
  struct Case {
    const char* file;
    const char* instrument;
    std::uint8_t type;
  };
  for (const Case& c : {Case{"freia.json", "auto", 0x48}, Case{"amor.json", "auto", 0x48},
                        Case{"tblmb.json", "tblmb", 0x49}, Case{"estia.json", "auto", 0x4C}}) {
    OptionValues values = defaults();
    values.set("geometry", dir + c.file, true);
    values.set("detector", c.instrument, true);
    CounterRegistry counters;
    RecordingSink sink;
    MultibladePipeline p{config_from_options(values), counters, sink};
    std::uint32_t sequence = 0;
    for (std::uint8_t type : {0x48, 0x49, 0x4C, 0x4B}) {
      const auto packet = PacketBuilder(sequence, 0, type).build();
      p.process(PacketBatch(std::vector<PacketView>{view(packet)}));
      if (type == c.type) ++sequence;
    }
    EXPECT_EQ(counters.value("parser.essheader.heartbeats"), 1U) << c.file;
    EXPECT_EQ(counters.value("parser.essheader.errors.type"), 3U) << c.file;
  }
}

// The facility's way, per packet: the hits of each cassette sorted by time, chained into groups
// by the 500 ns gap, and a group is an event if it has both planes and no channel is missing
// inside either plane (MaxGap 0). Nothing joins across packets.
std::uint64_t per_packet_sorting_events(const Geometry& g,
                                        const std::vector<std::vector<std::uint8_t>>& packets) {
  std::uint64_t events = 0;
  for (const auto& p : packets) {
    std::vector<std::vector<std::pair<std::uint64_t, ChannelMapping>>> per_cassette(g.cassettes());
    for (std::size_t at = 32; at + 20 <= p.size(); at += 20) {
      ChannelMapping m{};
      if (g.map(p[at], p[at + 1], p[at + 18], p[at + 19], m) != MapStatus::kOk) continue;
      const std::uint32_t high = p[at + 4] | p[at + 5] << 8 | p[at + 6] << 16 |
                                 static_cast<std::uint32_t>(p[at + 7]) << 24;
      const std::uint32_t low = p[at + 8] | p[at + 9] << 8 | p[at + 10] << 16 |
                                static_cast<std::uint32_t>(p[at + 11]) << 24;
      per_cassette[m.unit].push_back({ess::to_ns(high, low), m});
    }
    for (auto& hits : per_cassette) {
      std::sort(hits.begin(), hits.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      for (std::size_t i = 0; i < hits.size();) {
        std::size_t j = i + 1;
        while (j < hits.size() && hits[j].first - hits[j - 1].first <= 500) ++j;
        std::uint32_t n[2] = {0, 0}, lo[2] = {65535, 65535}, hi[2] = {0, 0};
        for (std::size_t k = i; k < j; ++k) {
          const auto pl = static_cast<unsigned>(hits[k].second.plane);
          ++n[pl];
          lo[pl] = std::min<std::uint32_t>(lo[pl], hits[k].second.coordinate);
          hi[pl] = std::max<std::uint32_t>(hi[pl], hits[k].second.coordinate);
        }
        if (n[0] > 0 && n[1] > 0 && hi[0] - lo[0] + 1 <= n[0] && hi[1] - lo[1] + 1 <= n[1])
          ++events;
        i = j;
      }
    }
  }
  return events;
}

TEST(MultibladeRandomTime, FormsAtLeastAsManyEventsPerReadoutAsPerPacketSorting) {
  // The facility generator's kind of stream: each wire/strip pair at a random time in the pulse,
  // on a random cassette, packets of 445 readouts (so some pairs straddle two packets).
  const Geometry g = Geometry::from_file(default_geometry_path());
  std::mt19937_64 rng(5);
  std::vector<std::vector<std::uint8_t>> packets;
  std::uint32_t sequence = 0;
  std::uint64_t readouts = 0;
  for (int pulse = 0; pulse < 3; ++pulse) {
    const std::uint64_t pulse_ns =
        test::kPulseNs + static_cast<std::uint64_t>(pulse) * test::kPeriodNs;
    PacketBuilder b(sequence);
    b.pulse(pulse_ns, pulse_ns - test::kPeriodNs);
    for (int pair = 0; pair < 20'000; ++pair) {
      const auto c = static_cast<std::uint32_t>(rng() % g.cassettes());
      const std::uint64_t tof = 10'000 + rng() % 70'000'000;
      const auto fiber = static_cast<std::uint8_t>(g.cassette(c).ring * 2 + rng() % 2);
      b.hit(fiber, g.cassette(c).fen, g.vmm_of(c, Plane::kWire),
            g.channel_of(Plane::kWire, static_cast<std::uint32_t>(rng() % 32)), 600, tof);
      if (b.readouts() == 445) {
        packets.push_back(b.build());
        b = PacketBuilder(++sequence);
        b.pulse(pulse_ns, pulse_ns - test::kPeriodNs);
      }
      b.hit(fiber, g.cassette(c).fen, g.vmm_of(c, Plane::kStrip),
            g.channel_of(Plane::kStrip, static_cast<std::uint32_t>(rng() % 64)), 600, tof);
      readouts += 2;
      if (b.readouts() == 445) {
        packets.push_back(b.build());
        b = PacketBuilder(++sequence);
        b.pulse(pulse_ns, pulse_ns - test::kPeriodNs);
      }
    }
    if (b.readouts() > 0) {
      packets.push_back(b.build());
      b = PacketBuilder(++sequence);
    }
  }
  CounterRegistry counters;
  RecordingSink sink;
  MultibladePipeline p{config_from_options(defaults()), counters, sink};
  for (const auto& packet : packets) p.process(PacketBatch(std::vector<PacketView>{view(packet)}));
  p.flush();
  const std::uint64_t reference = per_packet_sorting_events(g, packets);
  const double efu_rate = static_cast<double>(sink.events.size()) / static_cast<double>(readouts);
  const double reference_rate = static_cast<double>(reference) / static_cast<double>(readouts);
  std::printf(
      "random-time stream: %llu readouts, efu %.4f events/readout, per-packet sorting %.4f, "
      "late hits %llu\n",
      static_cast<unsigned long long>(readouts), efu_rate, reference_rate,
      static_cast<unsigned long long>(counters.value("hits.late")));
  EXPECT_EQ(counters.value("readouts.accepted"), readouts);
  EXPECT_GE(sink.events.size(), reference);
  EXPECT_GT(reference, readouts / 4);  // the reference itself forms most pairs
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
      b.hit(1, 1, static_cast<std::uint8_t>(k % 2), 20, 200,
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
                        "time_fraction", "prev_pulse_later", "pulse_time_diff"}) {
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
  EXPECT_EQ(config_error("max-tof-ns", "0"),
            "--max-tof-ns: 0 is out of range; expected 1..2147483647");
  EXPECT_EQ(config_error("position-algorithm", "median"),
            "--position-algorithm: 'median' is not valid; expected center-of-mass or max-adc");
  EXPECT_EQ(config_error("detector", "loki"),
            "--detector: 'loki' is not valid; expected auto, freia, estia, amor or tblmb");
  EXPECT_EQ(config_error("reorder-buffer-hits", "8"),
            "--reorder-buffer-hits: 8 is out of range; expected 64..1048576");
  EXPECT_EQ(config_error("max-wire-span", "33"),
            "--max-wire-span: 33 is out of range; expected 1..32");
}

TEST(MultibladeOptions, TheInstrumentMustFitTheFile) {
  OptionValues values = defaults();
  values.set("detector", "estia", true);
  CounterRegistry counters;
  RecordingSink sink;
  EXPECT_THROW(MultibladePipeline(config_from_options(values), counters, sink), ConfigError);
}

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

/// Every line the default spdlog logger writes while this lives ("<level> <message>").
class LogCapture {
 public:
  LogCapture() {
    auto logger = std::make_shared<spdlog::logger>(
        "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(out_));
    logger->set_pattern("%l %v");
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::vector<std::string> lines_with(const std::string& text) const {
    std::vector<std::string> found;
    std::istringstream in(out_.str());
    for (std::string line; std::getline(in, line);) {
      if (line.find(text) != std::string::npos) found.push_back(line);
    }
    return found;
  }

 private:
  std::shared_ptr<spdlog::logger> previous_ = spdlog::default_logger();
  std::ostringstream out_;
};

// Two Freia cassettes, ADC threshold 250 on every VMM; the calibration has an entry for
// cassette 0 only, halving its ADCs.
class UncalibratedHybridTest : public ::testing::Test {
 protected:
  UncalibratedHybridTest() {
    std::string half = "[0.5", zeros = "[0", ones = "[1";
    for (int i = 1; i < 64; ++i) {
      half += ", 0.5";
      zeros += ", 0";
      ones += ", 1";
    }
    const std::string vmm = R"({"adc_offset": )" + zeros + R"(], "adc_slope": )" + half +
                            R"(], "tdc_offset": )" + zeros + R"(], "tdc_slope": )" + ones + "]}";
    geometry_path = write_file(
        "mb_two_cassettes.json",
        test::instrument_config("Freia", test::entry(0, 0, 0, 0, 250, 250) + "," +
                                             test::entry(1, 0, 0, 1, 250, 250)));
    calibration_path = write_file(
        "mb_one_of_two_calibrated.json",
        R"({"Detector": "Freia", "Version": 1, "Calibrations": [{"VMMHybridCalibration": )"
        R"({"HybridId": ")" + test::hybrid_id(0) + R"(", "CalibrationDate": "x", "vmm0": )" +
            vmm + R"(, "vmm1": )" + vmm + "}}]}");
  }

  MultibladeConfig config(bool strict) const {
    OptionValues values = defaults();
    values.set("geometry", geometry_path, true);
    values.set("calibration", calibration_path, true);
    values.set("calibration-strict", strict ? "on" : "off", true);
    return config_from_options(values);
  }

  std::string geometry_path, calibration_path;
  CounterRegistry counters;
  RecordingSink sink;
};

TEST_F(UncalibratedHybridTest, RunsUncalibratedWithOneWarningAndTheGauge) {
  LogCapture log;
  MultibladePipeline first(config(false), counters, sink, 0);
  MultibladePipeline second(config(false), counters, sink, 1);  // a second processing thread
  EXPECT_EQ(counters.value("calibration.uncalibrated_hybrids"), 1U);
  const auto warnings = log.lines_with("no calibration");
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_EQ(warnings[0].rfind("warning multiblade: 1 of 2 hybrids has no calibration in '" +
                                  calibration_path + "' and runs uncalibrated",
                              0),
            0U)
      << warnings[0];
  EXPECT_NE(warnings[0].find("cassette 1 (HybridId " + test::hybrid_id(1) + ")"),
            std::string::npos);

  // Raw ADC 300 on both planes of both cassettes: cassette 0's calibration halves it below the
  // threshold, cassette 1 keeps it and forms its event.
  const auto packet = PacketBuilder(0)
                          .hit(0, 0, 0, 20, 300, 40'000)
                          .hit(0, 0, 1, 10, 300, 40'000)
                          .hit(0, 0, 2, 20, 300, 40'000)
                          .hit(0, 0, 3, 10, 300, 40'000)
                          .build();
  first.process(PacketBatch(std::vector<PacketView>{view(packet)}));
  first.flush();
  EXPECT_EQ(counters.value("readouts.errors.adc_below_threshold"), 2U);
  EXPECT_EQ(counters.value("readouts.accepted"), 2U);
  EXPECT_EQ(counters.value("events.formed"), 1U);
  EXPECT_EQ(sink.events.size(), 1U);
}

TEST_F(UncalibratedHybridTest, StrictRefusesNamingTheFileAndTheJsonPath) {
  LogCapture log;
  try {
    MultibladePipeline p(config(true), counters, sink);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), ("multiblade calibration '" + calibration_path +
                            "': /Calibrations: has no entry for HybridId \"" + test::hybrid_id(1) +
                            "\" (cassette 1); expected every hybrid of the instrument config, or "
                            "--calibration off")
                               .c_str());
  }
  EXPECT_TRUE(log.lines_with("no calibration").empty());
}

TEST(MultibladeOptions, AnEmptyCalibrationLeavesEveryShippedHybridUncalibrated) {
  const std::string path = write_file(
      "mb_partial_calibration.json", R"({"Detector": "Freia", "Version": 1, "Calibrations": []})");
  OptionValues values = defaults();
  values.set("calibration", path, true);
  CounterRegistry counters;
  RecordingSink sink;
  const MultibladeConfig config = config_from_options(values);
  {
    LogCapture quiet;
    MultibladePipeline p(config, counters, sink);
  }
  const std::uint32_t hybrids = Geometry::from_file(default_geometry_path()).cassettes();
  EXPECT_EQ(counters.value("calibration.uncalibrated_hybrids"), hybrids);
  values.set("calibration-strict", "on", true);
  try {
    MultibladePipeline p(config_from_options(values), counters, sink);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/Calibrations: has no entry for HybridId"),
              std::string::npos)
        << e.what();
  }
}

TEST(MultibladeOptions, MissingGeometryFileFailsTheConstructor) {
  OptionValues values = defaults();
  values.set("geometry", "/nonexistent.json", true);
  CounterRegistry counters;
  RecordingSink sink;
  EXPECT_THROW(MultibladePipeline(config_from_options(values), counters, sink), ConfigError);
}

TEST(MultibladePlugin, ExportsItsDescriptorAndRoutesByOutputQueue) {
  const efu::test::BuiltPlugin plugin("multiblade");
  const PluginDescriptor* d = plugin.descriptor();
  ASSERT_NE(d, nullptr) << plugin.error();
  EXPECT_EQ(d->abi_version, kPluginAbiVersion);
  EXPECT_STREQ(d->name, "multiblade");
  EXPECT_EQ(d->option_count, kOptionCount);
  EXPECT_FALSE(d->uses_source);  // the readouts say where they come from
  ASSERT_NE(d->route_key, nullptr);
  const auto p = PacketBuilder(0, 7).build();
  EXPECT_EQ(d->route_key(PacketView{p.data(), static_cast<std::uint32_t>(p.size())}), 7U);
}

}  // namespace
}  // namespace efu::multiblade
