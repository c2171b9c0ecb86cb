// The readout path through the nmx pipeline (docs/nmx.md "VMM3a readouts"): a packet written as
// byte literals from the format, and one case per rejection, each landing in its own counter.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "efu/errors.h"
#include "efu/ess/ess_time.h"
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

class NmxReadout : public ::testing::Test {
 protected:
  void run(const std::vector<std::uint8_t>& packet, NmxSettings settings = shipped_settings()) {
    pipeline = std::make_unique<NmxPipeline>(settings, counters, sink);
    pipeline->process(PacketBatch(std::vector<PacketView>{view(packet)}));
    pipeline->flush();
  }
  CounterRegistry counters;
  RecordingSink sink;
  std::unique_ptr<NmxPipeline> pipeline;
};

// One v1 packet, type 0x44, queue 0, pulse (0x65000001 s, 0 ticks), previous pulse
// (0x65000000 s, 81763036 ticks), sequence 0; then two readouts at (0x65000001 s, 880 and 881
// ticks): ring 0 FEN 0 VMM 5 channel 19, OTADC 0x812C (over threshold, ADC 300), and fibre 1
// FEN 7 VMM 3 channel 8, ADC 200. With nmx.json: x = 256 + 64 * (1 - 1) + 63 - 19 = 300
// (Config[2], reversed) and y = 128 + 64 * 1 + 8 = 200 (Config[36]), both panel 0.
const std::vector<std::uint8_t> kLiteralPacket = {
    0x00, 0x01, 0x45, 0x53, 0x53, 0x44, 0x48, 0x00, 0x00, 0x00, 0x01, 0x00,  // .. length 72
    0x00, 0x65, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x65, 0xDC, 0x9A,  // pulse, prev
    0xDF, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,                          // seq, padding
    0x00, 0x00, 0x14, 0x00, 0x01, 0x00, 0x00, 0x65, 0x70, 0x03, 0x00, 0x00,  // readout 1
    0x00, 0x00, 0x2C, 0x81, 0x00, 0x00, 0x05, 0x13,                          //
    0x01, 0x07, 0x14, 0x00, 0x01, 0x00, 0x00, 0x65, 0x71, 0x03, 0x00, 0x00,  // readout 2
    0x00, 0x00, 0xC8, 0x00, 0x00, 0x00, 0x03, 0x08};

TEST_F(NmxReadout, LiteralPacketGivesOneEvent) {
  ASSERT_EQ(kLiteralPacket.size(), 72U);
  run(kLiteralPacket);
  ASSERT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(sink.events[0].pixel, 1U + 300 + 1280 * 200);  // 256301
  EXPECT_EQ(sink.events[0].pulse_ns, ess::to_ns(0x65000001, 0));
  // The event's end: the later readout, 881 ticks after the pulse.
  EXPECT_EQ(sink.events[0].tof_ns, ess::to_ns(0x65000001, 881) - ess::to_ns(0x65000001, 0));
  EXPECT_EQ(counters.value("readouts.accepted"), 2U);
  EXPECT_EQ(counters.value("events.formed"), 1U);
}

struct ReadoutCase {
  const char* counter;
  std::vector<std::uint8_t> readout;
};

// One readout each, next to the literal's good pair; `counter` must count exactly it.
std::vector<ReadoutCase> rejection_cases() {
  const ess::EssTime t = ess::to_ess(test::kPulseNs + 10'000);
  const ess::EssTime before = ess::to_ess(test::kPulseNs - 2 * test::kPeriodNs);
  const ess::EssTime late = ess::to_ess(test::kPulseNs + 2'000'000);
  using test::readout_bytes;
  return {
      {"readouts.errors.fiber", readout_bytes(2, 0, 20, t.high, t.low, 300, 0, 5, 19)},
      {"readouts.errors.fen", readout_bytes(0, 8, 20, t.high, t.low, 300, 0, 5, 19)},
      {"readouts.errors.vmm", readout_bytes(0, 0, 20, t.high, t.low, 300, 0, 10, 19)},
      {"readouts.errors.channel", readout_bytes(0, 0, 20, t.high, t.low, 300, 0, 5, 64)},
      {"readouts.errors.time_fraction",
       readout_bytes(0, 0, 20, t.high, ess::kMaxTimeLow + 1, 300, 0, 5, 19)},
      {"readouts.errors.adc_below_threshold",
       readout_bytes(0, 0, 20, t.high, t.low, 49, 0, 5, 19)},  // DefaultMinADC 50
      {"readouts.errors.tof_negative",
       readout_bytes(0, 0, 20, before.high, before.low, 300, 0, 5, 19)},
      {"readouts.errors.tof_too_large",
       readout_bytes(0, 0, 20, late.high, late.low, 300, 0, 5, 19)},  // max-tof 1 ms below
      {"readouts.errors.length", readout_bytes(0, 0, 16, t.high, t.low, 300, 0, 5, 19)},
  };
}

TEST_F(NmxReadout, EachRejectionIsCountedOnce) {
  for (const ReadoutCase& c : rejection_cases()) {
    SCOPED_TRACE(c.counter);
    CounterRegistry local;
    RecordingSink events;
    NmxSettings settings = shipped_settings();
    settings.max_tof_ns = 1'000'000;
    NmxPipeline p(settings, local, events);
    const auto packet = PacketBuilder()
                            .hit(0, 0, 5, 19, 300, 10'000)  // x = 300
                            .raw(c.readout)
                            .hit(1, 7, 3, 8, 200, 10'005)  // y = 200
                            .build();
    p.process(PacketBatch(std::vector<PacketView>{view(packet)}));
    p.flush();
    EXPECT_EQ(local.value(c.counter), 1U);
    EXPECT_EQ(local.value("readouts.accepted"), 2U);
    // Every readout sent is accepted or in exactly one error counter.
    std::uint64_t errors = 0;
    for (const char* name :
         {"fiber", "fen", "vmm", "channel", "time_fraction", "adc_below_threshold", "tof_negative",
          "tof_too_large", "length", "truncated"}) {
      errors += local.value(std::string("readouts.errors.") + name);
    }
    EXPECT_EQ(local.value("readouts.accepted") + errors, 3U);
    // The good pair around it still forms its event.
    ASSERT_EQ(events.events.size(), 1U);
    EXPECT_EQ(events.events[0].pixel, 256301U);
  }
}

TEST_F(NmxReadout, ShortTailIsTruncated) {
  const auto packet =
      PacketBuilder().hit(0, 0, 5, 19, 300, 10'000).raw(std::vector<std::uint8_t>(10, 0)).build();
  run(packet);
  EXPECT_EQ(counters.value("readouts.errors.truncated"), 1U);
  EXPECT_EQ(counters.value("readouts.accepted"), 1U);
  EXPECT_EQ(counters.value("events.rejected.no_match_y"), 1U);
}

TEST_F(NmxReadout, AnotherDetectorsTypeIsRefused) {
  run(PacketBuilder(0, 0, 0x48).hit(0, 0, 5, 19, 300, 10'000).build());
  EXPECT_EQ(counters.value("parser.essheader.errors.type"), 1U);
  EXPECT_EQ(counters.value("readouts.accepted"), 0U);
  EXPECT_TRUE(sink.events.empty());
}

TEST_F(NmxReadout, CalibrationIsApplied) {
  // Config[2] (ring 0 FEN 0 hybrid 2, HybridId ...0002) with ADC slope 2 on VMM 5's channel 19:
  // a raw 30 becomes 60, over DefaultMinADC 50; uncalibrated it is below.
  std::string values;
  for (int i = 0; i < 64; ++i) values += std::string(i ? "," : "") + (i == 19 ? "2.0" : "1.0");
  std::string zeros;
  for (int i = 0; i < 64; ++i) zeros += std::string(i ? "," : "") + "0.0";
  const std::string vmm = R"({"adc_offset": [)" + zeros + R"(], "adc_slope": [)" + values +
                          R"(], "tdc_offset": [)" + zeros + R"(], "tdc_slope": [)" + zeros + "]}";
  const std::string path = ::testing::TempDir() + "/nmx_calibration.json";
  {
    FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    const std::string text =
        R"({"Detector": "NMX", "Version": 1, "Calibrations": [{"VMMHybridCalibration": {
        "HybridId": "E5533333222222221111111100000002", "CalibrationDate": "2026",
        "vmm0": )" +
        vmm + R"(, "vmm1": )" + vmm + "}}]}";
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  const auto packet =
      PacketBuilder().hit(0, 0, 5, 19, 30, 10'000).hit(1, 7, 3, 8, 200, 10'005).build();
  run(packet);
  EXPECT_EQ(counters.value("readouts.errors.adc_below_threshold"), 1U);
  EXPECT_TRUE(sink.events.empty());
  NmxSettings calibrated = shipped_settings();
  calibrated.calibration_path = path;
  CounterRegistry c2;
  RecordingSink s2;
  NmxPipeline p(calibrated, c2, s2);
  p.process(PacketBatch(std::vector<PacketView>{view(packet)}));
  p.flush();
  EXPECT_EQ(c2.value("readouts.errors.adc_below_threshold"), 0U);
  ASSERT_EQ(s2.events.size(), 1U);
  EXPECT_EQ(s2.events[0].pixel, 256301U);
  EXPECT_EQ(c2.value("calibration.uncalibrated_hybrids"), 39U);
  // --calibration-strict on refuses a file without every hybrid.
  calibrated.calibration_strict = true;
  EXPECT_THROW(load_shared(calibrated), ConfigError);
}

}  // namespace
}  // namespace efu::nmx
