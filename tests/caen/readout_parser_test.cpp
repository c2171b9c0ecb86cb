// The CAEN readout parser on byte-literal packets: every rejection lands in its own counter,
// the blocks around a bad one are still used. LoKI config of test_support.h, null calibration.
#include "readout_parser.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "efu/ess/readout_header.h"
#include "test_support.h"

namespace efu::caen {
namespace {

using Bytes = std::vector<std::uint8_t>;

// ESS header v1: padding 0, version 1, "ESS", type 0x30 (LoKI), total length (filled in by
// packet()), output queue 0, time source 0, pulse 1000 s + 0 ticks, previous pulse 999 s +
// 81763036 ticks (0x04DF9ADC: 928571431 ns, 71428569 ns before the pulse), sequence 0, 2 padding.
const Bytes kHeader{0x00, 0x01, 0x45, 0x53, 0x53, 0x30, 0x00, 0x00, 0x00, 0x00, 0xE8,
                    0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xE7, 0x03, 0x00, 0x00,
                    0xDC, 0x9A, 0xDF, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
constexpr std::uint64_t kPulseNs = 1000'000'000'000ULL;
constexpr std::uint64_t kPrevPulseNs = 999'928'571'431ULL;  // 999 s + trunc(81763036 · 11.3569 ns)

// A good readout: fibre 2 (ring 1), FEN 1, length 24, time 1000 s + 88 ticks (999 ns after the
// pulse), flags 0, group 5, unused 0, A=300 (0x012C), B=200 (0x00C8), C=400 (0x0190),
// D=100 (0x0064). pixel_map_test.cpp works this readout's pixel out by hand: 27521.
const Bytes kGood{0x02, 0x01, 0x18, 0x00, 0xE8, 0x03, 0x00, 0x00, 0x58, 0x00, 0x00, 0x00,
                  0x00, 0x05, 0x00, 0x00, 0x2C, 0x01, 0xC8, 0x00, 0x90, 0x01, 0x64, 0x00};
constexpr std::uint32_t kGoodPixel = 27521;

Bytes packet(const std::vector<Bytes>& readouts) {
  Bytes p = kHeader;
  for (const Bytes& r : readouts) p.insert(p.end(), r.begin(), r.end());
  p[6] = static_cast<std::uint8_t>(p.size() & 0xFF);  // total length, little-endian
  p[7] = static_cast<std::uint8_t>(p.size() >> 8);
  return p;
}

/// kGood with byte `at` replaced by `value` (and more pairs).
Bytes good_with(std::initializer_list<std::pair<int, std::uint8_t>> changes) {
  Bytes r = kGood;
  for (const auto& [at, value] : changes) r.at(static_cast<std::size_t>(at)) = value;
  return r;
}

class ReadoutParserTest : public ::testing::Test {
 protected:
  std::vector<test::Event> parse(const Bytes& p) {
    std::vector<test::Event> out;
    ess::PacketHeader header{};
    EXPECT_EQ(header_parser.parse(p.data(), static_cast<std::uint32_t>(p.size()), header),
              ess::HeaderStatus::kData);
    parser.parse(p.data() + header.header_size,
                 static_cast<std::uint32_t>(p.size() - header.header_size), header,
                 [&](std::uint64_t pulse, std::uint32_t tof, std::uint32_t pixel) {
                   out.push_back({pulse, tof, pixel});
                 });
    return out;
  }
  std::uint64_t errors(const std::string& reason) const {
    return counters.value("readouts.errors." + reason);
  }
  std::uint64_t all_errors() const {
    std::uint64_t sum =
        counters.value("readouts.errors.length") + counters.value("readouts.errors.truncated");
    for (const char* name : kReadoutErrorNames) sum += errors(name);
    return sum;
  }

  CaenConfig config = CaenConfig::from_text(test::kLokiConfig, "loki.json");
  Calibration calibration = Calibration::from_text(
      test::calibration_text("loki", 48, 7, test::kLokiIntervals), "cal.json", "loki");
  PixelMap pixels{config, calibration, 100};
  CounterRegistry counters;
  ess::HeaderParser header_parser{counters, ess::HeaderSettings{0x30, config.max_pulse_time_ns}};
  ReadoutParser parser{counters, pixels, ReadoutSettings{config.max_tof_ns, 0}};
};

TEST_F(ReadoutParserTest, AGoodReadoutIsOneEvent) {
  const auto events = parse(packet({kGood, kGood}));
  ASSERT_EQ(events.size(), 2U);
  // 88 ticks · 11.35686 ns = 999.40 ns, truncated as the facility does: 999.
  EXPECT_EQ(events[0], (test::Event{kPulseNs, 999, kGoodPixel}));
  EXPECT_EQ(counters.value("readouts.received"), 2U);
  EXPECT_EQ(counters.value("events.formed"), 2U);
  EXPECT_EQ(all_errors(), 0U);
}

TEST_F(ReadoutParserTest, AReadoutBeforeThePulseBelongsToThePreviousPulse) {
  // 999 s + 88052400 ticks (0x053F92B0) = 999.999998864 s: after the previous pulse.
  const auto events =
      parse(packet({good_with({{4, 0xE7}, {8, 0xB0}, {9, 0x92}, {10, 0x3F}, {11, 0x05}})}));
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].pulse_ns, kPrevPulseNs);
  EXPECT_EQ(events[0].tof_ns, 999'999'998'864ULL - kPrevPulseNs);
}

TEST_F(ReadoutParserTest, EveryRejectionHasItsCounterAndTheOthersAreUsed) {
  // Amplitude bytes 16..23 (A, B, C, D little-endian) of the amplitude cases:
  // all zero; A=B=C=D=10 (sum 40 < threshold 100); A=0xFE0C=-500, C=0x03E8=1000 (position -1);
  // B=0x011F=287, C=0x06B1=1713 (straw ratio 0.1435, between straws 0 and 1).
  const Bytes zero =
      good_with({{16, 0}, {17, 0}, {18, 0}, {19, 0}, {20, 0}, {21, 0}, {22, 0}, {23, 0}});
  const Bytes low =
      good_with({{16, 10}, {17, 0}, {18, 10}, {19, 0}, {20, 10}, {21, 0}, {22, 10}, {23, 0}});
  const Bytes negative = good_with(
      {{16, 0x0C}, {17, 0xFE}, {18, 0}, {19, 0}, {20, 0xE8}, {21, 0x03}, {22, 0}, {23, 0}});
  const Bytes between = good_with(
      {{16, 0}, {17, 0}, {18, 0x1F}, {19, 0x01}, {20, 0xB1}, {21, 0x06}, {22, 0}, {23, 0}});
  const auto events = parse(packet({
      good_with({{2, 0x17}}),  // data_length 23
      good_with({{0, 0x18}}),  // fibre 24 > 23
      good_with({{1, 0x18}}),  // FEN 24 > 23
      // time low 88052500 (0x053F9314): one tick more than a second has
      good_with({{8, 0x14}, {9, 0x93}, {10, 0x3F}, {11, 0x05}}),
      good_with({{4, 0xE7}, {8, 0x00}}),  // 999 s + 0: before both pulses
      good_with({{4, 0xEA}}),             // 1002 s: TOF 2 s > MaxTOFNS 1 s
      good_with({{0, 0x06}}),             // fibre 6: ring 3 is not configured
      good_with({{1, 0x02}}),             // FEN 2: ring 1 has FENs 0 and 1
      good_with({{13, 0x08}}),            // group 8: a FEN has groups 0..7
      zero,
      low,
      negative,
      between,
      kGood,
  }));
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].pixel, kGoodPixel);
  for (const char* name :
       {"length", "fiber", "fen", "time_fraction", "tof_negative", "tof_too_large", "ring", "group",
        "amplitude_zero", "amplitude_low", "position", "outside_interval"}) {
    EXPECT_EQ(errors(name), name == std::string("fen") ? 2U : 1U) << name;
  }
  EXPECT_EQ(counters.value("readouts.received"), 14U);
  EXPECT_EQ(counters.value("events.formed") + all_errors(), 14U);
}

TEST_F(ReadoutParserTest, AShortTailIsCountedAsTruncated) {
  Bytes tail(kGood.begin(), kGood.begin() + 10);
  const auto events = parse(packet({kGood, tail}));
  EXPECT_EQ(events.size(), 1U);
  EXPECT_EQ(errors("truncated"), 1U);
  EXPECT_EQ(counters.value("readouts.received"), 2U);
}

}  // namespace
}  // namespace efu::caen
