// Loading the facility's instrument config and calibration files: what is read, and that every
// bad value is one ConfigError naming the file and the JSON path.
#include "config.h"

#include <string>

#include <gtest/gtest.h>

#include "calibration.h"
#include "efu/errors.h"
#include "test_support.h"

namespace efu::caen {
namespace {

using test::calibration_text;

std::string config_error(const std::string& text) {
  try {
    CaenConfig::from_text(text, "bad.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

std::string calibration_error(const std::string& text, const char* instrument = "loki") {
  try {
    Calibration::from_text(text, "cal.json", instrument);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CaenConfig, ReadsLoki) {
  const CaenConfig c = CaenConfig::from_text(test::kLokiConfig, "loki.json");
  EXPECT_EQ(c.instrument, Instrument::kLoki);
  EXPECT_EQ(detector_type(c.instrument), 0x30);
  EXPECT_EQ(c.resolution, 256U);
  EXPECT_EQ(c.max_pulse_time_ns, 357142855U);
  EXPECT_EQ(c.max_tof_ns, 1000000000U);
  EXPECT_EQ(c.groups_z, 4U);
  EXPECT_EQ(c.total_groups, 48U);  // (8 + 4) · 4
  EXPECT_TRUE(c.banks[1].configured);
  EXPECT_EQ(c.banks[1].y_offset, 224U);
  EXPECT_EQ(c.rings[1].bank, 0U);
  EXPECT_EQ(c.rings[1].fen_offset, 2U);
  EXPECT_FALSE(c.rings[3].configured);
}

TEST(CaenConfig, ReadsTheOthersWithTheFacilityDefaults) {
  const CaenConfig b = CaenConfig::from_text(test::kBifrostConfig, "b.json");
  EXPECT_EQ(b.instrument, Instrument::kBifrost);
  EXPECT_EQ(detector_type(b.instrument), 0x34);
  EXPECT_EQ(b.max_ring, 2U);
  EXPECT_EQ(b.max_group, 14U);
  EXPECT_EQ(b.max_fen, 0U);
  EXPECT_EQ(b.max_amplitude, 32767);
  EXPECT_EQ(b.max_tof_ns, 20ULL * 71'428'571);
  EXPECT_EQ(b.max_pulse_time_ns, 5ULL * 71'428'571);
  const CaenConfig c = CaenConfig::from_text(test::kCspecConfig, "c.json");
  EXPECT_EQ(detector_type(c.instrument), 0x3C);
  const CaenConfig m = CaenConfig::from_text(test::kMiraclesConfig, "m.json");
  EXPECT_EQ(detector_type(m.instrument), 0x38);
  EXPECT_EQ(m.max_tof_ns, 1000000000U);
}

TEST(CaenConfig, ErrorsNameFileAndPath) {
  EXPECT_NE(
      config_error(R"({"Detector": "tbl3he", "Resolution": 10})").find("'bad.json': /Detector"),
      std::string::npos);
  EXPECT_NE(config_error(R"({"Detector": "cspec"})").find("Resolution"), std::string::npos);
  EXPECT_NE(config_error(R"({"Detector": "cspec", "Resolution": 0})").find("/Resolution"),
            std::string::npos);
  EXPECT_NE(
      config_error(R"({"Detector": "bifrost", "Resolution": 300, "MaxRing": 12})").find("/MaxRing"),
      std::string::npos);
  const std::string no_bank = R"({"Detector": "loki", "Resolution": 8, "GroupsZ": 4,
      "Banks": [{"Bank": 0, "GroupsN": 2, "YOffset": 0}],
      "Config": [{"Ring": 0, "Bank": 1, "FENs": 1, "FENOffset": 0}]})";
  EXPECT_NE(config_error(no_bank).find("/Config/0/Bank"), std::string::npos);
  const std::string twice = R"({"Detector": "loki", "Resolution": 8, "GroupsZ": 4,
      "Banks": [{"Bank": 0, "GroupsN": 2, "YOffset": 0}],
      "Config": [{"Ring": 0, "Bank": 0, "FENs": 1, "FENOffset": 0},
                 {"Ring": 0, "Bank": 0, "FENs": 1, "FENOffset": 1}]})";
  EXPECT_NE(config_error(twice).find("/Config/1/Ring"), std::string::npos);
  EXPECT_NE(config_error("{not json").find("bad.json"), std::string::npos);
}

TEST(Calibration, LoadsIntervalsAndPolynomials) {
  const Calibration c = Calibration::from_text(
      calibration_text("loki", 3, 7, test::kLokiIntervals, 1,
                       "[[0,0,0,0],[0.01,-0.02,0.5,0.25],[0,0,0,0],[0,0,0,0],[0,0,0,0],"
                       "[0,0,0,0],[0,0,0,0]]"),
      "cal.json", "loki");
  EXPECT_EQ(c.groups(), 3U);
  EXPECT_EQ(c.group_size(), 7U);
  EXPECT_EQ(c.unit_of(0, 0.0), 0);
  EXPECT_EQ(c.unit_of(0, 0.143), 0);  // endpoints belong to the interval
  EXPECT_EQ(c.unit_of(0, 0.144), 1);
  EXPECT_EQ(c.unit_of(0, 0.1435), -1);
  EXPECT_EQ(c.unit_of(2, 1.0), 6);
  // Group 1, unit 1 at pos 0.5: delta = 0.01 + 0.5·(−0.02 + 0.5·(0.5 + 0.5·0.25))
  //   = 0.01 + 0.5·(−0.02 + 0.3125) = 0.01 + 0.14625 = 0.15625; corrected 0.5 − 0.15625 = 0.34375.
  Calibration::Clamp clamp;
  EXPECT_DOUBLE_EQ(c.correct(1, 1, 0.5, clamp), 0.34375);
  EXPECT_EQ(clamp, Calibration::Clamp::kNone);
  EXPECT_DOUBLE_EQ(c.correct(0, 0, 0.25, clamp), 0.25);  // zero polynomial
}

TEST(Calibration, ReversedIntervalsAreOrdered) {
  const Calibration c = Calibration::from_text(
      calibration_text("bifrost", 1, 3, "[[0.25, 0.0], [0.375, 0.625], [1.0, 0.75]]"), "c.json",
      "bifrost");
  EXPECT_EQ(c.unit_of(0, 0.1), 0);
  EXPECT_EQ(c.unit_of(0, 0.8), 2);
  EXPECT_EQ(c.unit(0, 2).lo, 1.0);  // kept as written: BIFROST measures from the first end
}

TEST(Calibration, ErrorsNameFileAndPath) {
  const std::string ok = calibration_text("loki", 2, 7, test::kLokiIntervals);
  EXPECT_EQ(calibration_error(ok), "no error");
  EXPECT_NE(calibration_error(ok, "bifrost").find("/Calibration/instrument"), std::string::npos);
  std::string count = ok;
  count.replace(count.find("\"groups\": 2"), 11, "\"groups\": 3");
  EXPECT_NE(calibration_error(count).find("/Calibration/Parameters"), std::string::npos);
  std::string index = ok;
  index.replace(index.find("\"groupindex\": 1"), 15, "\"groupindex\": 5");
  EXPECT_NE(calibration_error(index).find("/Calibration/Parameters/1/groupindex"),
            std::string::npos);
  EXPECT_NE(
      calibration_error(calibration_text("loki", 1, 2, "[[0.0, 0.5], [0.5, 1.0]]")).find("overlap"),
      std::string::npos);
  EXPECT_NE(calibration_error(calibration_text("loki", 1, 2, "[[0.0, 0.5], [0.6, 1.5]]"))
                .find("/Calibration/Parameters/0/intervals/1/1"),
            std::string::npos);
  EXPECT_NE(calibration_error(calibration_text("loki", 1, 2, "[[0.0, 0.5]]")).find("/intervals"),
            std::string::npos);
  EXPECT_NE(calibration_error(calibration_text("loki", 1, 1, "[[0.0, 1.0]]", 0, "[[0, 0, 0]]"))
                .find("/Calibration/Parameters/0/polynomials/0"),
            std::string::npos);
}

TEST(Calibration, IntervalOverlapRule) {
  EXPECT_FALSE(intervals_overlap({{0.0, 0.5}, {0.501, 1.0}}));
  EXPECT_TRUE(intervals_overlap({{0.0, 0.5}, {0.500001, 1.0}}));  // closer than 1e-5
  EXPECT_TRUE(intervals_overlap({{0.6, 0.0}, {0.5, 1.0}}));       // reversed, still overlapping
}

}  // namespace
}  // namespace efu::caen
