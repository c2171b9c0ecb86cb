// The facility's VMM3a calibration files: every field, the corrections, one bad file per field.
#include "calibration.h"

#include <string>

#include <gtest/gtest.h>

#include "efu/errors.h"
#include "test_support.h"

namespace efu::multiblade {
namespace {

using test::entry;
using test::hybrid_id;
using test::instrument_config;

// 64 values: `first` for channel 0, then `rest`.
std::string values(const std::string& first, const std::string& rest, int count = 64) {
  std::string s = "[" + first;
  for (int i = 1; i < count; ++i) s += ", " + rest;
  return s + "]";
}

std::string vmm(const std::string& adc_offset, const std::string& adc_slope,
                const std::string& tdc_offset, const std::string& tdc_slope) {
  return R"({"Settings": "gain 3", "adc_offset": )" + values(adc_offset, "0.0") +
         R"(, "adc_slope": )" + values(adc_slope, "1.0") + R"(, "tdc_offset": )" +
         values(tdc_offset, "0.0") + R"(, "tdc_slope": )" + values(tdc_slope, "1.0") + "}";
}

std::string hybrid(const std::string& id, const std::string& vmm0, const std::string& vmm1) {
  return R"({"VMMHybridCalibration": {"HybridId": ")" + id +
         R"(", "CalibrationDate": "20260101-120000", "vmm0": )" + vmm0 + R"(, "vmm1": )" + vmm1 +
         "}}";
}

std::string file(const std::string& entries) {
  return R"({"Detector": "Freia", "Version": 1, "Comment": "c", "Date": "d", "Info": "i",
             "Calibrations": [)" +
         entries + "]}";
}

class CalibrationTest : public ::testing::Test {
 protected:
  std::string error_of(const std::string& json) const {
    try {
      Calibration::from_json(json, "cal.json", geometry);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "(no error)";
  }
  std::string plain(unsigned cassette) const {
    return hybrid(hybrid_id(cassette), vmm("0.0", "1.0", "0.0", "1.0"),
                  vmm("0.0", "1.0", "0.0", "1.0"));
  }

  Geometry geometry = Geometry::from_json(
      instrument_config("Freia", entry(0, 0, 0, 0) + "," + entry(1, 0, 0, 1)), "inst.json");
};

TEST_F(CalibrationTest, AppliesEveryFieldPerVmmAndChannel) {
  // Cassette 1, vmm1 channel 0: adc (raw - 10) * 2; tdc (34.08 - 60 tdc / 255 - 4) * 0.5.
  const Calibration c = Calibration::from_json(
      file(plain(0) + "," +
           hybrid(hybrid_id(1), vmm("0.0", "1.0", "0.0", "1.0"), vmm("10", "2", "4", "0.5"))),
      "cal.json", geometry);
  ASSERT_TRUE(c.enabled());
  const std::uint32_t v = 1 * 2 + 1;
  EXPECT_EQ(c.adc(v, 0, 100), 180);
  EXPECT_EQ(c.adc(v, 0, 5), 0);        // clamped at 0
  EXPECT_EQ(c.adc(v, 0, 1000), 1023);  // and at 1023
  EXPECT_EQ(c.adc(v, 1, 100), 100);    // channel 1 is the identity
  EXPECT_EQ(c.adc(0, 0, 100), 100);
  // tdc 0: (34.08 - 4) * 0.5 = 15.04 -> 15 ns; tdc 255: (34.08 - 60 - 4) * 0.5 = -14.96 -> -14.
  EXPECT_EQ(c.tdc_ns(v, 0, 0), 15);
  EXPECT_EQ(c.tdc_ns(v, 0, 255), -14);
  // The identity file still applies the facility's TDC term: 34.08 - 60 * 51 / 255 = 22.08.
  EXPECT_EQ(c.tdc_ns(0, 5, 51), 22);
}

TEST_F(CalibrationTest, OffMeansRawAdcAndNoTimeCorrection) {
  const Calibration c;
  EXPECT_FALSE(c.enabled());
  EXPECT_EQ(c.adc(3, 7, 517), 517);
  EXPECT_EQ(c.tdc_ns(3, 7, 200), 0);
}

struct BadCase {
  const char* what;
  std::string json;
  const char* message;
};

TEST_F(CalibrationTest, EachBadFieldNamesTheFileThePathAndWhatWasExpected) {
  const std::string ok_vmm = vmm("0.0", "1.0", "0.0", "1.0");
  const BadCase cases[] = {
      {"not an object", "7", "/: "},
      {"Detector", R"({"Detector": "Loki", "Version": 1, "Calibrations": []})",
       "/Detector: \"Loki\" is not the geometry's detector; expected \"Freia\""},
      {"Version", R"({"Detector": "Freia", "Version": 0, "Calibrations": []})",
       "/Version: is not 1; expected version 1"},
      {"Calibrations missing", R"({"Detector": "Freia", "Version": 1})",
       "/: missing \"Calibrations\""},
      {"a hybrid without calibration", file(plain(0)),
       "/Calibrations: has no entry for HybridId \"TEST0000000000000000000000000001\" (cassette "
       "1); expected every hybrid of the instrument config, or --calibration off"},
      {"entry", file(plain(0) + ", 3"), "/Calibrations/1: is not an object"},
      {"entry key", file(R"({"VMMHybridCalibration": {}, "x": 1})"),
       "/Calibrations/0/x: unknown key"},
      {"HybridId length", file(hybrid("E55", ok_vmm, ok_vmm)),
       "/Calibrations/0/VMMHybridCalibration/HybridId: \"E55\" has 3 characters; expected 32"},
      {"HybridId unknown", file(hybrid(hybrid_id(7), ok_vmm, ok_vmm)),
       "/Calibrations/0/VMMHybridCalibration/HybridId: \"TEST0000000000000000000000000007\" is "
       "not in the multiblade instrument config 'inst.json'; expected one of its HybridIds"},
      {"HybridId twice", file(plain(0) + "," + plain(0)),
       "/Calibrations/1/VMMHybridCalibration/HybridId: \"TEST0000000000000000000000000000\" is "
       "calibrated twice; expected each hybrid once"},
      {"CalibrationDate",
       file(R"({"VMMHybridCalibration": {"HybridId": ")" + hybrid_id(0) + R"(", "vmm0": )" +
            ok_vmm + R"(, "vmm1": )" + ok_vmm + "}}"),
       "/Calibrations/0/VMMHybridCalibration: missing \"CalibrationDate\""},
      {"vmm1 missing",
       file(R"({"VMMHybridCalibration": {"HybridId": ")" + hybrid_id(0) +
            R"(", "CalibrationDate": "x", "vmm0": )" + ok_vmm + "}}"),
       "/Calibrations/0/VMMHybridCalibration: missing \"vmm1\""},
      {"adc_offset length",
       file(hybrid(hybrid_id(0),
                   R"({"adc_offset": [0], "adc_slope": [], "tdc_offset": [], "tdc_slope": []})",
                   ok_vmm)),
       "/Calibrations/0/VMMHybridCalibration/vmm0/adc_offset: has 1 elements; expected"},
      {"adc_slope value", file(hybrid(hybrid_id(0), ok_vmm, vmm("0", "\"x\"", "0", "1"))),
       "/Calibrations/0/VMMHybridCalibration/vmm1/adc_slope/0: \"x\" is not a number"},
      {"tdc_offset value", file(hybrid(hybrid_id(0), vmm("0", "1", "1e9", "1"), ok_vmm)),
       "/Calibrations/0/VMMHybridCalibration/vmm0/tdc_offset/0: "},
      {"tdc_slope missing",
       file(hybrid(hybrid_id(0),
                   R"({"adc_offset": )" + values("0", "0") + R"(, "adc_slope": )" +
                       values("1", "1") + R"(, "tdc_offset": )" + values("0", "0") + "}",
                   ok_vmm)),
       "/Calibrations/0/VMMHybridCalibration/vmm0: missing \"tdc_slope\""},
      {"vmm key", file(hybrid(hybrid_id(0), R"({"adc_offsets": []})", ok_vmm)),
       "/Calibrations/0/VMMHybridCalibration/vmm0/adc_offsets: unknown key"},
  };
  for (const BadCase& c : cases) {
    const std::string error = error_of(c.json);
    EXPECT_EQ(error.rfind("multiblade calibration 'cal.json': ", 0), 0U) << c.what << ": " << error;
    EXPECT_NE(error.find(c.message), std::string::npos) << c.what << ": " << error;
    EXPECT_NE(error.find("expected"), std::string::npos) << c.what << ": " << error;
  }
}

TEST_F(CalibrationTest, UnreadableFileIsAConfigError) {
  EXPECT_THROW(Calibration::from_file("/nonexistent/cal.json", geometry), ConfigError);
}

TEST_F(CalibrationTest, ReadsTheFacilitysOwnFileWhenPresent) {
  const std::string command =
      "git --git-dir=/work/.mirror/ess-dmsc+event-formation-unit/repo show "
      "HEAD:src/modules/freia/configs/calib.json 2>/dev/null";
  const std::string config_command =
      "git --git-dir=/work/.mirror/ess-dmsc+event-formation-unit/repo show "
      "HEAD:src/modules/freia/configs/freia.json 2>/dev/null";
  auto read = [](const std::string& c) {
    std::string text;
    FILE* pipe = popen(c.c_str(), "r");
    char buffer[4096];
    for (std::size_t n; pipe != nullptr && (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;)
      text.append(buffer, n);
    if (pipe != nullptr) pclose(pipe);
    return text;
  };
  const std::string cal = read(command);
  const std::string config = read(config_command);
  if (cal.empty() || config.empty()) GTEST_SKIP() << "no reference snapshot on this machine";
  const Geometry freia = Geometry::from_json(config, "freia.json");
  // The facility's sample calibrates only some hybrids of its sample config: that is exactly
  // the start-up error a user must see.
  try {
    Calibration::from_json(cal, "calib.json", freia);
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/Calibrations: has no entry for HybridId"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace efu::multiblade
