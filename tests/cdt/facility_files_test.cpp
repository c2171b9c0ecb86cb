// The facility's instrument files load unchanged and give the expected pixels: the three shipped
// with efu (modules/cdt/configs/, copied unchanged), and, from the reference's bare git
// directory when present (EFU_REFERENCE_GIT_DIR, default the project's mirror), the
// per-module files and a byte-for-byte check of the shipped copies; without it those skip.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "reference_snapshot.h"

#include "cdt_test_support.h"
#include "geometry.h"

namespace efu::cdt {
namespace {

using test::readout;

constexpr PixelResult ok(std::uint32_t pixel) { return PixelResult{PixelStatus::kOk, pixel}; }
constexpr PixelResult no(PixelStatus s) { return PixelResult{s, 0}; }

std::string shipped(const std::string& name) {
  return std::string(EFU_CDT_CONFIGS_DIR) + "/" + name;
}

using efu::test::reference_file;

#define REFERENCE_OR_SKIP(config, name)                                                \
  const std::string text_##config = reference_file("src/modules/dream/configs/" name); \
  if (text_##config.empty()) GTEST_SKIP() << "no reference copy of " name;             \
  const CdtConfig config = CdtConfig::from_text(text_##config, name)

TEST(CdtFacilityFiles, DreamInst) {
  const CdtConfig c = CdtConfig::from_file(shipped("DreamInst.json"));
  EXPECT_EQ(c.instrument, Instrument::kDream);
  EXPECT_EQ(c.max_pulse_time_diff_ns, 5'000'000'000U);
  EXPECT_EQ(c.configured, 97U);  // 12 + 10 + 10 + 3·6 + 12 + 8 + 9 + 9 + 9
  // Ring 0 FEN 11 (fibre 1): BwEndCap sector 5; sumo 6, zeros: x 280 → local 281 → 71961.
  // (The reference never maps FEN 11 or ring 11: its validateConfigMapping has `>= 11`.)
  EXPECT_EQ(pixel(c.modules, readout(6, 0, 0, 1, 11)), ok(71'961));
  // Ring 2 FEN 9 (fibre 4): FwEndCap sector 4; sumo 3, A 63, C 47 → 71680, its last pixel
  EXPECT_EQ(pixel(c.modules, readout(3, 47, 63, 4, 9)), ok(71'680));
  // Ring 6 FEN 7 (fibre 12): DreamMantle MU 4, cassette 1; zeros: y = 48 + 2 = 50
  // → local 1 + 256·50 = 12801 → 242177
  EXPECT_EQ(pixel(c.modules, readout(0, 0, 0, 12, 7)), ok(242'177));
  // Ring 8 FEN 8 (fibre 16): HR Index 32, Index2 0. UnitId 0 → cuboid 32: local 10832
  // → 1133136; UnitId 1 → cuboid 0: local 1713 → 1124017
  EXPECT_EQ(pixel(c.modules, readout(0, 0, 0, 16, 8)), ok(1'133'136));
  EXPECT_EQ(pixel(c.modules, readout(1, 0, 0, 16, 8)), ok(1'124'017));
  // Ring 10 FEN 8 (fibre 20): SANS 34 at (3, 6), rotation 3; zeros: (0, 15) → (15, 15);
  // x 63, y 111 → local 1 + 63 + 112·111 = 12496 → 733392
  EXPECT_EQ(pixel(c.modules, readout(0, 0, 0, 20, 8)), ok(733'392));
  EXPECT_EQ(pixel(c.modules, readout(0, 0, 0, 22, 0)), no(PixelStatus::kUnconfigured));
  EXPECT_EQ(pixel(c.modules, readout(6, 0, 0, 2, 10)), no(PixelStatus::kUnconfigured));
}

TEST(CdtFacilityFiles, MagicInst) {
  const CdtConfig c = CdtConfig::from_file(shipped("MagicInst.json"));
  EXPECT_EQ(c.instrument, Instrument::kMagic);
  EXPECT_EQ(c.configured, 18U);
  // Ring 4 FEN 1 (fibre 8): FRDetector MU 0, cassette 0; zeros → 1
  EXPECT_EQ(pixel(c.modules, readout(0, 0, 0, 8, 1)), ok(1));
  // Ring 5 FEN 0 (fibre 10): PADetector sector 0; zeros → 245761
  EXPECT_EQ(pixel(c.modules, readout(0, 0, 0, 10, 0)), ok(245'761));
  // Ring 8 FEN 1 (fibre 17): PA sector 0, A 127, C 223: cassette 15, counter 1, wire 15,
  // strip 31; x 31, y 511 → local 1 + 31 + 256·511 = 130848 → 376608
  EXPECT_EQ(pixel(c.modules, readout(0, 223, 127, 17, 1)), ok(376'608));
  EXPECT_EQ(pixel(c.modules, readout(0, 0, 0, 18, 0)), no(PixelStatus::kUnconfigured));
}

TEST(CdtFacilityFiles, HeimdalInst) {
  const CdtConfig c = CdtConfig::from_file(shipped("HeimdalInst.json"));
  EXPECT_EQ(c.instrument, Instrument::kHeimdal);
  EXPECT_EQ(c.configured, 72U);
  // Ring 10 FEN 11 (fibre 21): MU 11, cassette 5; A 63, C 63 → 294912, the last pixel
  EXPECT_EQ(pixel(c.modules, readout(0, 63, 63, 21, 11)), ok(294'912));
  // Ring 3 FEN 2 (fibre 6): MU 3, cassette 2; A 70, C 70: wire 6, strip 6, counter 0;
  // x 40, y 390 → 1 + 40 + 144·390 = 56201
  EXPECT_EQ(pixel(c.modules, readout(0, 70, 70, 6, 2)), ok(56'201));
  EXPECT_EQ(pixel(c.modules, readout(0, 0, 0, 22, 0)), no(PixelStatus::kUnconfigured));
}

TEST(CdtFacilityFiles, ShippedCopiesAreUnchanged) {
  for (const char* name : {"DreamInst.json", "MagicInst.json", "HeimdalInst.json"}) {
    const std::string reference = reference_file(std::string("src/modules/dream/configs/") + name);
    if (reference.empty()) GTEST_SKIP() << "no reference copy";
    std::ifstream in(shipped(name), std::ios::binary);
    std::ostringstream copy;
    copy << in.rdbuf();
    EXPECT_EQ(copy.str(), reference) << name;
  }
}

TEST(CdtFacilityFiles, DreamEndcap) {
  REFERENCE_OR_SKIP(c, "DreamEndcap.json");
  EXPECT_EQ(c.configured, 1U);
  // No Index: sector 0
  EXPECT_EQ(pixel(c.modules, readout(6, 0, 0)), ok(71'681));
}

TEST(CdtFacilityFiles, Bwec) {
  REFERENCE_OR_SKIP(c, "bwec.json");
  EXPECT_EQ(c.configured, 22U);
  // Ring 1 FEN 9 (fibre 3): sector 10; sumo 3, A 63, C 47 → 229376, the BwEndCap's last pixel
  EXPECT_EQ(pixel(c.modules, readout(3, 47, 63, 3, 9)), ok(229'376));
}

TEST(CdtFacilityFiles, Fwec) {
  REFERENCE_OR_SKIP(c, "fwec.json");
  EXPECT_EQ(c.configured, 10U);
  // Ring 2 FEN 0 (fibre 5): sector 0; sumo 6, zeros → 1
  EXPECT_EQ(pixel(c.modules, readout(6, 0, 0, 5, 0)), ok(1));
}

TEST(CdtFacilityFiles, Hr) {
  REFERENCE_OR_SKIP(c, "hr.json");
  EXPECT_EQ(c.configured, 17U);
  // Ring 7 FEN 0 (fibre 14): Index 0, Index2 1; UnitId 1 → cuboid 1 at (3, 0), rotation 1;
  // zeros: (0, 15) → (0, 0); x 48 → local 49 → 1122353
  EXPECT_EQ(pixel(c.modules, readout(1, 0, 0, 14, 0)), ok(1'122'353));
  // Ring 8 FEN 8 (fibre 16): Index2 255, no second cuboid
  EXPECT_EQ(pixel(c.modules, readout(1, 0, 0, 16, 8)), no(PixelStatus::kIndex));
  EXPECT_EQ(pixel(c.modules, readout(0, 0, 0, 16, 8)), ok(1'133'136));
}

TEST(CdtFacilityFiles, Mantle) {
  REFERENCE_OR_SKIP(c, "mantle.json");
  EXPECT_EQ(c.configured, 30U);
  // Ring 6 FEN 11 (fibre 13): MU 4, cassette 5; A 63, C 255 → 720896, the mantle's last pixel
  EXPECT_EQ(pixel(c.modules, readout(0, 255, 63, 13, 11)), ok(720'896));
}

TEST(CdtFacilityFiles, Sans) {
  REFERENCE_OR_SKIP(c, "sans.json");
  EXPECT_EQ(c.configured, 18U);
  // Ring 10 FEN 8 (fibre 21): Index 34, Index2 35; UnitId 1 → cuboid 35 → local 10832
  // → 720896 + 10832 = 731728
  EXPECT_EQ(pixel(c.modules, readout(1, 0, 0, 21, 8)), ok(731'728));
}

}  // namespace
}  // namespace efu::cdt
