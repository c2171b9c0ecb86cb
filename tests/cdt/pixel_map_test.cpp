// The hot path's PixelMap (per-(ring, FEN, unit) plans and anode/cathode term tables, built from
// the formulas) against the formulas themselves (geometry.h pixel()): the same status and pixel
// for every readout. A sample of the space that the one-off exhaustive check covered whole
// (6.6 × 10⁹ readouts when the map was written): each shipped instrument file's configured
// (ring, FEN) pairs and two unconfigured ones, UnitIds 0..8 and 255, every anode, every 7th
// cathode (7 is prime to the 16, 32 and 64 of the formulas' strides, so every residue appears).
#include "pixel_map.h"

#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "config.h"
#include "geometry.h"

namespace efu::cdt {
namespace {

std::string config_path(const std::string& name) {
  return std::string(EFU_CDT_CONFIGS_DIR) + "/" + name;
}

// Compares every sampled readout of (fibre, FEN); returns the pixels found (so a test knows the
// sample was not all rejections).
std::uint64_t compare(const ModuleTable& modules, const PixelMap& map, std::uint8_t fiber,
                      std::uint8_t fen) {
  static constexpr std::uint8_t kUnits[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 255};
  std::uint64_t pixels = 0;
  for (const std::uint8_t unit : kUnits) {
    for (unsigned anode = 0; anode < 256; ++anode) {
      for (unsigned cathode = 0; cathode < 256; cathode += 7) {
        CdtReadout r{};
        r.fiber = fiber;
        r.fen = fen;
        r.unit = unit;
        r.anode = static_cast<std::uint8_t>(anode);
        r.cathode = static_cast<std::uint8_t>(cathode);
        const PixelResult want = pixel(modules, r);
        const PixelResult got = map.pixel(r.fiber, r.fen, r.unit, r.anode, r.cathode);
        if (got != want) {
          ADD_FAILURE() << "fibre " << int{fiber} << " FEN " << int{fen} << " unit " << int{unit}
                        << " anode " << anode << " cathode " << cathode << ": map gives status "
                        << int(got.status) << " pixel " << got.pixel << ", the formula status "
                        << int(want.status) << " pixel " << want.pixel;
          return pixels;
        }
        if (want.status == PixelStatus::kOk) ++pixels;
      }
    }
  }
  return pixels;
}

class PixelMapAgainstFormulas : public testing::TestWithParam<const char*> {};

TEST_P(PixelMapAgainstFormulas, SameStatusAndPixelForEverySampledReadout) {
  const CdtConfig c = CdtConfig::from_file(config_path(GetParam()));
  const PixelMap map(c.modules);
  std::uint64_t pixels = 0;
  unsigned configured = 0;
  for (std::uint32_t ring = 0; ring < kRings; ++ring) {
    for (std::uint32_t fen = 0; fen < kFens; ++fen) {
      if (!c.modules[ring * kFens + fen].configured) continue;
      ++configured;
      // Both fibres of the ring.
      pixels += compare(c.modules, map, static_cast<std::uint8_t>(2 * ring),
                        static_cast<std::uint8_t>(fen));
      pixels += compare(c.modules, map, static_cast<std::uint8_t>(2 * ring + 1),
                        static_cast<std::uint8_t>(fen));
    }
  }
  // Out of range and unconfigured: rejected alike.
  pixels += compare(c.modules, map, 24, 0);
  pixels += compare(c.modules, map, 0, 12);
  EXPECT_GT(configured, 0u);
  EXPECT_GT(pixels, 0u) << "the sample hit no pixel: it compared rejections only";
}

INSTANTIATE_TEST_SUITE_P(ShippedFiles, PixelMapAgainstFormulas,
                         testing::Values("DreamInst.json", "MagicInst.json", "HeimdalInst.json"));

}  // namespace
}  // namespace efu::cdt
