#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "efu/ess/readout_header.h"
#include "multiblade_pipeline.h"
#include "test_support.h"

namespace efu::multiblade {
namespace {

using test::entry;
using test::instrument_config;
using test::kPulseNs;
using test::PacketBuilder;

struct Mapped {
  std::uint32_t cassette;
  Hit hit;
};

// Freia: cassette 0 on ring 0 (fibres 0, 1), FEN 0, hybrid 0 (VMM 0 wires, threshold 50; VMM 1
// strips, threshold 0); cassette 1 on ring 1, FEN 1, hybrid 2 (VMMs 4, 5).
const std::string kConfig =
    instrument_config("Freia", entry(0, 0, 0, 0, 50, 0) + "," + entry(1, 1, 1, 2));

class ReadoutParserTest : public ::testing::Test {
 protected:
  std::vector<Mapped> parse(const std::vector<std::uint8_t>& packet) {
    std::vector<Mapped> out;
    ess::PacketHeader header{};
    EXPECT_EQ(header_parser.parse(packet.data(), static_cast<std::uint32_t>(packet.size()), header),
              ess::HeaderStatus::kData);
    parser.parse(packet.data() + header.header_size,
                 static_cast<std::uint32_t>(packet.size() - header.header_size), header,
                 [&](std::uint32_t cassette, const Hit& hit) {
                   out.push_back({cassette, hit});
                 });
    return out;
  }
  std::uint64_t errors(const std::string& reason) const {
    return counters.value("readouts.errors." + reason);
  }

  Geometry geometry = Geometry::from_json(kConfig, "t");
  Calibration calibration;
  CounterRegistry counters;
  ess::HeaderParser header_parser{counters, 0x48};
  ReadoutParser parser{counters, geometry, calibration, ReadoutSettings{100'000'000}};
};

TEST_F(ReadoutParserTest, DecodesALiteralPacket) {
  // An ESS v1 header and two VMM3a readouts, byte by byte (docs/architecture.md §5.1, §5.2).
  const std::vector<std::uint8_t> packet = {
      0x00, 0x01, 'E', 'S', 'S', 0x48,  // padding, version 1, cookie, Freia
      0x48, 0x00,                       // total length 72
      0x00, 0x00,                       // output queue 0, time source
      0x00, 0x00, 0x00, 0x65,           // pulse time high 0x65000000 s
      0x00, 0x10, 0x00, 0x00,           // pulse time low 0x1000 ticks
      0xFF, 0xFF, 0xFF, 0x64,           // previous pulse high 0x64FFFFFF s
      0x00, 0x00, 0x00, 0x05,           // previous pulse low 0x05000000: 47.3 ms earlier
      0x00, 0x00, 0x00, 0x00,           // sequence 0
      0x00, 0x00,                       // v1 padding
      // fibre 1 (ring 0), FEN 0, length 20, 0x65000000 s + 0x1100 ticks, bc 0, ADC 300, geo 0,
      // tdc 0, VMM 0 (wires), channel 47
      0x01, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x65, 0x00, 0x11, 0x00, 0x00, 0x00, 0x00, 0x2C,
      0x01, 0x00, 0x00, 0x00, 0x2F,
      // fibre 0, FEN 0, length 20, + 0x1101 ticks, bc 0, over threshold + ADC 200, VMM 1
      // (strips), channel 63
      0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x65, 0x01, 0x11, 0x00, 0x00, 0x00, 0x00, 0xC8,
      0x80, 0x00, 0x00, 0x01, 0x3F};
  const auto hits = parse(packet);
  ASSERT_EQ(hits.size(), 2U);
  // 0x1000 ticks = 46517.7 ns and 0x1100 ticks = 49425.1 ns, both truncated as the facility does.
  const std::uint64_t pulse = 0x65000000ULL * 1'000'000'000ULL + 46517;
  EXPECT_EQ(hits[0].cassette, 0U);
  EXPECT_EQ(hits[0].hit.plane, Plane::kWire);
  EXPECT_EQ(hits[0].hit.coordinate, 0);  // y = 47 - 47
  EXPECT_EQ(hits[0].hit.adc, 300);
  EXPECT_EQ(hits[0].hit.pulse_ns, pulse);
  EXPECT_EQ(hits[0].hit.time_ns - pulse, 2908U);
  EXPECT_EQ(hits[1].hit.plane, Plane::kStrip);
  EXPECT_EQ(hits[1].hit.coordinate, 0);  // x = 63 - 63
  EXPECT_EQ(hits[1].hit.adc, 200);       // the over-threshold bit is not part of the ADC
  EXPECT_EQ(hits[1].hit.time_ns - pulse, 2919U);
  EXPECT_EQ(counters.value("readouts.received"), 2U);
  EXPECT_EQ(counters.value("readouts.accepted"), 2U);
}

TEST_F(ReadoutParserTest, CountsEveryMalformedReadoutAndKeepsTheValidOnesAroundIt) {
  const ess::EssTime t = test::ticks(kPulseNs + 1000);
  const auto packet = PacketBuilder()
                          .hit(0, 0, 1, 1, 100, 1000)                      // good
                          .readout(0, 0, 19, t.high, t.low, 100, 0, 1, 1)  // length
                          .hit(0, 0, 1, 2, 100, 1000)                      // good
                          .hit(4, 0, 1, 1, 100, 1000)                      // fiber: ring 2
                          .hit(0, 1, 1, 1, 100, 1000)                      // fen
                          .hit(0, 0, 7, 1, 100, 1000)                      // vmm: hybrid 3
                          .hit(0, 0, 0, 15, 100, 1000)                     // channel
                          .hit(0, 0, 1, 70, 100, 1000)                     // channel
                          .readout(0, 0, 20, t.high, ess::kTicksPerSecond, 100, 0, 1, 1)
                          .hit(0, 0, 0, 30, 49, 1000)         // below cassette 0's wire threshold
                          .hit(0, 0, 0, 31, 50, 1000)         // good: threshold is inclusive
                          .hit(0, 0, 1, 5, 100, 100'000'100)  // tof too large
                          .hit(2, 1, 5, 6, 1, 1000)           // good: cassette 1 has threshold 0
                          .build();
  const auto hits = parse(packet);
  ASSERT_EQ(hits.size(), 4U);
  EXPECT_EQ(hits[0].hit.coordinate, 62);
  EXPECT_EQ(hits[1].hit.coordinate, 61);
  EXPECT_EQ(hits[2].hit.coordinate, 16);  // y = 47 - 31
  EXPECT_EQ(hits[3].cassette, 1U);
  EXPECT_EQ(hits[3].hit.coordinate, 57);
  EXPECT_EQ(errors("length"), 1U);
  EXPECT_EQ(errors("fiber"), 1U);
  EXPECT_EQ(errors("fen"), 1U);
  EXPECT_EQ(errors("vmm"), 1U);
  EXPECT_EQ(errors("channel"), 2U);
  EXPECT_EQ(errors("time_fraction"), 1U);
  EXPECT_EQ(errors("adc_below_threshold"), 1U);
  EXPECT_EQ(errors("tof_too_large"), 1U);
  EXPECT_EQ(counters.value("readouts.received"), 13U);
  EXPECT_EQ(counters.value("readouts.accepted"), 4U);
}

TEST_F(ReadoutParserTest, CalibrationIsAppliedBeforeTheThresholdAndCorrectsTime) {
  // Cassette 0's wire VMM: ADC (raw - 0) * 0.5, so raw 120 -> 60 passes the threshold of 50 and
  // raw 90 -> 45 does not; TDC term (34.08 - 60 * tdc / 255 - 0) * 1 is added to the time.
  std::string half = "[0.5";
  for (int i = 1; i < 64; ++i) half += ", 0.5";
  half += "]";
  std::string zeros = "[0", ones = "[1";
  for (int i = 1; i < 64; ++i) {
    zeros += ", 0";
    ones += ", 1";
  }
  zeros += "]";
  ones += "]";
  auto vmm = [&](const std::string& adc_slope) {
    return R"({"adc_offset": )" + zeros + R"(, "adc_slope": )" + adc_slope + R"(, "tdc_offset": )" +
           zeros + R"(, "tdc_slope": )" + ones + "}";
  };
  auto hybrid = [&](unsigned c, const std::string& v0) {
    return R"({"VMMHybridCalibration": {"HybridId": ")" + test::hybrid_id(c) +
           R"(", "CalibrationDate": "x", "vmm0": )" + v0 + R"(, "vmm1": )" + vmm(ones) + "}}";
  };
  const Calibration cal =
      Calibration::from_json(R"({"Detector": "Freia", "Version": 1, "Calibrations": [)" +
                                 hybrid(0, vmm(half)) + "," + hybrid(1, vmm(ones)) + "]}",
                             "cal.json", geometry);
  ReadoutParser calibrated{counters, geometry, cal, ReadoutSettings{100'000'000}};
  const ess::EssTime t = test::ticks(kPulseNs + 5000);
  const auto packet = PacketBuilder()
                          .readout(0, 0, 20, t.high, t.low, 120, 0, 0, 20)
                          .readout(0, 0, 20, t.high, t.low, 90, 0, 0, 21)
                          .readout(0, 0, 20, t.high, t.low, 90, 255, 1, 21)
                          .build();
  ess::PacketHeader header{};
  ASSERT_EQ(header_parser.parse(packet.data(), static_cast<std::uint32_t>(packet.size()), header),
            ess::HeaderStatus::kData);
  std::vector<Hit> hits;
  calibrated.parse(packet.data() + header.header_size,
                   static_cast<std::uint32_t>(packet.size() - header.header_size), header,
                   [&](std::uint32_t, const Hit& h) { hits.push_back(h); });
  ASSERT_EQ(hits.size(), 2U);
  EXPECT_EQ(hits[0].adc, 60);
  EXPECT_EQ(hits[0].time_ns, test::decoded(kPulseNs + 5000) + 34);  // 34.08 truncated
  EXPECT_EQ(hits[1].adc, 90);
  EXPECT_EQ(hits[1].time_ns, test::decoded(kPulseNs + 5000) - 25);  // 34.08 - 60 = -25.92
  EXPECT_EQ(errors("adc_below_threshold"), 1U);
}

TEST_F(ReadoutParserTest, ReadoutsBeforeThePulseUseThePreviousPulse) {
  const auto hits = parse(PacketBuilder().hit(0, 0, 1, 1, 100, 0).build());
  ASSERT_EQ(hits.size(), 1U);
  const ess::EssTime t = test::ticks(kPulseNs - 1000);
  const auto early = parse(PacketBuilder(1).readout(0, 0, 20, t.high, t.low, 100, 0, 1, 1).build());
  ASSERT_EQ(early.size(), 1U);
  EXPECT_EQ(early[0].hit.pulse_ns, test::decoded(kPulseNs - test::kPeriodNs));
  EXPECT_EQ(early[0].hit.time_ns, test::decoded(kPulseNs - 1000));
}

TEST_F(ReadoutParserTest, ReadoutsBeforeBothPulsesAreNegativeTof) {
  const ess::EssTime t = test::ticks(kPulseNs - 80'000'000);
  parse(PacketBuilder().readout(0, 0, 20, t.high, t.low, 100, 0, 1, 1).build());
  EXPECT_EQ(errors("tof_negative"), 1U);
}

TEST_F(ReadoutParserTest, ShortTailIsCountedOnceAndEndsThePacket) {
  const auto hits =
      parse(PacketBuilder().hit(0, 0, 1, 1, 100, 1000).raw({0, 0, 20, 0, 1, 2}).build());
  EXPECT_EQ(hits.size(), 1U);
  EXPECT_EQ(errors("truncated"), 1U);
  EXPECT_EQ(errors("length"), 0U);
  EXPECT_EQ(counters.value("readouts.received"), 2U);
}

}  // namespace
}  // namespace efu::multiblade
