// The facility's own NMX files from the reference snapshot, unchanged (docs/nmx.md "Instrument
// config", "Calibration"): every config loads, the shipped copies are the same bytes, and the
// reference's example calibration is refused with one line. Skipped without the snapshot.
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "config.h"
#include "config_error_of.h"
#include "efu/vmm3a/hybrid_calibration.h"
#include "reference_snapshot.h"

namespace efu::nmx {
namespace {

const char* const kConfigs[] = {"nmx.json", "mininmx.json", "nmx_p0.json", "nmx_split.json"};

std::string reference(const std::string& name) {
  return efu::test::reference_file("src/modules/nmx/configs/" + name);
}

std::string shipped_text(const std::string& name) {
  std::ifstream in(std::string(EFU_NMX_CONFIGS_DIR) + "/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(NmxFacilityFiles, ReferenceConfigsLoadUnchanged) {
  if (reference("nmx.json").empty()) GTEST_SKIP() << "no reference snapshot";
  for (const char* name : kConfigs) {
    SCOPED_TRACE(name);
    const std::string text = reference(name);
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(shipped_text(name), text) << "the shipped copy must be the facility's file";
    const Config c = Config::from_json(text, name);
    EXPECT_GE(c.hybrids(), 10U);
    EXPECT_EQ(c.panels(), 4U);
  }
  EXPECT_EQ(Config::from_json(reference("nmx.json"), "nmx.json").hybrids(), 40U);
  EXPECT_EQ(Config::from_json(reference("mininmx.json"), "mininmx.json").hybrids(), 10U);
}

TEST(NmxFacilityFiles, ReferenceExampleCalibrationLoadsAgainstNmxJson) {
  const std::string calibration = reference("example_calib.json");
  if (calibration.empty()) GTEST_SKIP() << "no reference snapshot";
  // Its entries carry HybridIndex, which efu ignores (entries are matched by HybridId); both of
  // its hybrids are nmx.json's Config[0] and Config[1], the other 38 run uncalibrated.
  const Config c = Config::from_json(reference("nmx.json"), "nmx.json");
  const auto cal = vmm3a::HybridCalibration::from_json(calibration, "example_calib.json",
                                                       c.calibration_hybrids());
  EXPECT_TRUE(cal.enabled());
  EXPECT_EQ(cal.uncalibrated().size(), 38U);
  // Hybrid 0, vmm0, channel 0: adc_offset -1.171, adc_slope 1.152: (100 + 1.171) * 1.152.
  EXPECT_EQ(cal.adc(vmm3a::vmm_index(0, 0), 0, 100), 116U);
}

}  // namespace
}  // namespace efu::nmx
