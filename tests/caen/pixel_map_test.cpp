// Pixel ids per instrument at the corners and inner pixels. Every expected id is worked out by
// hand from the facility's formulas (docs/caen.md); the arithmetic is in the comment above it.
#include "pixel_map.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "efu/errors.h"
#include "test_support.h"

namespace efu::caen {
namespace {

using test::calibration_text;

CaenReadout readout(std::uint8_t fiber, std::uint8_t fen, std::uint8_t group, std::uint16_t a,
                    std::uint16_t b, std::uint16_t c = 0, std::uint16_t d = 0) {
  CaenReadout r;
  r.fiber = fiber;
  r.fen = fen;
  r.group = group;
  r.a = a;
  r.b = b;
  r.c = c;
  r.d = d;
  return r;
}

struct Fixture {
  Fixture(const char* config_text, const std::string& calibration, std::int64_t threshold = 0)
      : config(CaenConfig::from_text(config_text, "test.json")),
        calibration_(
            Calibration::from_text(calibration, "calib.json", instrument_name(config.instrument))),
        map(config, calibration_, threshold) {}
  CaenConfig config;
  Calibration calibration_;
  PixelMap map;
  std::uint32_t pixel(const CaenReadout& r) const {
    const MapResult m = map.map(r);
    EXPECT_EQ(m.status, MapStatus::kOk);
    return m.pixel;
  }
  MapStatus status(const CaenReadout& r) const { return map.map(r).status; }
};

// --- LoKI (Resolution 256, grid 256 × 336; see test_support.h) -----------------------------

Fixture loki(std::int64_t threshold = 0, int special = -1, const std::string& poly = "") {
  return Fixture(test::kLokiConfig,
                 calibration_text("loki", 48, 7, test::kLokiIntervals, special, poly), threshold);
}

TEST(LokiPixel, FirstPixel) {
  // Ring 0 (fibre 0), FEN 0, group 0; A=B=D=0, C=1000: sum 1000, position (A+B)/sum = 0,
  // straw ratio (B+D)/sum = 0 → straw 0. Global group 0/7 + 0·8 + 0·2 + 0/4 = 0.
  // x = round(0·255) = 0; y = 0 + 0·56 + 0·14 + 0·7 + 0 = 0; pixel = 1 + 0 + 256·0 = 1.
  EXPECT_EQ(loki().pixel(readout(0, 0, 0, 0, 0, 1000, 0)), 1U);
}

TEST(LokiPixel, LastPixel) {
  // Ring 2 (fibre 5), FEN 1, group 7 (layer 7%4 = 3, half 7/4 = 1); A=0, B=1000, C=D=0:
  // position 1000/1000 = 1, straw ratio 1 → straw 6 ([0.858, 1.0]).
  // Global group 224/7 + 3·4 + (0+1)·2 + 1 = 32 + 12 + 2 + 1 = 47 (the last of 48).
  // x = round(1·255) = 255; y = 224 + 3·(4·7) + (0+1)·14 + 1·7 + 6 = 224+84+14+7+6 = 335.
  // pixel = 1 + 255 + 256·335 = 86016 = 256·336, the last pixel of the grid.
  EXPECT_EQ(loki().pixel(readout(5, 1, 7, 0, 1000, 0, 0)), 86016U);
}

TEST(LokiPixel, InnerPixel) {
  // Ring 1 (fibre 2; FENOffset 2), FEN 1, group 5 (layer 1, half 1); A=300, B=200, C=400,
  // D=100: sum 1000, position 500/1000 = 0.5, straw ratio 300/1000 = 0.3 → straw 2
  // ([0.287, 0.429]). x = round(0.5·255) = round(127.5) = 128;
  // y = 0 + 1·56 + (2+1)·14 + 1·7 + 2 = 56 + 42 + 7 + 2 = 107; pixel = 1 + 128 + 256·107 = 27521.
  EXPECT_EQ(loki().pixel(readout(2, 1, 5, 300, 200, 400, 100)), 27521U);
}

TEST(LokiPixel, AmplitudesAreSigned) {
  // Ring 0, FEN 0, group 0; A = 0xFF9C = -100, B=600, C=400, D=100: sum 1000, position
  // (−100+600)/1000 = 0.5, straw ratio 700/1000 = 0.7 → straw 4 ([0.572, 0.714]).
  // x = 128, y = 4; pixel = 1 + 128 + 256·4 = 1153. (Unsigned, A would be 65436 and the
  // position 0.992.)
  EXPECT_EQ(loki().pixel(readout(0, 0, 0, 0xFF9C, 600, 400, 100)), 1153U);
}

TEST(LokiPixel, CalibrationCorrectsThePosition) {
  // As InnerPixel (global group 15, straw 2), with the polynomial a = 0.1 on every straw of
  // group 15: corrected = 0.5 − (0.1 + 0·0.5) = 0.4; x = round(0.4·255) = round(102.0) = 102;
  // pixel = 1 + 102 + 256·107 = 27495.
  const std::string poly =
      "[[0.1,0,0,0],[0.1,0,0,0],[0.1,0,0,0],[0.1,0,0,0],[0.1,0,0,0],[0.1,0,0,0],[0.1,0,0,0]]";
  EXPECT_EQ(loki(0, 15, poly).pixel(readout(2, 1, 5, 300, 200, 400, 100)), 27495U);
}

TEST(LokiPixel, CalibrationClampsBelowZero) {
  // a = 0.6: corrected = 0.5 − 0.6 < 0 → clamped to 0; x = 0; pixel = 1 + 0 + 256·107 = 27393.
  const std::string poly =
      "[[0.6,0,0,0],[0.6,0,0,0],[0.6,0,0,0],[0.6,0,0,0],[0.6,0,0,0],[0.6,0,0,0],[0.6,0,0,0]]";
  const Fixture f = loki(0, 15, poly);
  const MapResult m = f.map.map(readout(2, 1, 5, 300, 200, 400, 100));
  EXPECT_EQ(m.status, MapStatus::kOk);
  EXPECT_EQ(m.pixel, 27393U);
  EXPECT_EQ(m.clamp, Calibration::Clamp::kLow);
}

TEST(LokiPixel, Rejections) {
  const Fixture f = loki(/*threshold=*/100);
  EXPECT_EQ(f.status(readout(6, 0, 0, 300, 200, 400, 100)), MapStatus::kRing);   // ring 3 unused
  EXPECT_EQ(f.status(readout(0, 2, 0, 300, 200, 400, 100)), MapStatus::kFen);    // FENs 2
  EXPECT_EQ(f.status(readout(0, 0, 8, 300, 200, 400, 100)), MapStatus::kGroup);  // 8 per FEN
  EXPECT_EQ(f.status(readout(0, 0, 0, 0, 0, 0, 0)), MapStatus::kAmplitudeZero);
  EXPECT_EQ(f.status(readout(0, 0, 0, 20, 20, 20, 20)), MapStatus::kAmplitudeLow);  // 80 < 100
  // A = 0xFE0C = −500, C = 1000: sum 500, position −500/500 = −1.
  EXPECT_EQ(f.status(readout(0, 0, 0, 0xFE0C, 0, 1000, 0)), MapStatus::kPosition);
  // Straw ratio 287/2000 = 0.1435, between straw 0 (..0.143) and straw 1 (0.144..).
  EXPECT_EQ(f.status(readout(0, 0, 0, 0, 287, 1713, 0)), MapStatus::kOutsideInterval);
}

TEST(LokiPixel, GroupWithoutCalibration) {
  // A calibration of 32 groups: ring 2's groups start at 224/7 = 32.
  const Fixture f(test::kLokiConfig, calibration_text("loki", 32, 7, test::kLokiIntervals));
  EXPECT_EQ(f.status(readout(4, 0, 0, 300, 200, 400, 100)), MapStatus::kCalibrationGroup);
  EXPECT_EQ(f.status(readout(2, 1, 5, 300, 200, 400, 100)), MapStatus::kOk);
}

// --- BIFROST (Resolution 300, grid 900 × 15; intervals [0, .25], [.375, .625], [.75, 1]) ------

Fixture bifrost(const char* config = test::kBifrostConfig, int groups = 45) {
  return Fixture(config, calibration_text("bifrost", groups, 3, test::kBifrostIntervals));
}

TEST(BifrostPixel, FirstPixel) {
  // Ring 0, group 0, A=0, B=1000: ratio 0 → tube 0; along (0−0)/0.25 = 0 → trunc(0·99) = 0;
  // x = 0·300 + 0·100 + 0 = 0; y = 0·3 + 0 = 0; pixel = 1.
  EXPECT_EQ(bifrost().pixel(readout(0, 0, 0, 0, 1000)), 1U);
}

TEST(BifrostPixel, LastPixel) {
  // Ring 2 (fibre 4), group 14 (calibration group 2·15 + 14 = 44), A=1000, B=0: ratio 1 →
  // tube 2; along (1−0.75)/0.25 = 1 → trunc(99) = 99; x = 2·300 + (14%3)·100 + 99 = 899;
  // y = (14/3)·3 + 2 = 14; pixel = 1 + 899 + 900·14 = 13500 = 900·15.
  EXPECT_EQ(bifrost().pixel(readout(4, 0, 14, 1000, 0)), 13500U);
}

TEST(BifrostPixel, InnerPixel) {
  // Ring 1 (fibre 3), group 4, A=B=500: ratio 0.5 → tube 1; along (0.5−0.375)/0.25 = 0.5 →
  // trunc(49.5) = 49; x = 300 + (4%3)·100 + 49 = 449; y = (4/3)·3 + 1 = 4;
  // pixel = 1 + 449 + 900·4 = 4050.
  EXPECT_EQ(bifrost().pixel(readout(3, 0, 4, 500, 500)), 4050U);
  // Ring 0, group 0, A=30000, B=2000: ratio 0.9375 → tube 2; along 0.1875/0.25 = 0.75 →
  // trunc(74.25) = 74; x = 74, y = 2; pixel = 1 + 74 + 1800 = 1875.
  EXPECT_EQ(bifrost().pixel(readout(0, 0, 0, 30000, 2000)), 1875U);
}

TEST(BifrostPixel, AmplitudesAreUnsigned) {
  // MaxAmpl 65535; A = 0x9000 = 36864, B = 12288: ratio 36864/49152 = 0.75 → tube 2, along 0;
  // x = 0, y = 2; pixel = 1 + 0 + 1800 = 1801. (Signed, A would be −28672: ratio 1.75.)
  const Fixture f = bifrost(
      R"({"Detector": "bifrost", "MaxRing": 2, "Resolution": 300, "MaxGroup": 14, "MaxAmpl": 65535})");
  EXPECT_EQ(f.pixel(readout(0, 0, 0, 0x9000, 12288)), 1801U);
}

TEST(BifrostPixel, Rejections) {
  const Fixture f = bifrost();
  EXPECT_EQ(f.status(readout(6, 0, 0, 500, 500)), MapStatus::kRing);    // ring 3 > MaxRing 2
  EXPECT_EQ(f.status(readout(0, 1, 0, 500, 500)), MapStatus::kFen);     // MaxFEN 0
  EXPECT_EQ(f.status(readout(0, 0, 15, 500, 500)), MapStatus::kGroup);  // MaxGroup 14
  EXPECT_EQ(f.status(readout(0, 0, 0, 0, 0)), MapStatus::kAmplitudeZero);
  EXPECT_EQ(f.status(readout(0, 0, 0, 30000, 3000)), MapStatus::kAmplitudeHigh);  // 33000
  EXPECT_EQ(f.status(readout(0, 0, 0, 300, 700)), MapStatus::kOutsideInterval);   // 0.3
  EXPECT_EQ(bifrost(test::kBifrostConfig, 30).status(readout(4, 0, 0, 500, 500)),
            MapStatus::kCalibrationGroup);  // group 30 of 30
}

// --- Sources: BIFROST's one ev44 source per triplet, the others' one ---------------------------
// The names follow the reference's BIFROST serialiser formula for source index i:
//   ring = i / 15, t = i − 15·ring;  arc = t / 3,  triplet = t % 3 + 3·ring
//   name = "arc={arc};triplet={triplet}"

TEST(CaenSources, BifrostNamesFromTheFacilityFormula) {
  // i = 0: ring 0, t 0 → arc 0/3 = 0, triplet 0%3 + 0 = 0.
  EXPECT_EQ(bifrost_source_name(0), "arc=0;triplet=0");
  // i = 2: ring 0, t 2 → arc 0, triplet 2.
  EXPECT_EQ(bifrost_source_name(2), "arc=0;triplet=2");
  // i = 14: ring 0, t 14 → arc 14/3 = 4, triplet 14%3 = 2.
  EXPECT_EQ(bifrost_source_name(14), "arc=4;triplet=2");
  // i = 15: ring 1, t 0 → arc 0, triplet 0 + 3 = 3.
  EXPECT_EQ(bifrost_source_name(15), "arc=0;triplet=3");
  // i = 22: ring 1, t 7 → arc 7/3 = 2, triplet 7%3 + 3 = 4.
  EXPECT_EQ(bifrost_source_name(22), "arc=2;triplet=4");
  // i = 31: ring 2, t 1 → arc 0, triplet 1 + 6 = 7.
  EXPECT_EQ(bifrost_source_name(31), "arc=0;triplet=7");
  // i = 44: ring 2, t 14 → arc 4, triplet 2 + 6 = 8 (the last of MaxRing 2's 45).
  EXPECT_EQ(bifrost_source_name(44), "arc=4;triplet=8");
}

TEST(CaenSources, BifrostHasOneSourcePerTripletEachNamedOnce) {
  // MaxRing 2: 15·3 = 45 sources, the 5 arcs × 9 triplets, no name twice.
  const Fixture f = bifrost();
  ASSERT_EQ(source_count(f.config), 45U);
  std::vector<std::string> names;
  for (std::uint32_t i = 0; i < 45; ++i) names.push_back(bifrost_source_name(i));
  std::vector<std::string> want;
  for (int arc = 0; arc < 5; ++arc) {
    for (int triplet = 0; triplet < 9; ++triplet) {
      want.push_back("arc=" + std::to_string(arc) + ";triplet=" + std::to_string(triplet));
    }
  }
  std::sort(names.begin(), names.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(names, want);
  // MaxRing 0: the 15 of ring 0.
  const Fixture one(R"({"Detector": "bifrost", "MaxRing": 0, "Resolution": 300, "MaxGroup": 14})",
                    calibration_text("bifrost", 15, 3, test::kBifrostIntervals));
  EXPECT_EQ(source_count(one.config), 15U);
}

TEST(CaenSources, BifrostEventsCarryTheirTripletsSource) {
  const Fixture f = bifrost();
  // Fibre 3 → ring 1, group 7, A = B = 500 (ratio 0.5, tube 1): source 1·15 + 7 = 22,
  // "arc=2;triplet=4".
  MapResult m = f.map.map(readout(3, 0, 7, 500, 500));
  ASSERT_EQ(m.status, MapStatus::kOk);
  EXPECT_EQ(m.source, 22U);
  EXPECT_EQ(bifrost_source_name(m.source), "arc=2;triplet=4");
  // Fibre 0 → ring 0, group 0: source 0. Fibre 5 → ring 2, group 14: source 2·15 + 14 = 44.
  EXPECT_EQ(f.map.map(readout(0, 0, 0, 0, 1000)).source, 0U);
  EXPECT_EQ(f.map.map(readout(5, 0, 14, 1000, 0)).source, 44U);
  // Fibre 4 → ring 2, group 1: source 31, "arc=0;triplet=7".
  m = f.map.map(readout(4, 0, 1, 500, 500));
  ASSERT_EQ(m.status, MapStatus::kOk);
  EXPECT_EQ(m.source, 31U);
}

TEST(CaenSources, TheOtherInstrumentsHaveOneSource) {
  const Fixture l = loki();
  EXPECT_EQ(source_count(l.config), 1U);
  EXPECT_FALSE(has_own_sources(l.config.instrument));
  EXPECT_EQ(l.map.map(readout(2, 1, 5, 300, 200, 400, 100)).source, 0U);
  EXPECT_TRUE(has_own_sources(Instrument::kBifrost));
  EXPECT_FALSE(has_own_sources(Instrument::kCspec));
  EXPECT_FALSE(has_own_sources(Instrument::kMiracles));
}

// --- CSPEC (Resolution 180, grid 900 × 180) -------------------------------------------------

Fixture cspec(const char* config = test::kCspecConfig) {
  return Fixture(config, calibration_text("cspec", 120, 1, "[[0.0, 1.0]]"));
}

TEST(CspecPixel, FirstPixel) {
  // Ring 0, group 0, A=0, B=100: x = 0 + 0·(180/24) = 0; y = (179·0)/100 = 0; pixel = 1.
  EXPECT_EQ(cspec().pixel(readout(0, 0, 0, 0, 100)), 1U);
}

TEST(CspecPixel, LastPixel) {
  // Ring 4 (fibre 8), group 23, A=100, B=0: x = 4·180 + 23·7 = 881; y = (179·100)/100 = 179;
  // pixel = 1 + 881 + 900·179 = 161982 (the top row's last pixel that the layout reaches).
  EXPECT_EQ(cspec().pixel(readout(8, 0, 23, 100, 0)), 161982U);
}

TEST(CspecPixel, InnerPixel) {
  // Ring 1 (fibre 3), group 10, A=300, B=700: x = 180 + 10·7 = 250; y = 53700/1000 = 53
  // (integer division); pixel = 1 + 250 + 900·53 = 47951.
  EXPECT_EQ(cspec().pixel(readout(3, 0, 10, 300, 700)), 47951U);
}

TEST(CspecPixel, Rejections) {
  const Fixture f = cspec();
  EXPECT_EQ(f.status(readout(10, 0, 0, 1, 1)), MapStatus::kRing);  // ring 5 > 4
  EXPECT_EQ(f.status(readout(0, 1, 0, 1, 1)), MapStatus::kFen);
  EXPECT_EQ(f.status(readout(0, 0, 24, 1, 1)), MapStatus::kGroup);
  EXPECT_EQ(f.status(readout(0, 0, 0, 0, 0)), MapStatus::kAmplitudeZero);
  // The facility's cspec.json has Resolution 300 on a grid 180 high: A=700, B=300 gives
  // y = 299·700/1000 = 209 ≥ 180, outside the grid.
  const Fixture wide =
      cspec(R"({"Detector": "cspec", "MaxRing": 4, "Resolution": 300, "MaxGroup": 180})");
  EXPECT_EQ(wide.status(readout(0, 0, 0, 700, 300)), MapStatus::kPixel);
}

// --- MIRACLES (Resolution 128: h = 63, rings 2 and 3 start at y = 64; grid 48 × 128) --------

Fixture miracles() {
  return Fixture(test::kMiraclesConfig,
                 calibration_text("miracles", 48, 2, "[[0.0, 0.5], [0.501, 1.0]]"));
}

TEST(MiraclesPixel, FirstPixel) {
  // Ring 0, group 0, A=1000, B=0: tube A (A ≥ B), p = 1; along = round(63 − (1−0.5)·2·63) = 0;
  // x = 0 + 0 + 0 = 0; y = 0; pixel = 1.
  EXPECT_EQ(miracles().pixel(readout(0, 0, 0, 1000, 0)), 1U);
}

TEST(MiraclesPixel, LastReachablePixel) {
  // Ring 3 (fibre 6), group 11, A=B=500: tube A on a tie, p = 0.5; along = round(63 − 0) = 63;
  // x = 2·11 + 24 + 0 = 46; y = 64 + 63 = 127; pixel = 1 + 46 + 48·127 = 6143.
  EXPECT_EQ(miracles().pixel(readout(6, 0, 11, 500, 500)), 6143U);
}

TEST(MiraclesPixel, InnerPixels) {
  // Ring 2 (fibre 4), group 5, A=300, B=700: tube B; p = 0.3f = 0.30000001;
  // along = trunc(0.30000001·2·63) = trunc(37.8000015) = 37; x = 10 + 0 + 1 = 11;
  // y = 64 + 37 = 101; pixel = 1 + 11 + 48·101 = 4860.
  EXPECT_EQ(miracles().pixel(readout(4, 0, 5, 300, 700)), 4860U);
  // Ring 1 (fibre 2), group 3, A=800, B=200: tube A; p = 0.8f = 0.80000001;
  // along = round(63 − 0.30000001·126) = round(25.1999985) = 25; x = 6 + 24 + 0 = 30; y = 25;
  // pixel = 1 + 30 + 48·25 = 1231.
  EXPECT_EQ(miracles().pixel(readout(2, 0, 3, 800, 200)), 1231U);
}

TEST(MiraclesPixel, Rejections) {
  const Fixture f = miracles();
  EXPECT_EQ(f.status(readout(8, 0, 0, 1, 1)), MapStatus::kRing);  // ring 4 > 3
  EXPECT_EQ(f.status(readout(0, 0, 0, 0, 0)), MapStatus::kAmplitudeZero);
  EXPECT_EQ(f.status(readout(0, 0, 24, 1, 1)), MapStatus::kPixel);  // x = 48 ≥ 48
}

// --- Loading --------------------------------------------------------------------------------

TEST(PixelMapLoading, GroupSizeMustFitTheInstrument) {
  const CaenConfig config = CaenConfig::from_text(test::kLokiConfig, "loki.json");
  const Calibration cal = Calibration::from_text(
      calibration_text("loki", 48, 3, test::kBifrostIntervals), "cal.json", "loki");
  EXPECT_THROW(PixelMap(config, cal, 0), ConfigError);
}

}  // namespace
}  // namespace efu::caen

namespace efu::caen {
namespace {

// round_non_negative() replaces std::round in LoKI's x: it must agree with it everywhere in
// [0, 2^31), most of all on the halves and next to them.
TEST(RoundNonNegative, AgreesWithStdRoundOnTheEdgesAndAtRandom) {
  std::vector<double> values{0.0, 0.5, 1.5, 2.5, 0.49999999999999994, 511.5, 65534.5, 2147483647.0,
                             std::nextafter(0.5, 0.0), std::nextafter(0.5, 1.0),
                             std::nextafter(1.5, 0.0), std::nextafter(1.5, 2.0),
                             std::nextafter(511.5, 0.0), std::nextafter(65534.5, 70000.0)};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> any(0.0, 65535.0);
  std::uniform_int_distribution<std::uint32_t> whole(0, 65534);
  for (int i = 0; i < 100000; ++i) {
    values.push_back(any(rng));
    values.push_back(whole(rng) + 0.5);  // a half: the rounding edge itself
  }
  for (const double v : values) {
    ASSERT_EQ(round_non_negative(v), static_cast<std::uint32_t>(std::round(v))) << std::hexfloat
                                                                                 << v;
  }
}

}  // namespace
}  // namespace efu::caen
