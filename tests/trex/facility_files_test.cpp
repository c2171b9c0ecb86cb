// The facility's own TREX files, unchanged: read from the reference's snapshot (skipped when it
// is not on this machine), and the copies efu ships are the same bytes.
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "config.h"
#include "geometry.h"
#include "trex_test_support.h"

namespace efu::trex {
namespace {

std::string shipped(const std::string& name) {
  std::ifstream in(std::string(EFU_TREX_CONFIGS_DIR) + "/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The reference's file `name`, or skip.
#define REFERENCE_OR_SKIP(var, name)                    \
  const std::string var = test::reference_config(name); \
  if ((var).empty()) GTEST_SKIP() << "no reference snapshot with " << (name);

TEST(TrexFacilityFiles, TheShippedCopiesAreTheFacilitys) {
  REFERENCE_OR_SKIP(trex, "trex.json");
  REFERENCE_OR_SKIP(let, "let.json");
  EXPECT_EQ(shipped("trex.json"), trex);
  EXPECT_EQ(shipped("let.json"), let);
}

TEST(TrexFacilityFiles, TrexJsonLoads) {
  REFERENCE_OR_SKIP(text, "trex.json");
  const TrexConfig c = load_config_json(text, "trex.json");
  EXPECT_EQ(c.geometry, InstrumentGeometry::kTrex);
  EXPECT_EQ(c.vessels.size(), 35U);
  EXPECT_EQ(c.hybrids.size(), 198U);               // the reference's NumHybrids
  EXPECT_EQ(c.reference_pixel_count(), 838'272U);  // the reference's NumPixels
  EXPECT_EQ(c.units.size(), 70U);                  // two FENs per vessel
  EXPECT_EQ(c.size_x, 384);
  EXPECT_EQ(c.size_y, 51);  // the file's, not the reference's default 140
  EXPECT_EQ(c.size_z, 16);
  EXPECT_EQ(c.max_grids_span, 5);
  EXPECT_EQ(c.max_pulse_time_ns, 71'428'570U);
  // With SizeY 51 the full vessels' grids 51..139 and the short unrotated ones lie outside.
  EXPECT_NE(ChannelMap::outside_volume_warning(c).find("vessels "), std::string::npos);
}

TEST(TrexFacilityFiles, TrexJsonPixels) {
  REFERENCE_OR_SKIP(text, "trex.json");
  const TrexConfig c = load_config_json(text, "trex.json");
  const ChannelMap map(c);
  const auto coordinate = [&](unsigned ring, unsigned fen, unsigned vmm, unsigned channel) {
    vmm3a::ChannelMapping m{};
    EXPECT_EQ(map.map(static_cast<std::uint8_t>(2 * ring), static_cast<std::uint8_t>(fen),
                      static_cast<std::uint8_t>(vmm), static_cast<std::uint8_t>(channel), m),
              vmm3a::MapStatus::kOk);
    return m.coordinate;
  };
  // Vessel 0 (ring 0, FEN 0): wire vmm 0 ch 32 and grid vmm 2 ch 58: x 0, y 0, z 0.
  EXPECT_EQ(event_pixel(map.volume(), coordinate(0, 0, 0, 32), coordinate(0, 0, 2, 58)), 1U);
  // Grid vmm 3 ch 45: y 64 + 45 - 58 = 51, outside SizeY 51.
  EXPECT_EQ(event_pixel(map.volume(), coordinate(0, 0, 0, 32), coordinate(0, 0, 3, 45)), 0U);
  // Vessel 25 (ring 6, FEN 2; short, rotated, XOffset 300, YOffset 51): wire vmm 0 ch 32: w 0,
  // rotated 176, xz 4976 -> x 311, z 0; grid vmm 2 ch 1: y 51 - 1 = 50.  1 + 311 + 384*50.
  EXPECT_EQ(event_pixel(map.volume(), coordinate(6, 2, 0, 32), coordinate(6, 2, 2, 1)), 19'512U);
  // Vessel 34 (ring 7, FEN 7, XOffset 372): wire vmm 1 ch 63: xz 191 + 5952 = 6143 -> x 383,
  // z 15; grid vmm 2 ch 63: y 5.  1 + 383 + 384*5 + 384*51*15.
  EXPECT_EQ(event_pixel(map.volume(), coordinate(7, 7, 1, 63), coordinate(7, 7, 2, 63)),
            1U + 383 + 384 * 5 + 384 * 51 * 15);
}

TEST(TrexFacilityFiles, LetJsonLoads) {
  REFERENCE_OR_SKIP(text, "let.json");
  // The reference itself refuses this file (its four HybridIds are the same placeholder);
  // efu reads it as it is.
  const TrexConfig c = load_config_json(text, "let.json");
  EXPECT_EQ(c.geometry, InstrumentGeometry::kLet);
  ASSERT_EQ(c.vessels.size(), 1U);
  EXPECT_TRUE(c.vessels[0].rotated);
  EXPECT_TRUE(c.vessels[0].short_vessel);
  EXPECT_EQ(c.vessels[0].y_offset, 0);
  EXPECT_EQ(c.vessels[0].min_adc, 20);
  EXPECT_EQ(c.hybrids.size(), 4U);
  EXPECT_EQ(c.units.size(), 2U);
  EXPECT_EQ(c.max_grids_span, 5);  // MaxGridsPerEvent
  EXPECT_EQ(c.size_x, 12);
  EXPECT_EQ(c.size_y, 51);
  EXPECT_EQ(c.max_pulse_time_ns, 71'438'570U);
  // Rotated with YOffset 0: grids 1..50 wrap below zero (a warning names the vessel).
  EXPECT_NE(ChannelMap::outside_volume_warning(c).find("vessels 0 "), std::string::npos);
}

TEST(TrexFacilityFiles, TheShippedFilesLoadFromDisk) {
  EXPECT_EQ(load_config_file(std::string(EFU_TREX_CONFIGS_DIR) + "/trex.json").hybrids.size(),
            198U);
  EXPECT_EQ(load_config_file(std::string(EFU_TREX_CONFIGS_DIR) + "/let.json").hybrids.size(), 4U);
}

}  // namespace
}  // namespace efu::trex
