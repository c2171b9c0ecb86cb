// Pixel ids of every CDT module type: the grid corners and inner pixels, each worked out by
// hand from the formula in geometry.h (the arithmetic is in the comment), and one case per
// rejection reason. readout(unit, cathode, anode); module(type, Index, Index2).
#include "geometry.h"

#include <set>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "cdt_test_support.h"

namespace efu::cdt {
namespace {

using test::module;
using test::readout;

constexpr PixelResult ok(std::uint32_t pixel) { return PixelResult{PixelStatus::kOk, pixel}; }
constexpr PixelResult no(PixelStatus s) { return PixelResult{s, 0}; }

TEST(CdtGeometry, PixelSpaces) {
  EXPECT_EQ(pixel_count(Instrument::kDream), 1'523'712U);  // 1122304 + 112·3584
  EXPECT_EQ(pixel_count(Instrument::kMagic), 376'832U);    // 245760 + 256·512
  EXPECT_EQ(pixel_count(Instrument::kHeimdal), 294'912U);  // 144·2048
}

// --- FwEndCap: 280 × 256, offset 0 ------------------------------------------------------
TEST(CdtGeometry, FwEndCapCorners) {
  // sector 0, sumo 6, A 0, C 0: cassette 2·0 − 0 = 0; x 0, y 0 → 1
  EXPECT_EQ(module_pixel(module(ModuleType::kFwEndCap, 0), readout(6, 0, 0)), ok(1));
  // sector 4, sumo 3, A 48, C 32: cassette 2·1 + 1 = 3, counter 3 mod 2 = 1, wire 0, strip 0;
  // x = 224 + 48 + 6 + 1 = 279, y 0 → 280
  EXPECT_EQ(module_pixel(module(ModuleType::kFwEndCap, 4), readout(3, 32, 48)), ok(280));
  // sector 0, sumo 6, A 15, C 15: cassette 0, wire 15, strip 15; x 0, y 255 → 1 + 280·255
  EXPECT_EQ(module_pixel(module(ModuleType::kFwEndCap, 0), readout(6, 15, 15)), ok(71'401));
  // sector 4, sumo 3, A 63, C 47: cassette 2·1 + 1 = 3, counter 1, wire 15, strip 15;
  // x 279, y 255 → 1 + 279 + 71400 = 71680, the last pixel
  EXPECT_EQ(module_pixel(module(ModuleType::kFwEndCap, 4), readout(3, 47, 63)), ok(71'680));
}

TEST(CdtGeometry, FwEndCapInner) {
  // sector 2, sumo 5, A 40, C 37: cassette 2·2 + 1 = 5, counter 2 mod 2 = 0, wire 8, strip 5;
  // x = 112 + 20 + 10 = 142, y = 80 + 8 = 88 → 1 + 142 + 280·88 = 24783
  EXPECT_EQ(module_pixel(module(ModuleType::kFwEndCap, 2), readout(5, 37, 40)), ok(24'783));
  // sector 1, sumo 4, A 20, C 50: cassette 2·3 + 0 − 1 = 5, counter 1, wire 4, strip 2;
  // x = 56 + 36 + 10 + 1 = 103, y = 32 + 4 = 36 → 1 + 103 + 280·36 = 10184
  EXPECT_EQ(module_pixel(module(ModuleType::kFwEndCap, 1), readout(4, 50, 20)), ok(10'184));
}

// --- BwEndCap: 616 × 256, offset 71680 ----------------------------------------------------
TEST(CdtGeometry, BwEndCapCorners) {
  // as FwEndCap's first pixel: local 1 → 71681
  EXPECT_EQ(module_pixel(module(ModuleType::kBwEndCap, 0), readout(6, 0, 0)), ok(71'681));
  // sector 10, sumo 3, A 48, C 32: x = 560 + 55 = 615, y 0 → local 616 → 72296
  EXPECT_EQ(module_pixel(module(ModuleType::kBwEndCap, 10), readout(3, 32, 48)), ok(72'296));
  // sector 0, sumo 6, A 15, C 15: x 0, y 255 → local 1 + 616·255 = 157081 → 228761
  EXPECT_EQ(module_pixel(module(ModuleType::kBwEndCap, 0), readout(6, 15, 15)), ok(228'761));
  // sector 10, sumo 3, A 63, C 47: x 615, y 255 → local 157696 → 229376, DREAM mantle − 0
  EXPECT_EQ(module_pixel(module(ModuleType::kBwEndCap, 10), readout(3, 47, 63)), ok(229'376));
}

TEST(CdtGeometry, BwEndCapInner) {
  // sector 7, sumo 6, A 33, C 70: cassette 2·4 − 1 = 7, counter 2 mod 2 = 0, wire 1, strip 6;
  // x = 392 + 0 + 14 = 406, y = 96 + 1 = 97 → local 1 + 406 + 616·97 = 60159 → 131839
  EXPECT_EQ(module_pixel(module(ModuleType::kBwEndCap, 7), readout(6, 70, 33)), ok(131'839));
}

// --- DreamMantle: 256 × 1920, offset 229376 -----------------------------------------------
TEST(CdtGeometry, DreamMantleCorners) {
  // MU 0, cassette 0, A 0, C 0: x 0, y 0 → local 1 → 229377
  EXPECT_EQ(module_pixel(module(ModuleType::kDreamMantle, 0, 0), readout(0, 0, 0)), ok(229'377));
  // C 255: x 255, y 0 → local 256 → 229632
  EXPECT_EQ(module_pixel(module(ModuleType::kDreamMantle, 0, 0), readout(0, 255, 0)), ok(229'632));
  // MU 4, cassette 5, A 63: counter 1, wire 31; y = 1860 + 48 + 10 + 1 = 1919, x 0
  // → local 1 + 256·1919 = 491265 → 720641
  EXPECT_EQ(module_pixel(module(ModuleType::kDreamMantle, 4, 5), readout(0, 0, 63)), ok(720'641));
  // and C 255: local 491520, the last → 720896 (SANS − 0)
  EXPECT_EQ(module_pixel(module(ModuleType::kDreamMantle, 4, 5), readout(0, 255, 63)), ok(720'896));
}

TEST(CdtGeometry, DreamMantleInner) {
  // MU 2, cassette 3, A 45: counter 1, wire 13; C 100: strip 100;
  // y = 780 + 24 + 6 + 1 = 811 → local 1 + 100 + 256·811 = 207717 → 437093
  EXPECT_EQ(module_pixel(module(ModuleType::kDreamMantle, 2, 3), readout(0, 100, 45)), ok(437'093));
  // UnitId is not used: the same with UnitId 9
  EXPECT_EQ(module_pixel(module(ModuleType::kDreamMantle, 2, 3), readout(9, 100, 45)), ok(437'093));
}

// --- FRDetector: 128 × 1920, offset 0 ------------------------------------------------------
TEST(CdtGeometry, FrDetector) {
  EXPECT_EQ(module_pixel(module(ModuleType::kFrDetector), readout(0, 0, 0)), ok(1));
  // C 127: x 127 → 128
  EXPECT_EQ(module_pixel(module(ModuleType::kFrDetector), readout(0, 127, 0)), ok(128));
  // MU 4, cassette 5, A 63, C 127: x 127, y 1919 → 1 + 127 + 128·1919 = 245760, the last
  EXPECT_EQ(module_pixel(module(ModuleType::kFrDetector, 4, 5), readout(0, 127, 63)), ok(245'760));
  // MU 1, cassette 2, A 5: counter 0, wire 5; C 200: strip 200 mod 128 = 72;
  // y = 300 + 12 + 4 = 316 → 1 + 72 + 128·316 = 40521
  EXPECT_EQ(module_pixel(module(ModuleType::kFrDetector, 1, 2), readout(0, 200, 5)), ok(40'521));
}

// --- HR: 112 × 3584, offset 1122304 ---------------------------------------------------------
TEST(CdtGeometry, HrEachRotation) {
  // Cuboid 0 at (col 2, row 0), rotation 0. A 0, C 0: u 0, v 15; x 32, y 15
  // → local 1 + 32 + 112·15 = 1713 → 1124017
  EXPECT_EQ(module_pixel(module(ModuleType::kHr, 0), readout(0, 0, 0)), ok(1'124'017));
  // A 15: wire 15, v 0; x 32, y 0 → local 33 → 1122337
  EXPECT_EQ(module_pixel(module(ModuleType::kHr, 0), readout(0, 0, 15)), ok(1'122'337));
  // Cuboid 1 at (3, 0), rotation 1: (u, v) = (0, 15) → (15 − 15, 0) = (0, 0); x 48, y 0 → 49
  EXPECT_EQ(module_pixel(module(ModuleType::kHr, 1), readout(0, 0, 0)), ok(1'122'353));
  // A 15: (0, 0) → (15, 0); x 63 → local 64
  EXPECT_EQ(module_pixel(module(ModuleType::kHr, 1), readout(0, 0, 15)), ok(1'122'368));
  // Cuboid 18 at (4, 3), rotation 2: (0, 15) → (15, 0); x 79, y 48 → 1 + 79 + 5376 = 5456
  EXPECT_EQ(module_pixel(module(ModuleType::kHr, 18), readout(0, 0, 0)), ok(1'127'760));
  // Cuboid 21 at (0, 4), rotation 3: (0, 15) → (15, 15); x 15, y 79 → 1 + 15 + 8848 = 8864
  EXPECT_EQ(module_pixel(module(ModuleType::kHr, 21), readout(0, 0, 0)), ok(1'131'168));
}

TEST(CdtGeometry, HrCornersAndInner) {
  // Cuboid 0, A 63, C 127: cassette 1 + 2·3 = 7, counter 1, wire 15, strip 31; u 15, v 0;
  // x 47, y = 112·31 = 3472 → local 1 + 47 + 112·3472 = 388912 → 1511216
  EXPECT_EQ(module_pixel(module(ModuleType::kHr, 0), readout(0, 127, 63)), ok(1'511'216));
  // The highest pixel: cuboid 32 at (4, 6), rotation 2, A 15, C 31: (0, 0) → (15, 15);
  // x 79, y = 3472 + 96 + 15 = 3583 → local 1 + 79 + 112·3583 = 401376 → 1523680
  EXPECT_EQ(module_pixel(module(ModuleType::kHr, 32), readout(0, 31, 15)), ok(1'523'680));
  // Cuboid 11 at (3, 2), rotation 1, A 37: cassette 1 + 2·2 = 5 (C 70), counter 0, wire 5;
  // (u, v) = (10, 10) → (5, 10); strip 6; x 53, y = 672 + 32 + 10 = 714
  // → local 1 + 53 + 112·714 = 80022 → 1202326
  EXPECT_EQ(module_pixel(module(ModuleType::kHr, 11), readout(0, 70, 37)), ok(1'202'326));
}

TEST(CdtGeometry, CuboidUnitPicksIndexOrIndex2) {
  // UnitId 1 reads Index2 = 32: cuboid 32 at (4, 6), rotation 2: (0, 15) → (15, 0);
  // x 79, y 96 → local 1 + 79 + 10752 = 10832 → 1133136
  EXPECT_EQ(module_pixel(module(ModuleType::kHr, 0, 32), readout(1, 0, 0)), ok(1'133'136));
  EXPECT_EQ(module_pixel(module(ModuleType::kHr, 0, 32), readout(0, 0, 0)), ok(1'124'017));
}

// --- SANS: 112 × 3584, offset 720896 ------------------------------------------------------
TEST(CdtGeometry, Sans) {
  // Cuboid 0 as HR's: local 1713 → 722609
  EXPECT_EQ(module_pixel(module(ModuleType::kSans, 0), readout(0, 0, 0)), ok(722'609));
  // Cuboid 24 at (3, 4), rotation 3 (HR has no cuboid there): (0, 15) → (15, 15);
  // x 63, y 79 → local 1 + 63 + 8848 = 8912 → 729808
  EXPECT_EQ(module_pixel(module(ModuleType::kSans, 24), readout(0, 0, 0)), ok(729'808));
  // Cuboid 34 at (3, 6), rotation 3, A 63, C 127: (15, 0) → (0, 0); x 48, y 3472 + 96
  // → local 1 + 48 + 112·3568 = 399665 → 1120561
  EXPECT_EQ(module_pixel(module(ModuleType::kSans, 34), readout(0, 127, 63)), ok(1'120'561));
}

TEST(CdtGeometry, CuboidTablesPlaceEachFaceOnce) {
  for (const auto cuboids :
       {std::span<const CuboidPlace>(kHrCuboids), std::span<const CuboidPlace>(kSansCuboids)}) {
    std::set<std::pair<int, int>> seen;
    for (const CuboidPlace& c : cuboids) {
      EXPECT_LT(c.col, 7);
      EXPECT_LT(c.row, 7);
      EXPECT_LT(c.rotation, 4);
      EXPECT_TRUE(seen.insert({c.col, c.row}).second) << int(c.col) << "," << int(c.row);
    }
  }
}

TEST(CdtGeometry, RotationsTurnTheFace) {
  // (1, 12) by a quarter turn: (15 − 12, 1) = (3, 1); half: (14, 3); three quarters: (12, 14)
  const std::pair<int, int> turned[] = {{1, 12}, {3, 1}, {14, 3}, {12, 14}};
  for (std::uint8_t r = 0; r < 4; ++r) {
    std::int32_t u = 1;
    std::int32_t v = 12;
    rotate(r, u, v);
    EXPECT_EQ(std::make_pair(int(u), int(v)), turned[r]) << int(r);
  }
}

// --- PADetector: 256 × 512, offset 245760 -------------------------------------------------
TEST(CdtGeometry, PaDetectorCorners) {
  // sector 0, A 0, C 0 → local 1 → 245761
  EXPECT_EQ(module_pixel(module(ModuleType::kPaDetector, 0), readout(0, 0, 0)), ok(245'761));
  // sector 7, A 112: cassette 3 + 4·3 = 15 (C 192), counter 7 mod 2 = 1, wire 0, strip 0;
  // x = 224 + 30 + 1 = 255 → local 256 → 246016
  EXPECT_EQ(module_pixel(module(ModuleType::kPaDetector, 7), readout(0, 192, 112)), ok(246'016));
  // sector 7, A 127, C 223: cassette 15, counter 1, wire 15, strip 223 mod 32 = 31;
  // x 255, y = 496 + 15 = 511 → local 131072, the last → 376832
  EXPECT_EQ(module_pixel(module(ModuleType::kPaDetector, 7), readout(0, 223, 127)), ok(376'832));
}

TEST(CdtGeometry, PaDetectorInner) {
  // sector 2, A 50: A/32 = 1, counter 3 mod 2 = 1, wire 2; C 140: C/64 = 2, strip 12;
  // cassette 1 + 8 = 9; x = 64 + 18 + 1 = 83, y = 192 + 2 = 194
  // → local 1 + 83 + 256·194 = 49748 → 295508
  EXPECT_EQ(module_pixel(module(ModuleType::kPaDetector, 2), readout(0, 140, 50)), ok(295'508));
}

// --- HeimdalMantle: 144 × 2048, offset 0 ----------------------------------------------------
TEST(CdtGeometry, HeimdalMantleCorners) {
  EXPECT_EQ(module_pixel(module(ModuleType::kHeimdalMantle, 0, 0), readout(0, 0, 0)), ok(1));
  // MU 11, cassette 5, A 32: counter 1, wire 0; x = 132 + 10 + 1 = 143, y 0 → 144
  EXPECT_EQ(module_pixel(module(ModuleType::kHeimdalMantle, 11, 5), readout(0, 0, 32)), ok(144));
  // MU 0, A 31, C 63: x 0, y = 63 + 64·31 = 2047 → 1 + 144·2047 = 294769
  EXPECT_EQ(module_pixel(module(ModuleType::kHeimdalMantle, 0, 0), readout(0, 63, 31)),
            ok(294'769));
  // MU 11, cassette 5, A 63, C 63: x 143, y 2047 → 294912, the last
  EXPECT_EQ(module_pixel(module(ModuleType::kHeimdalMantle, 11, 5), readout(0, 63, 63)),
            ok(294'912));
}

TEST(CdtGeometry, HeimdalMantleInner) {
  // MU 3, cassette 4, A 40: counter 1, wire 8; C 20: strip 20;
  // x = 36 + 8 + 1 = 45, y = 20 + 512 = 532 → 1 + 45 + 144·532 = 76654
  EXPECT_EQ(module_pixel(module(ModuleType::kHeimdalMantle, 3, 4), readout(0, 20, 40)), ok(76'654));
}

// --- Rejections, one per reason -----------------------------------------------------------
TEST(CdtGeometryRejects, Ring) {
  ModuleTable table{};
  EXPECT_EQ(pixel(table, readout(6, 0, 0, /*fiber=*/24)), no(PixelStatus::kRing));
}

TEST(CdtGeometryRejects, Fen) {
  ModuleTable table{};
  table[0] = module(ModuleType::kFwEndCap);
  EXPECT_EQ(pixel(table, readout(6, 0, 0, 0, /*fen=*/12)), no(PixelStatus::kFen));
}

TEST(CdtGeometryRejects, Unconfigured) {
  ModuleTable table{};
  table[0] = module(ModuleType::kFwEndCap);
  EXPECT_EQ(pixel(table, readout(6, 0, 0)), ok(1));
  EXPECT_EQ(pixel(table, readout(6, 0, 0, 0, 1)), no(PixelStatus::kUnconfigured));
  EXPECT_EQ(pixel(table, readout(6, 0, 0, 2, 0)), no(PixelStatus::kUnconfigured));
}

TEST(CdtGeometryRejects, Unit) {
  EXPECT_EQ(module_pixel(module(ModuleType::kBwEndCap), readout(2, 0, 0)), no(PixelStatus::kUnit));
  EXPECT_EQ(module_pixel(module(ModuleType::kFwEndCap), readout(7, 0, 0)), no(PixelStatus::kUnit));
  EXPECT_EQ(module_pixel(module(ModuleType::kHr), readout(2, 0, 0)), no(PixelStatus::kUnit));
  EXPECT_EQ(module_pixel(module(ModuleType::kSans), readout(255, 0, 0)), no(PixelStatus::kUnit));
}

TEST(CdtGeometryRejects, Cassette) {
  // sumo 6, A 32, C 0: 2·0 − 1 = −1; sumo 4, A 0, C 0: 0 + 0 − 1 = −1
  EXPECT_EQ(module_pixel(module(ModuleType::kFwEndCap), readout(6, 0, 32)),
            no(PixelStatus::kCassette));
  EXPECT_EQ(module_pixel(module(ModuleType::kFwEndCap), readout(4, 0, 0)),
            no(PixelStatus::kCassette));
  // PA, A 128, C 192: 4 + 12 = 16; the reference gives these the pixel 245760 (its offset + 0)
  EXPECT_EQ(module_pixel(module(ModuleType::kPaDetector), readout(0, 192, 128)),
            no(PixelStatus::kCassette));
}

TEST(CdtGeometryRejects, Index) {
  // hr.json's last entry has Index2 255: no second cuboid on that FEN
  EXPECT_EQ(module_pixel(module(ModuleType::kHr, 32, kNoCuboid), readout(1, 0, 0)),
            no(PixelStatus::kIndex));
  // Tables not read by CdtConfig: out-of-range indexes never reach a neighbour's pixels
  EXPECT_EQ(module_pixel(module(ModuleType::kDreamMantle, 5, 0), readout(0, 0, 0)),
            no(PixelStatus::kIndex));
  EXPECT_EQ(module_pixel(module(ModuleType::kHeimdalMantle, 0, 6), readout(0, 0, 0)),
            no(PixelStatus::kIndex));
  EXPECT_EQ(module_pixel(module(ModuleType::kSans, 36), readout(0, 0, 0)), no(PixelStatus::kIndex));
  EXPECT_EQ(module_pixel(Module{true, ModuleType::kCount, 0, 0}, readout(0, 0, 0)),
            no(PixelStatus::kIndex));
}

TEST(CdtGeometryRejects, Pixel) {
  // No readout of a module read by CdtConfig leaves its grid: the Index bounds fill each grid
  // exactly, and a cuboid anode or cathode past one face (A ≥ 64, C ≥ 128) moves at most 28
  // pixels out of a face, never past the grid's edge with the table's places and rotations.
  // kPixel is the safety net; its edges:
  const ess::LogicalGeometry g{4, 3};
  EXPECT_EQ(grid_pixel(g, 3, 2), ok(12));
  EXPECT_EQ(grid_pixel(g, 4, 0), no(PixelStatus::kPixel));
  EXPECT_EQ(grid_pixel(g, 0, 3), no(PixelStatus::kPixel));
  EXPECT_EQ(grid_pixel(g, -1, 0), no(PixelStatus::kPixel));
  EXPECT_EQ(grid_pixel(g, 0, -1), no(PixelStatus::kPixel));
}

TEST(CdtGeometryRejects, ErrorNames) {
  EXPECT_EQ(kPixelErrors, 7U);
  EXPECT_STREQ(kPixelErrorNames[static_cast<std::size_t>(PixelStatus::kRing)], "ring");
  EXPECT_STREQ(kPixelErrorNames[static_cast<std::size_t>(PixelStatus::kUnconfigured)],
               "unconfigured");
  EXPECT_STREQ(kPixelErrorNames[static_cast<std::size_t>(PixelStatus::kPixel)], "pixel");
}

}  // namespace
}  // namespace efu::cdt

namespace efu::cdt {
namespace {

using test::module;
using test::readout;

/// Every readout (UnitId 0..7, all anodes and cathodes) of every module a config may hold:
/// `on(module, readout, result)`.
template <typename On>
void for_every_readout(ModuleType type, On&& on) {
  const ModuleTypeInfo& t = info(type);
  for (int index = 0; index <= t.index_max; ++index) {
    // Index2 is the cassette of the mantles; the endcaps and PA ignore it, the cuboids read it
    // for UnitId 1 only (same formula as Index), so one value covers them.
    const int index2_max = t.index2_max == 255 || t.index2_may_be_absent ? 0 : t.index2_max;
    for (int index2 = 0; index2 <= index2_max; ++index2) {
      const Module m = module(type, static_cast<std::uint8_t>(index),
                              static_cast<std::uint8_t>(t.index2_may_be_absent ? index : index2));
      for (int unit = 0; unit < 8; ++unit) {
        for (int a = 0; a < 256; ++a) {
          for (int c = 0; c < 256; ++c) {
            const CdtReadout r =
                readout(static_cast<std::uint8_t>(unit), static_cast<std::uint8_t>(c),
                        static_cast<std::uint8_t>(a));
            on(m, r, module_pixel(m, r));
          }
        }
      }
    }
  }
}

// Exhaustive: no readout of a configurable module leaves its type's pixel range, and every
// pixel of a non-cuboid grid is reached; a cuboid's in-face readouts (A < 64, C < 128) reach
// each pixel of each face exactly once (the rotation tables are permutations).
TEST(CdtGeometryExhaustive, EveryReadoutStaysInItsTypeAndCoversTheGrid) {
  for (std::size_t i = 0; i < kModuleTypes; ++i) {
    const auto type = static_cast<ModuleType>(i);
    const ModuleGeometry& g = geometry(type);
    const bool cuboid = type == ModuleType::kHr || type == ModuleType::kSans;
    std::vector<std::uint8_t> hits(g.grid.pixel_count(), 0);
    std::uint64_t bad = 0;
    for_every_readout(type, [&](const Module&, const CdtReadout& r, const PixelResult& p) {
      if (p.status == PixelStatus::kPixel) ++bad;
      if (p.status != PixelStatus::kOk) return;
      if (p.pixel <= g.offset || p.pixel > g.offset + g.grid.pixel_count()) {
        ++bad;
        return;
      }
      if (cuboid && (r.anode >= 64 || r.cathode >= 128 || r.unit != 0)) return;
      std::uint8_t& h = hits[p.pixel - g.offset - 1];
      h = static_cast<std::uint8_t>(h < 255 ? h + 1 : h);
    });
    EXPECT_EQ(bad, 0U) << kModuleTypeInfo[i].name;
    std::uint64_t reached = 0;
    std::uint64_t twice = 0;
    for (const std::uint8_t h : hits) {
      reached += h != 0 ? 1 : 0;
      twice += h > 1 ? 1 : 0;
    }
    if (cuboid) {
      const std::size_t faces = type == ModuleType::kHr ? kHrCuboids.size() : kSansCuboids.size();
      EXPECT_EQ(reached, faces * 16 * 16 * 32) << kModuleTypeInfo[i].name;
      EXPECT_EQ(twice, 0U) << kModuleTypeInfo[i].name;
    } else {
      EXPECT_EQ(reached, g.grid.pixel_count()) << kModuleTypeInfo[i].name;
    }
  }
}

}  // namespace
}  // namespace efu::cdt
