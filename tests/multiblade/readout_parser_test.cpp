#include "readout_parser.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "efu/ess/readout_header.h"
#include "multiblade_pipeline.h"
#include "test_support.h"

namespace efu::multiblade {
namespace {

using test::kPulseNs;
using test::PacketBuilder;

struct Mapped {
  std::uint32_t cassette;
  Hit hit;
};

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

  Geometry geometry = Geometry::from_file(default_geometry_path());
  CounterRegistry counters;
  ess::HeaderParser header_parser{counters, kDetectorType};
  ReadoutParser parser{counters, geometry, ReadoutSettings{50, 100'000'000}};
};

TEST_F(ReadoutParserTest, MapsValidReadoutsToHits) {
  // Cassette 3 is fiber 1, fen 1; wires are channels 16.. of VMM 0, strips VMM 1.
  const auto hits =
      parse(PacketBuilder().hit(1, 1, 0, 20, 300, 5000).hit(1, 1, 1, 63, 700, 5100).build());
  ASSERT_EQ(hits.size(), 2U);
  EXPECT_EQ(hits[0].cassette, 3U);
  EXPECT_EQ(hits[0].hit.plane, Plane::kWire);
  EXPECT_EQ(hits[0].hit.coordinate, 4);
  EXPECT_EQ(hits[0].hit.adc, 300);
  EXPECT_EQ(hits[0].hit.pulse_ns,
            ess::to_ns(ess::to_ess(kPulseNs).high, ess::to_ess(kPulseNs).low));
  EXPECT_EQ(hits[0].hit.time_ns - hits[0].hit.pulse_ns, test::quantised_tof(5000));
  EXPECT_EQ(hits[1].hit.plane, Plane::kStrip);
  EXPECT_EQ(hits[1].hit.coordinate, 63);
  EXPECT_EQ(counters.value("readouts.received"), 2U);
  EXPECT_EQ(counters.value("readouts.accepted"), 2U);
}

TEST_F(ReadoutParserTest, OverThresholdBitIsNotPartOfTheAdc) {
  const auto hits = parse(PacketBuilder().hit(0, 0, 1, 0, kOverThresholdBit | 0x3FF, 10).build());
  ASSERT_EQ(hits.size(), 1U);
  EXPECT_EQ(hits[0].hit.adc, 0x3FF);
}

TEST_F(ReadoutParserTest, CountsEveryMalformedReadoutAndKeepsTheValidOnesAroundIt) {
  const ess::EssTime t = ess::to_ess(kPulseNs + 1000);
  const auto packet = PacketBuilder()
                          .hit(0, 0, 1, 1, 100, 1000)                              // good
                          .readout({0, 0, 19, t.high, t.low, 0, 100, 0, 0, 1, 1})  // length
                          .hit(0, 0, 1, 2, 100, 1000)                              // good
                          .hit(2, 0, 1, 1, 100, 1000)                              // fiber
                          .hit(0, 2, 1, 1, 100, 1000)                              // fen
                          .hit(0, 0, 7, 1, 100, 1000)                              // vmm
                          .hit(0, 0, 0, 15, 100, 1000)                             // channel
                          .hit(0, 0, 0, 70, 100, 1000)                             // channel
                          .readout({0, 0, 20, t.high, ess::kTicksPerSecond, 0, 100, 0, 0, 1, 1})
                          .hit(0, 0, 1, 3, 49, 1000)          // adc below threshold
                          .hit(0, 0, 1, 4, 50, 1000)          // good: threshold is inclusive
                          .hit(0, 0, 1, 5, 100, 100'000'100)  // tof too large
                          .hit(0, 0, 1, 6, 100, 1000)         // good
                          .build();
  const auto hits = parse(packet);
  ASSERT_EQ(hits.size(), 4U);
  EXPECT_EQ(hits[0].hit.coordinate, 1);
  EXPECT_EQ(hits[1].hit.coordinate, 2);
  EXPECT_EQ(hits[2].hit.coordinate, 4);
  EXPECT_EQ(hits[3].hit.coordinate, 6);
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

TEST_F(ReadoutParserTest, ReadoutsBeforeThePulseUseThePreviousPulse) {
  const auto hits = parse(PacketBuilder().hit(0, 0, 1, 1, 100, 0).build());
  ASSERT_EQ(hits.size(), 1U);
  // PacketBuilder's previous pulse is 71.4 ms earlier; 1 us before the pulse is ~71.4 ms TOF.
  const ess::EssTime t = ess::to_ess(kPulseNs - 1000);
  const auto packet =
      PacketBuilder(1).readout({0, 0, 20, t.high, t.low, 0, 100, 0, 0, 1, 1}).build();
  const auto early = parse(packet);
  ASSERT_EQ(early.size(), 1U);
  EXPECT_LT(early[0].hit.pulse_ns, hits[0].hit.pulse_ns);
  EXPECT_NEAR(static_cast<double>(early[0].hit.time_ns - early[0].hit.pulse_ns),
              71'428'571.0 - 1000.0, 12.0);
}

TEST_F(ReadoutParserTest, ReadoutsBeforeBothPulsesAreNegativeTof) {
  const ess::EssTime t = ess::to_ess(kPulseNs - 80'000'000);
  parse(PacketBuilder().readout({0, 0, 20, t.high, t.low, 0, 100, 0, 0, 1, 1}).build());
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
