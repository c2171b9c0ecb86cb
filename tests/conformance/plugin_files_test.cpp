// --geometry and --calibration mean the same in every family (efu/plugin_files.h,
// docs/plugins.md "Geometry and calibration files"), and the command lines that worked before
// still do: caen's empty --calibration is the instrument's shipped file, multiblade's off is none.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "caen_pipeline.h"
#include "config_error_of.h"
#include "efu/plugin_files.h"
#include "multiblade_pipeline.h"

namespace efu {
namespace {

OptionValues with(const std::string& geometry, const std::string& calibration) {
  OptionValues v;
  v.set("geometry", geometry, !geometry.empty());
  v.set("calibration", calibration, true);
  return v;
}

TEST(CalibrationFile, EmptyIsTheDefaultOffIsNoneAnythingElseAFile) {
  EXPECT_EQ(calibration_file(with("", "")).kind, CalibrationFile::Kind::kDefault);
  EXPECT_EQ(calibration_file(with("", "off")).kind, CalibrationFile::Kind::kNone);
  const CalibrationFile file = calibration_file(with("", "cal.json"));
  EXPECT_EQ(file.kind, CalibrationFile::Kind::kFile);
  EXPECT_EQ(file.path, "cal.json");
  EXPECT_EQ(calibration_file(with("", "")).path, "");
}

TEST(ShippedFiles, TheSourceTreeCopyWhileItExistsElseTheInstalledOne) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "efu-shipped";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "here.json") << "{}";
  const ShippedFiles shipped{dir.c_str(), "/opt/efu/share/efu/x"};
  EXPECT_EQ(shipped.path("here.json"), (dir / "here.json").string());
  EXPECT_EQ(shipped.path("gone.json"), "/opt/efu/share/efu/x/gone.json");
  EXPECT_EQ(geometry_file(with("", "off"), shipped, "here.json"), (dir / "here.json").string());
  EXPECT_EQ(geometry_file(with("mine.json", "off"), shipped, "here.json"), "mine.json");
}

OptionValues caen_defaults() {
  OptionValues v;
  for (std::size_t i = 0; i < caen::kOptionCount; ++i) {
    v.set(caen::kOptions[i].name, caen::kOptions[i].default_value, false);
  }
  return v;
}

TEST(CaenFiles, EmptyIsTheShippedLokiWithItsCalibrationAndOffIsRefused) {
  OptionValues v = caen_defaults();
  const caen::CaenSettings s = caen::settings_from_options(v);
  EXPECT_EQ(s.geometry_path, caen::default_geometry_path());
  EXPECT_TRUE(std::filesystem::exists(s.geometry_path)) << s.geometry_path;
  EXPECT_EQ(s.calibration_path, "");  // the configured instrument's, at load
  EXPECT_EQ(caen::load_shared(s)->instrument.config.instrument, caen::Instrument::kLoki);
  v.set("calibration", "off", true);
  EXPECT_EQ(test::config_error_of([&] { caen::settings_from_options(v); }),
            "--calibration: 'off' leaves caen without a calibration, whose intervals say which "
            "straw or tube a charge ratio belongs to; expected a calibration file, or empty for "
            "the shipped one of the instrument");
  v.set("calibration", "/x/cal.json", true);
  EXPECT_EQ(caen::settings_from_options(v).calibration_path, "/x/cal.json");
}

OptionValues multiblade_defaults() {
  OptionValues v;
  for (std::size_t i = 0; i < multiblade::kOptionCount; ++i) {
    v.set(multiblade::kOptions[i].name, multiblade::kOptions[i].default_value, false);
  }
  return v;
}

TEST(MultibladeFiles, OffAndEmptyAreNoCalibrationAFileIsUsed) {
  OptionValues v = multiblade_defaults();
  EXPECT_EQ(v.get_string("calibration"), "off");  // the default, as before
  EXPECT_EQ(multiblade::config_from_options(v).calibration_path, "");
  EXPECT_EQ(multiblade::config_from_options(v).geometry_path, multiblade::default_geometry_path());
  v.set("calibration", "", true);  // no calibration is shipped: empty is none too
  EXPECT_EQ(multiblade::config_from_options(v).calibration_path, "");
  EXPECT_TRUE(multiblade::load_shared(multiblade::config_from_options(v))
                  ->calibration.uncalibrated()
                  .empty());
  v.set("calibration", "/x/cal.json", true);
  EXPECT_EQ(multiblade::config_from_options(v).calibration_path, "/x/cal.json");
}

}  // namespace
}  // namespace efu
