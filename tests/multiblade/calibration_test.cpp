// The facility's VMM3a calibration files: every field, the corrections, one bad file per field.
#include "calibration.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

TEST_F(CalibrationTest, AHybridWithoutAnEntryRunsUncalibratedAndIsNamedInOneWarning) {
  // Only cassette 0 is in the file (vmm1 channel 0: adc (raw - 10) * 2); cassette 1 is not.
  const Calibration c = Calibration::from_json(
      file(hybrid(hybrid_id(0), vmm("0.0", "1.0", "0.0", "1.0"), vmm("10", "2", "4", "0.5"))),
      "cal.json", geometry);
  ASSERT_TRUE(c.enabled());
  EXPECT_EQ(c.uncalibrated(), std::vector<std::uint32_t>{1});
  EXPECT_EQ(c.adc(1, 0, 100), 180);  // cassette 0's own calibration is applied
  EXPECT_EQ(c.tdc_ns(1, 0, 0), 15);
  // Cassette 1 (VMMs 2, 3) has the reference's initial parameters, offset 0 and slope 1: every
  // ADC passes unchanged and the TDC term is the nominal 34.08 - 60 * tdc / 255, truncated.
  for (std::uint32_t v = 2; v < 4; ++v) {
    for (std::uint32_t ch = 0; ch < kChannelsPerVmm; ch += 9) {
      for (std::uint16_t raw : {0, 1, 517, 1023}) EXPECT_EQ(c.adc(v, ch, raw), raw);
      EXPECT_EQ(c.tdc_ns(v, ch, 0), 34);
      EXPECT_EQ(c.tdc_ns(v, ch, 51), 22);
      EXPECT_EQ(c.tdc_ns(v, ch, 255), -25);
    }
  }
  EXPECT_EQ(c.uncalibrated_warning(geometry),
            "multiblade: 1 of 2 hybrids has no calibration in 'cal.json' and runs uncalibrated "
            "(ADC unchanged; TDC term with offset 0 and slope 1, as the reference does; "
            "--calibration-strict on refuses the file): cassette 1 (HybridId "
            "TEST0000000000000000000000000001)");
}

TEST_F(CalibrationTest, AFileThatCalibratesEveryHybridHasNoWarning) {
  const Calibration c = Calibration::from_json(file(plain(0) + "," + plain(1)), "cal.json",
                                               geometry, MissingHybrids::kRefuse);
  EXPECT_TRUE(c.uncalibrated().empty());
  EXPECT_EQ(c.uncalibrated_warning(geometry), "");
}

TEST_F(CalibrationTest, StrictRefusesAHybridWithoutAnEntryNamingTheFileAndPath) {
  try {
    Calibration::from_json(file(plain(0)), "cal.json", geometry, MissingHybrids::kRefuse);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "multiblade calibration 'cal.json': /Calibrations: has no entry for HybridId "
                 "\"TEST0000000000000000000000000001\" (cassette 1); expected every hybrid of the "
                 "instrument config, or --calibration off");
  }
  // An empty list leaves every hybrid out: all run uncalibrated, or strict names the first.
  const Calibration none = Calibration::from_json(file(""), "cal.json", geometry);
  EXPECT_EQ(none.uncalibrated(), (std::vector<std::uint32_t>{0, 1}));
  EXPECT_THROW(Calibration::from_json(file(""), "cal.json", geometry, MissingHybrids::kRefuse),
               ConfigError);
}

// The facility's own pairs of instrument config and calibration, read unchanged from the
// reference snapshot. What the loader should find is worked out here from the JSON itself.
class FacilityCalibration : public ::testing::Test {
 protected:
  using Hybrid = std::pair<std::uint32_t, std::string>;  // cassette number, HybridId

  /// Loads the pair, or skips the test when the snapshot is absent.
  bool load(const std::string& config_name, const std::string& calibration_name) {
    config_text = test::reference_file(config_name);
    calibration_text = test::reference_file(calibration_name);
    if (config_text.empty() || calibration_text.empty()) return false;
    calibration_file = calibration_name;
    geometry = Geometry::from_json(config_text, config_name);
    calibration = Calibration::from_json(calibration_text, calibration_name, geometry);
    return true;
  }

  /// The Config[] entries whose HybridId no Calibrations[] entry names, in Config[] order.
  std::vector<Hybrid> missing_in_files() const {
    const auto config = nlohmann::json::parse(config_text);
    const auto cal = nlohmann::json::parse(calibration_text);
    std::vector<Hybrid> out;
    for (const auto& e : config.at("Config")) {
      const std::string id = e.at("HybridId");
      if (entry_of(cal, id) == nullptr) {
        out.emplace_back(e.at("CassetteNumber").get<std::uint32_t>(), id);
      }
    }
    return out;
  }

  std::vector<Hybrid> uncalibrated_hybrids() const {
    std::vector<Hybrid> out;
    for (const std::uint32_t i : calibration.uncalibrated()) {
      out.emplace_back(geometry.cassette(i).cassette_number, geometry.cassette(i).hybrid_id);
    }
    return out;
  }

  /// The VMMHybridCalibration of `id` in the parsed file, or null.
  static const nlohmann::json* entry_of(const nlohmann::json& cal, const std::string& id) {
    for (const auto& c : cal.at("Calibrations")) {
      if (c.at("VMMHybridCalibration").at("HybridId") == id) return &c.at("VMMHybridCalibration");
    }
    return nullptr;
  }

  /// Every channel of every hybrid, raw ADC 300 and TDC 100: the file's parameters where it has
  /// an entry, offset 0 and slope 1 where it has none, through the facility's formulas.
  void expect_every_channel_as_in_the_file(const std::string& text) const {
    const auto cal = nlohmann::json::parse(text);
    for (std::uint32_t v = 0; v < 2 * geometry.cassettes(); ++v) {
      const nlohmann::json* entry = entry_of(cal, geometry.cassette(v / 2).hybrid_id);
      for (std::uint32_t ch = 0; ch < kChannelsPerVmm; ++ch) {
        auto value = [&](const char* key, double identity) {
          if (entry == nullptr) return identity;
          return entry->at(v % 2 == 0 ? "vmm0" : "vmm1").at(key).at(ch).get<double>();
        };
        const double adc = (300 - value("adc_offset", 0)) * value("adc_slope", 1);
        const double tdc =
            (1.5 * 22.72 - 60.0 * 100 / 255 - value("tdc_offset", 0)) * value("tdc_slope", 1);
        ASSERT_EQ(calibration.adc(v, ch, 300),
                  static_cast<std::uint16_t>(std::fmin(std::fmax(adc, 0.0), 1023.0)))
            << "cassette " << geometry.cassette(v / 2).cassette_number << " vmm " << v % 2
            << " channel " << ch;
        ASSERT_EQ(calibration.tdc_ns(v, ch, 100), static_cast<std::int64_t>(tdc));
      }
    }
  }

  std::string config_text, calibration_text, calibration_file;
  Geometry geometry = Geometry::from_json(test::instrument_config("Freia", test::entry(0, 0, 0, 0)),
                                          "placeholder.json");
  Calibration calibration;
};

TEST_F(FacilityCalibration, FreiasPairLoadsAndNamesExactlyTheHybridsTheFileLeavesOut) {
  if (!load("freia.json", "calib.json")) GTEST_SKIP() << "no reference snapshot on this machine";
  const std::vector<Hybrid> missing = missing_in_files();
  EXPECT_EQ(uncalibrated_hybrids(), missing);
  expect_every_channel_as_in_the_file(calibration_text);
  // Strict refuses the pair exactly when the file leaves a hybrid out.
  if (missing.empty()) {
    EXPECT_NO_THROW(Calibration::from_json(calibration_text, "calib.json", geometry,
                                           MissingHybrids::kRefuse));
    EXPECT_EQ(calibration.uncalibrated_warning(geometry), "");
  } else {
    EXPECT_THROW(Calibration::from_json(calibration_text, "calib.json", geometry,
                                        MissingHybrids::kRefuse),
                 ConfigError);
  }
}

TEST_F(FacilityCalibration, EstiasPairRunsTheHybridsWithoutCalibrationUncalibrated) {
  if (!load("estia_config.json", "estia_calib.json")) {
    GTEST_SKIP() << "no reference snapshot on this machine";
  }
  const std::vector<Hybrid> missing = missing_in_files();
  ASSERT_FALSE(missing.empty()) << "the facility's Estia calibration now covers every hybrid";
  EXPECT_EQ(uncalibrated_hybrids(), missing);
  EXPECT_EQ(calibration.uncalibrated().size(), missing.size());
  expect_every_channel_as_in_the_file(calibration_text);

  // One line names every one of them, by cassette and HybridId.
  const std::string warning = calibration.uncalibrated_warning(geometry);
  EXPECT_EQ(warning.find('\n'), std::string::npos);
  EXPECT_NE(warning.find("multiblade: " + std::to_string(missing.size()) + " of " +
                         std::to_string(geometry.cassettes()) + " hybrids have no calibration in "
                         "'estia_calib.json'"),
            std::string::npos)
      << warning;
  for (const Hybrid& h : missing) {
    EXPECT_NE(warning.find("cassette " + std::to_string(h.first) + " (HybridId " + h.second + ")"),
              std::string::npos)
        << h.first;
  }

  // Strict refuses the pair, naming the first hybrid left out.
  try {
    Calibration::from_json(calibration_text, "estia_calib.json", geometry,
                           MissingHybrids::kRefuse);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    const std::string line =
        "multiblade calibration 'estia_calib.json': /Calibrations: has no entry for HybridId \"" +
        missing.front().second + "\" (cassette " + std::to_string(missing.front().first) + ")";
    EXPECT_NE(std::string(e.what()).find(line), std::string::npos) << e.what();
  }
}

TEST_F(FacilityCalibration, EstiasCalibratedHybridsApplyTheFileWhileTheOthersPassAdcUnchanged) {
  if (!load("estia_config.json", "estia_calib.json")) {
    GTEST_SKIP() << "no reference snapshot on this machine";
  }
  // The facility's sample holds offset 0 and slope 1 everywhere, which looks the same applied or
  // not; so one value of its first entry is changed here (ADC slope of vmm0, channel 5, to 2).
  auto cal = nlohmann::json::parse(calibration_text);
  auto& first = cal.at("Calibrations").at(0).at("VMMHybridCalibration");
  first.at("vmm0").at("adc_slope").at(5) = 2.0;
  const std::string changed = cal.dump();
  calibration = Calibration::from_json(changed, "estia_calib.json", geometry);
  expect_every_channel_as_in_the_file(changed);

  const int calibrated = geometry.find_hybrid(first.at("HybridId").get<std::string>());
  ASSERT_GE(calibrated, 0);
  const auto v = static_cast<std::uint32_t>(calibrated) * 2;
  EXPECT_EQ(calibration.adc(v, 5, 300), 600);
  EXPECT_EQ(calibration.adc(v, 5, 600), 1023);
  const std::uint32_t uncalibrated = calibration.uncalibrated().front();
  for (std::uint16_t raw : {0, 300, 600, 1023}) {
    EXPECT_EQ(calibration.adc(uncalibrated * 2, 5, raw), raw);
    EXPECT_EQ(calibration.adc(uncalibrated * 2 + 1, 5, raw), raw);
  }
}

}  // namespace
}  // namespace efu::multiblade
