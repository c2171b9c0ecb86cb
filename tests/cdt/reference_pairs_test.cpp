// Every (readout → pixel) pair of the reference's geometry unit tests (ESS event-formation-unit,
// src/modules/dream/test/ at 8b399165), as literals, test by test. Where the reference tests a
// module on its own (SUMO, Cuboid, PADetector), the pixel is the module type's local pixel
// (local_pixel()); where it tests an instrument (Dream/Magic/HeimdalGeometryTest,
// DreamInstrumentTest), the instrument's pixel. Checks of the reference's internal x/y/cassette
// helpers are made on the same helpers here (sumo_x, sumo_y, sumo_cassette, pa_x, pa_y).
// Cases that cannot exist in efu are listed at the end with the reason.
#include <array>
#include <string>

#include <gtest/gtest.h>

#include "cdt_test_support.h"
#include "efu/errors.h"
#include "geometry.h"

namespace efu::cdt {
namespace {

using test::module;
using test::readout;

constexpr PixelResult ok(std::uint32_t pixel) { return PixelResult{PixelStatus::kOk, pixel}; }
constexpr PixelResult no(PixelStatus s) { return PixelResult{s, 0}; }

// --- SUMOGeometryTest: SUMO(616, 256), the BwEndCap grid; Data{..., Cathode 16, Anode 16} --
const Module kBw0 = module(ModuleType::kBwEndCap, 0);

TEST(CdtReferenceSumo, Constructor) {
  // UnitId 0 is no SUMO → 0
  EXPECT_EQ(local_pixel(kBw0, readout(0, 16, 16)), no(PixelStatus::kUnit));
}

TEST(CdtReferenceSumo, InvalidSector) {
  EXPECT_EQ(local_pixel(module(ModuleType::kBwEndCap, 23), readout(6, 16, 16)),
            no(PixelStatus::kIndex));
  EXPECT_EQ(local_pixel(module(ModuleType::kBwEndCap, 24), readout(6, 16, 16)),
            no(PixelStatus::kIndex));
}

TEST(CdtReferenceSumo, ValidSector) {
  // sumo 6, A 16, C 16: cassette 2·1 − 0 = 2, counter 1, wire 0, strip 0; x = 56·s + 5, y 0
  constexpr std::array<std::uint32_t, 11> expected{6,   62,  118, 174, 230, 286,
                                                   342, 398, 454, 510, 566};
  for (std::uint8_t s = 0; s < 11; ++s) {
    EXPECT_EQ(local_pixel(module(ModuleType::kBwEndCap, s), readout(6, 16, 16)), ok(expected[s]))
        << int(s);
  }
}

TEST(CdtReferenceSumo, InvalidSumo) {
  for (const std::uint8_t sumo : {0, 1, 2, 7, 8}) {
    EXPECT_EQ(local_pixel(kBw0, readout(sumo, 16, 16)), no(PixelStatus::kUnit)) << int(sumo);
  }
}

TEST(CdtReferenceSumo, ValidSumo) {
  // A 16, C 16: sumo 3: cassette 0, x = 48 + 1; sumo 4: cassette 2 − 1 = 1, x = 36 + 2 + 1;
  // sumo 5: cassette 2, x = 20 + 4 + 1; sumo 6: cassette 2, x = 0 + 4 + 1
  EXPECT_EQ(local_pixel(kBw0, readout(3, 16, 16)), ok(50));
  EXPECT_EQ(local_pixel(kBw0, readout(4, 16, 16)), ok(40));
  EXPECT_EQ(local_pixel(kBw0, readout(5, 16, 16)), ok(26));
  EXPECT_EQ(local_pixel(kBw0, readout(6, 16, 16)), ok(6));
}

TEST(CdtReferenceSumo, GetXInvalidCassette) {
  EXPECT_EQ(sumo_x(0, 3, 0, 0), 48);
  EXPECT_EQ(sumo_x(0, 4, 0, 0), 36);
  EXPECT_EQ(sumo_x(0, 5, 0, 0), 20);
  EXPECT_EQ(sumo_x(0, 6, 0, 0), 0);
  // Cassettes 4, 6, 8, 10 of SUMOs 3, 4, 5, 6, from readouts:
  // sumo 3, C 64, A 0: 2·2 + 0 = 4; sumo 4, C 48, A 32: 2·3 + 1 − 1 = 6;
  // sumo 5, C 64, A 0: 2·4 = 8;    sumo 6, C 80, A 0: 2·5 = 10
  EXPECT_EQ(sumo_cassette(3, 0, 64), 4);
  EXPECT_EQ(sumo_cassette(4, 32, 48), 6);
  EXPECT_EQ(sumo_cassette(5, 0, 64), 8);
  EXPECT_EQ(sumo_cassette(6, 0, 80), 10);
  EXPECT_EQ(local_pixel(kBw0, readout(3, 64, 0)), no(PixelStatus::kCassette));
  EXPECT_EQ(local_pixel(kBw0, readout(4, 48, 32)), no(PixelStatus::kCassette));
  EXPECT_EQ(local_pixel(kBw0, readout(5, 64, 0)), no(PixelStatus::kCassette));
  EXPECT_EQ(local_pixel(kBw0, readout(6, 80, 0)), no(PixelStatus::kCassette));
}

TEST(CdtReferenceSumo, GetXValidCounters) {
  // sector 0, cassette 1: first column + 2 + counter
  EXPECT_EQ(sumo_x(0, 3, 1, 0), 50);
  EXPECT_EQ(sumo_x(0, 3, 1, 1), 51);
  EXPECT_EQ(sumo_x(0, 4, 1, 0), 38);
  EXPECT_EQ(sumo_x(0, 4, 1, 1), 39);
  EXPECT_EQ(sumo_x(0, 5, 1, 0), 22);
  EXPECT_EQ(sumo_x(0, 5, 1, 1), 23);
  EXPECT_EQ(sumo_x(0, 6, 1, 0), 2);
  EXPECT_EQ(sumo_x(0, 6, 1, 1), 3);
}

TEST(CdtReferenceSumo, GetYValidWiresAndStrips) {
  EXPECT_EQ(sumo_y(0, 0), 0);
  EXPECT_EQ(sumo_y(15, 0), 15);
  EXPECT_EQ(sumo_y(0, 15), 240);
  EXPECT_EQ(sumo_y(15, 15), 255);
}

TEST(CdtReferenceSumo, TestingICD4BoxCorners) {
  EXPECT_EQ(sumo_x(0, 6, 0, 0), 0);         // top left
  EXPECT_EQ(sumo_x(22, 3, 3, 1), 1287);     // top right: sector 22, past the BwEndCap
  EXPECT_EQ(sumo_x(3, 6, 0, 0), 168 + 0);   // box left
  EXPECT_EQ(sumo_x(3, 3, 3, 1), 168 + 55);  // box right
  EXPECT_EQ(sumo_y(0, 3), 48 + 0);          // box top
  EXPECT_EQ(sumo_y(15, 3), 48 + 15);        // box bottom
  EXPECT_EQ(sumo_y(0, 0), 0);               // top
  EXPECT_EQ(sumo_y(15, 15), 255);           // bottom
  // The box (sector 3 of the BwEndCap) as readouts. Right/bottom: sumo 3, cassette 3
  // (A/32 = 1, C/32 = 1), counter 1 and wire 15 → A 63, strip 3 → C 35; x 223, y 63
  // → 1 + 223 + 616·63 = 39032. Left/top: sumo 6, cassette 0 (A/32 = 0, C/16 = 0), wire 0,
  // strip 3 → A 0, C 3; x 168, y 48 → 1 + 168 + 616·48 = 29737.
  EXPECT_EQ(local_pixel(module(ModuleType::kBwEndCap, 3), readout(3, 35, 63)), ok(39'032));
  EXPECT_EQ(local_pixel(module(ModuleType::kBwEndCap, 3), readout(6, 3, 0)), ok(29'737));
}

struct CassetteCase {
  std::uint8_t sumo, anode, cathode;
  std::int32_t cassette;
};

TEST(CdtReferenceSumo, CDTMappings) {
  // From dream_voxel_position_relations[3].png (CDT, 30 Jan 2023), via the reference's tests.
  // clang-format off
  constexpr CassetteCase cases[] = {
      {6, 0, 0, 0},   {6, 31, 15, 0}, {6, 0, 16, 2},  {6, 32, 16, 1}, {6, 0, 32, 4},
      {6, 32, 32, 3}, {6, 0, 48, 6},  {6, 32, 48, 5}, {6, 0, 64, 8},  {6, 32, 64, 7},
      {6, 32, 80, 9},                                                                  // 11
      {5, 0, 0, 0},   {5, 32, 0, 1},  {5, 0, 16, 2},  {5, 32, 16, 3}, {5, 0, 32, 4},
      {5, 32, 32, 5}, {5, 0, 48, 6},  {5, 32, 48, 7},                                  // 8
      {4, 32, 0, 0},  {4, 0, 16, 1},  {4, 32, 16, 2}, {4, 0, 32, 3},  {4, 32, 32, 4},
      {4, 0, 48, 5},                                                                   // 6
      {3, 0, 0, 0},   {3, 31, 15, 0}, {3, 32, 16, 1}, {3, 47, 31, 1}, {3, 0, 32, 2},
      {3, 31, 47, 2}, {3, 32, 48, 3}, {3, 47, 63, 3},                                  // 8
  };
  // clang-format on
  for (const CassetteCase& c : cases) {
    EXPECT_EQ(sumo_cassette(c.sumo, c.anode, c.cathode), c.cassette)
        << int(c.sumo) << " " << int(c.anode) << " " << int(c.cathode);
  }
}

// --- CuboidTest: Cuboid(112 × 3584); Readout all zeros ----------------------------------------
TEST(CdtReferenceCuboid, Rotations) {
  std::int32_t x = 1;
  std::int32_t y = 12;
  rotate(0, x, y);
  EXPECT_EQ(x, 1);
  EXPECT_EQ(y, 12);
  rotate(1, x, y);
  EXPECT_NE(x, 1);
  EXPECT_NE(y, 12);
  rotate(1, x, y);
  rotate(1, x, y);
  rotate(1, x, y);
  EXPECT_EQ(x, 1);
  EXPECT_EQ(y, 12);
  rotate(2, x, y);
  EXPECT_NE(x, 1);
  EXPECT_NE(y, 12);
  rotate(2, x, y);
  EXPECT_EQ(x, 1);
  EXPECT_EQ(y, 12);
  rotate(3, x, y);
  EXPECT_NE(x, 1);
  EXPECT_NE(y, 12);
  rotate(1, x, y);
  EXPECT_EQ(x, 1);
  EXPECT_EQ(y, 12);
}

TEST(CdtReferenceCuboid, OffsetRange) {
  // Index 32 of HR and 35 of SANS: both at (4, 6), rotation 2: (0, 15) → (15, 0);
  // x 79, y 96 → 1 + 79 + 112·96 = 10832
  EXPECT_EQ(local_pixel(module(ModuleType::kHr, 32), readout(0, 0, 0)), ok(10'832));
  EXPECT_EQ(local_pixel(module(ModuleType::kHr, 33), readout(0, 0, 0)), no(PixelStatus::kIndex));
  EXPECT_EQ(local_pixel(module(ModuleType::kSans, 35), readout(0, 0, 0)), ok(10'832));
  EXPECT_EQ(local_pixel(module(ModuleType::kSans, 36), readout(0, 0, 0)), no(PixelStatus::kIndex));
}

// --- PADetectorTest: PADetector(256, 512); Data{..., Cathode 16, Anode 16} -----------------
TEST(CdtReferencePa, InvalidAndValidSector) {
  // A 16, C 16: cassette 0, counter 1, wire 0, strip 16; x = 32·s + 1, y 256
  // → 1 + 32·s + 1 + 256·256 = 65538 + 32·s
  for (std::uint8_t s = 0; s < 8; ++s) {
    EXPECT_EQ(local_pixel(module(ModuleType::kPaDetector, s), readout(0, 16, 16)),
              ok(65'538U + 32U * s))
        << int(s);
  }
  EXPECT_EQ(local_pixel(module(ModuleType::kPaDetector, 7), readout(0, 16, 16)), ok(65'762));
  EXPECT_EQ(local_pixel(module(ModuleType::kPaDetector, 8), readout(0, 16, 16)),
            no(PixelStatus::kIndex));
}

TEST(CdtReferencePa, GetXCassettesAndCounters) {
  for (std::int32_t c = 0; c < 16; ++c) EXPECT_EQ(pa_x(0, c, 0), 2 * c);
  // cassette 16: A/32 = 4, C/64 = 3 → A 128, C 192
  EXPECT_EQ(local_pixel(module(ModuleType::kPaDetector), readout(0, 192, 128)),
            no(PixelStatus::kCassette));
  EXPECT_EQ(pa_x(0, 1, 0), 2);
  EXPECT_EQ(pa_x(0, 1, 1), 3);
}

TEST(CdtReferencePa, GetYWiresAndStrips) {
  EXPECT_EQ(pa_y(0, 0), 0);
  EXPECT_EQ(pa_y(15, 0), 15);
  EXPECT_EQ(pa_y(0, 15), 240);
  EXPECT_EQ(pa_y(15, 15), 255);
  EXPECT_EQ(pa_y(0, 31), 496);
  EXPECT_EQ(pa_y(15, 31), 511);
}

TEST(CdtReferencePa, TestingLogicalGeometryCorners) {
  EXPECT_EQ(pa_x(0, 0, 0), 0);     // left
  EXPECT_EQ(pa_x(7, 15, 1), 255);  // right
  EXPECT_EQ(pa_y(0, 0), 0);        // top
  EXPECT_EQ(pa_y(15, 31), 511);    // bottom
}

// --- DreamGeometryTest, MagicGeometryTest, HeimdalGeometryTest: instrument pixels -------------
TEST(CdtReferenceDreamGeometry, PixelOffsets) {
  EXPECT_EQ(geometry(ModuleType::kFwEndCap).offset, 0U);
  EXPECT_EQ(geometry(ModuleType::kBwEndCap).offset, 71'680U);
  EXPECT_EQ(geometry(ModuleType::kDreamMantle).offset, 229'376U);
  EXPECT_EQ(geometry(ModuleType::kSans).offset, 720'896U);
  EXPECT_EQ(geometry(ModuleType::kHr).offset, 1'122'304U);
  // PixelOffsetsError (PA has no DREAM offset): PA is a MAGIC type, refused in a DREAM file
  EXPECT_EQ(info(ModuleType::kPaDetector).instrument, Instrument::kMagic);
}

TEST(CdtReferenceDreamGeometry, GetPixel) {
  // BwEndCap, sector 0, sumo 6, A 32, C 32: cassette 2·2 − 1 = 3, counter 0, wire 0, strip 0;
  // x 6 → local 7 → 71687 (the reference asserts ≥ 71681)
  EXPECT_EQ(module_pixel(kBw0, readout(6, 32, 32)), ok(71'687));
  // DreamMantle MU 0, cassette 0, UnitId 2, A 16, C 16: counter 0, wire 16, strip 16;
  // y = 960 → local 1 + 16 + 256·960 = 245777 → 475153 (≥ 229377)
  EXPECT_EQ(module_pixel(module(ModuleType::kDreamMantle), readout(2, 16, 16)), ok(475'153));
  // HR index 0 at (2, 0), rotation 0, UnitId 0, A 16, C 16: cassette 0, counter 1, wire 0,
  // strip 16; u 1, v 15; x 33, y = 1792 + 15 = 1807 → local 1 + 33 + 112·1807 = 202418
  // → 1324722 (≥ 1122305)
  EXPECT_EQ(module_pixel(module(ModuleType::kHr), readout(0, 16, 16)), ok(1'324'722));
}

std::string config_error(const std::string& text) {
  try {
    CdtConfig::from_text(text, "ref.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

std::string with_type(const char* detector, const char* type) {
  return std::string(R"({"Detector": ")") + detector +
         R"(", "Config": [{"Ring": 0, "FEN": 0, "Type": ")" + type + R"("}]})";
}

TEST(CdtReferenceDreamGeometry, GetPixelErrorIsAConfigError) {
  EXPECT_NE(config_error(with_type("DREAM", "PADetector")).find("/Config/0/Type"),
            std::string::npos);
}

TEST(CdtReferenceMagicGeometry, PixelOffsets) {
  EXPECT_EQ(geometry(ModuleType::kFrDetector).offset, 0U);
  EXPECT_EQ(geometry(ModuleType::kPaDetector).offset, 245'760U);
  EXPECT_NE(config_error(with_type("MAGIC", "HR")).find("/Config/0/Type"), std::string::npos);
}

TEST(CdtReferenceMagicGeometry, GetPixel) {
  EXPECT_NE(config_error(with_type("MAGIC", "BwEndCap")).find("/Config/0/Type"), std::string::npos);
  // All zeros: FR (the reference asserts 1 ≤ pixel < 245761) and PA (≥ 245761)
  EXPECT_EQ(module_pixel(module(ModuleType::kFrDetector), readout(0, 0, 0)), ok(1));
  EXPECT_EQ(module_pixel(module(ModuleType::kPaDetector), readout(0, 0, 0)), ok(245'761));
}

TEST(CdtReferenceHeimdalGeometry, PixelOffsets) {
  EXPECT_EQ(geometry(ModuleType::kHeimdalMantle).offset, 0U);
  for (const char* type : {"HR", "SANS", "FwEndCap", "BwEndCap", "DreamMantle"}) {
    EXPECT_NE(config_error(with_type("HEIMDAL", type)).find("/Config/0/Type"), std::string::npos)
        << type;
  }
}

TEST(CdtReferenceHeimdalGeometry, GetPixel) {
  // A 70, C 70: counter (70/32) mod 2 = 0, wire 6, strip 6; y = 6 + 64·6 = 390;
  // x = 12·MU + 2·cassette → 1 + x + 144·390 = 56161 + x
  const CdtReadout r = readout(0, 70, 70);
  EXPECT_EQ(module_pixel(module(ModuleType::kHeimdalMantle, 0, 0), r), ok(56'161));
  EXPECT_EQ(module_pixel(module(ModuleType::kHeimdalMantle, 1, 0), r), ok(56'161 + 12));
  EXPECT_EQ(module_pixel(module(ModuleType::kHeimdalMantle, 2, 0), r), ok(56'161 + 24));
  EXPECT_EQ(module_pixel(module(ModuleType::kHeimdalMantle, 11, 5), r), ok(56'161 + 142));
}

// --- DreamInstrumentTest: its three one-entry configs ----------------------------------------
constexpr const char* kDreamConfig = R"({"Detector": "DREAM", "MaxPulseTimeDiffNS": 16,
    "Config": [{"Ring": 0, "FEN": 0, "Type": "FwEndCap"}]})";
constexpr const char* kMagicConfig = R"({"Detector": "MAGIC", "MaxPulseTimeDiffNS": 16,
    "Config": [{"Ring": 0, "FEN": 0, "Type": "PADetector"}]})";
constexpr const char* kHeimdalConfig = R"({"Detector": "HEIMDAL", "MaxPulseTimeDiffNS": 16,
    "Config": [{"Ring": 0, "FEN": 0, "Type": "HeimdalMantle"}]})";

TEST(CdtReferenceDreamInstrument, CalcPixel) {
  const CdtConfig dream = CdtConfig::from_text(kDreamConfig, "dream.json");
  const CdtConfig magic = CdtConfig::from_text(kMagicConfig, "magic.json");
  const CdtConfig heimdal = CdtConfig::from_text(kHeimdalConfig, "heimdal.json");
  EXPECT_EQ(pixel(dream.modules, readout(6, 0, 0)), ok(1));
  EXPECT_EQ(pixel(magic.modules, readout(0, 0, 0)), ok(245'760 + 1));
  EXPECT_EQ(pixel(heimdal.modules, readout(0, 0, 0)), ok(1));
}

TEST(CdtReferenceDreamInstrument, Rejections) {
  const CdtConfig dream = CdtConfig::from_text(kDreamConfig, "dream.json");
  // MaxRing: fibre 12 → ring 6, not configured
  EXPECT_EQ(pixel(dream.modules, readout(6, 0, 0, 12, 0)), no(PixelStatus::kUnconfigured));
  // MaxFEN: FEN 12
  EXPECT_EQ(pixel(dream.modules, readout(6, 0, 0, 0, 12)), no(PixelStatus::kFen));
  // ConfigError: fibre 2 (ring 1), FEN 2, not configured
  EXPECT_EQ(pixel(dream.modules, readout(6, 0, 0, 2, 2)), no(PixelStatus::kUnconfigured));
  // GeometryError: UnitId 0 on an endcap
  EXPECT_EQ(pixel(dream.modules, readout(0, 0, 0)), no(PixelStatus::kUnit));
  // GoodEvent and the TOF cases' readout {0, 0, ..., UnitId 6, 0, 0}
  EXPECT_EQ(pixel(dream.modules, readout(6, 0, 0)), ok(1));
}

// Not carried over, because the case cannot arise in efu:
// - SUMO getX with counter 2, getY with wire or strip 16, PADetector the same: efu computes
//   counter, wire and strip modulo their ranges from the readout, as the reference does, and
//   has no entry point taking them out of range.
// - CuboidTest IndexSizes (offset and rotation tables of equal length): one table of places,
//   each with its rotation.
// - CuboidTest InvalidModuleType (an endcap handed to the cuboid code): dispatch is a switch
//   over the type; a cuboid function never sees another type.

}  // namespace
}  // namespace efu::cdt
