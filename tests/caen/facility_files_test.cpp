// The facility's own instrument and calibration files load unchanged and give the pixel ids the
// reference system's tests document. They are read at test time from the reference's bare git
// directory (EFU_REFERENCE_GIT_DIR, default the project's mirror); without it the tests skip.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "reference_snapshot.h"

#include "calibration.h"
#include "config.h"
#include "pixel_map.h"

namespace efu::caen {
namespace {

using efu::test::reference_file;

struct Loaded {
  CaenConfig config;
  Calibration calibration;
};

#define LOAD_OR_SKIP(out, config_path, calibration_path)                                    \
  const std::string config_text = reference_file(config_path);                              \
  const std::string calibration_text = reference_file(calibration_path);                    \
  if (config_text.empty() || calibration_text.empty()) GTEST_SKIP() << "no reference copy"; \
  const CaenConfig out##_config = CaenConfig::from_text(config_text, config_path);          \
  const Calibration out##_calibration = Calibration::from_text(                             \
      calibration_text, calibration_path, instrument_name(out##_config.instrument));        \
  const PixelMap out(out##_config, out##_calibration, 0)

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

TEST(FacilityFiles, LokiFull) {
  LOAD_OR_SKIP(map, "src/modules/loki/configs/LokiFull.json",
               "src/modules/loki/configs/lokinullcalib.json");
  EXPECT_EQ(map_config.total_groups, 896U);  // (56+16+12+16+12+28+32+20+32) · 4
  EXPECT_EQ(map.pixel_count(), 512U * 896 * 7);
  // The reference's LokiFullGeometryTest: first pixel of the first straw of banks 0, 1, 2.
  // A=B=D=0, C=100: position 0, straw 0. Bank 1 is ring 2 (fibre 4), YOffset 1568:
  // pixel = 1 + 0 + 512·1568 = 802817; bank 2 is ring 3 (fibre 6), YOffset 2016: 1032193.
  EXPECT_EQ(map.map(readout(0, 0, 0, 0, 0, 100, 0)).pixel, 1U);
  EXPECT_EQ(map.map(readout(4, 0, 0, 0, 0, 100, 0)).pixel, 802817U);
  EXPECT_EQ(map.map(readout(6, 0, 0, 0, 0, 100, 0)).pixel, 1032193U);
}

TEST(FacilityFiles, Bifrost) {
  LOAD_OR_SKIP(map, "src/modules/bifrost/configs/bifrost.json",
               "src/modules/bifrost/configs/bifrostllbcalib.json");
  EXPECT_EQ(detector_type(map_config.instrument), 0x34);
  EXPECT_EQ(map_config.max_group, 15U);
  // Ring 0, group 0, A=B=500: ratio 0.5 in tube 1's [0.353, 0.637]; along 0.147/0.284 = 0.5176
  // → trunc(51.24) = 51; x = 51, y = 1; pixel = 1 + 51 + 900 = 952.
  EXPECT_EQ(map.map(readout(0, 0, 0, 500, 500)).pixel, 952U);
  // Ratio 0 is below tube 0's interval [0.020, 0.303].
  EXPECT_EQ(map.map(readout(0, 0, 0, 0, 500)).status, MapStatus::kOutsideInterval);
}

TEST(FacilityFiles, Cspec) {
  LOAD_OR_SKIP(map, "src/modules/cspec/configs/cspec.json",
               "src/modules/cspec/configs/cspecnullcalib.json");
  // Resolution 300: ring 1 (fibre 2), group 5, A=100, B=200: x = 300 + 5·12 = 360,
  // y = 299·100/300 = 99 (integer division); pixel = 1 + 360 + 900·99 = 89461.
  EXPECT_EQ(map.map(readout(2, 0, 5, 100, 200)).pixel, 89461U);
}

TEST(FacilityFiles, Miracles) {
  LOAD_OR_SKIP(map, "src/modules/miracles/configs/miracles.json",
               "src/modules/miracles/configs/miraclesnullcalib.json");
  EXPECT_EQ(map_config.max_tof_ns, 1000000000U);
  // The reference's MiraclesGeometryTest: A=0, B=1 is tube B at the top (x 1, y 0: pixel 2);
  // A=B=1 is tube A at the bottom (y 63: pixel 1 + 0 + 48·63 = 3025).
  EXPECT_EQ(map.map(readout(0, 0, 0, 0, 1)).pixel, 2U);
  EXPECT_EQ(map.map(readout(0, 0, 0, 1, 1)).pixel, 3025U);
}

}  // namespace
}  // namespace efu::caen
