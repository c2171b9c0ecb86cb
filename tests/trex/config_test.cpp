// The TREX instrument config loader: what it reads, its defaults, and one test per check, each
// asserting the one-line ConfigError names the file, the JSON path and what was expected.
#include "config.h"

#include <string>

#include <gtest/gtest.h>

#include "config_error_of.h"
#include "trex_test_support.h"

namespace efu::trex {
namespace {

using test::trex_config;

// `text` with the first `from` replaced by `to` (the test fails if `from` is absent).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string error_of(const std::string& text) {
  return efu::test::config_error_of([&] { load_config_json(text, "t.json"); });
}

const Vessel& vessel(const TrexConfig& c, const std::string& id) {
  for (const Vessel& v : c.vessels) {
    if (v.id == id) return v;
  }
  ADD_FAILURE() << "no vessel " << id;
  return c.vessels.front();
}

TEST(TrexConfig, ReadsEveryField) {
  const TrexConfig c = load_config_json(trex_config(), "t.json");
  EXPECT_EQ(c.geometry, InstrumentGeometry::kTrex);
  EXPECT_EQ(c.size_x, 384);
  EXPECT_EQ(c.size_y, 140);
  EXPECT_EQ(c.size_z, 16);
  EXPECT_EQ(c.default_min_adc, 50);
  EXPECT_EQ(c.max_grids_span, 3);
  ASSERT_EQ(c.vessels.size(), 4U);
  ASSERT_EQ(c.hybrids.size(), 20U);
  ASSERT_EQ(c.units.size(), 8U);  // one per (ring, FEN)
  const Vessel& b = vessel(c, "B");
  EXPECT_TRUE(b.rotated);
  EXPECT_FALSE(b.short_vessel);
  EXPECT_EQ(b.x_offset, 24);
  EXPECT_EQ(b.y_offset, 139);
  EXPECT_EQ(b.min_adc, 50);  // DefaultMinADC
  const Vessel& d = vessel(c, "D");
  EXPECT_TRUE(d.short_vessel);
  EXPECT_FALSE(d.rotated);
  EXPECT_EQ(d.min_adc, 20);
  EXPECT_EQ(vessel(c, "A").y_offset, 0);  // absent: 0
  // Config[] entry 13 is ring 1, FEN 0, hybrid 1 of vessel C; its unit is the fifth (ring, FEN).
  const HybridEntry& h = c.hybrids[13];
  EXPECT_EQ(h.ring, 1);
  EXPECT_EQ(h.fen, 0);
  EXPECT_EQ(h.hybrid, 1);
  EXPECT_EQ(c.vessels[h.vessel].id, "C");
  EXPECT_EQ(h.unit, 4);
  EXPECT_EQ(c.units[h.unit].ring, 1);
  EXPECT_EQ(c.units[h.unit].fen, 0);
  EXPECT_EQ(c.reference_pixel_count(), (140U + 140 + 51 + 51) * 6 * 16 * 2);
}

TEST(TrexConfig, AbsentScalarsTakeTheReferenceDefaults) {
  const std::string text = R"({"Detector": "TREX", "InstrumentGeometry": "LET",
    "Vessel_Config": {"0": {"Rotation": false}},
    "Config": [{"Ring": 0, "VesselId": "0", "FEN": 0, "Hybrid": 1,
                "HybridId": "E5533333222222221111111100000000"}]})";
  const TrexConfig c = load_config_json(text, "t.json");
  EXPECT_EQ(c.geometry, InstrumentGeometry::kLet);
  EXPECT_EQ(c.size_x, 384);
  EXPECT_EQ(c.size_y, 140);
  EXPECT_EQ(c.size_z, 16);
  EXPECT_EQ(c.default_min_adc, 50);
  EXPECT_EQ(c.max_grids_span, 3);
  EXPECT_EQ(c.max_matching_time_gap_ns, 500U);
  EXPECT_EQ(c.max_clustering_time_gap_ns, 500U);
  EXPECT_EQ(c.max_pulse_time_ns, 5 * 71'428'571ULL);
  EXPECT_FALSE(c.vessels[0].short_vessel);
  EXPECT_EQ(c.vessels[0].min_adc, 50);
}

TEST(TrexConfig, ReadsTheTimeGapsAndMaxPulseTime) {
  const TrexConfig c =
      load_config_json(trex_config(R"("MaxMatchingTimeGap": 300, "MaxClusteringTimeGap": 700,
                     "MaxPulseTimeNS": 71428570,)"),
                       "t.json");
  EXPECT_EQ(c.max_matching_time_gap_ns, 300U);
  EXPECT_EQ(c.max_clustering_time_gap_ns, 700U);
  EXPECT_EQ(c.max_pulse_time_ns, 71'428'570U);
}

TEST(TrexConfig, MaxGridsPerEventIsTheGridSpanCut) {
  const std::string let = test::let_config(R"({"NumGrids": 51, "Rotation": true, "Short": true})");
  EXPECT_EQ(load_config_json(let, "t.json").max_grids_span, 5);
  const std::string both =
      replaced(let, R"("MaxGridsPerEvent": 5)", R"("MaxGridsPerEvent": 5, "MaxGridsSpan": 4)");
  EXPECT_EQ(error_of(both),
            "trex instrument config 't.json': /MaxGridsPerEvent: 5 differs from MaxGridsSpan 4; "
            "expected the same grid-span cut or only one of the two keys");
}

TEST(TrexConfig, ThePlaceholderHybridIdMayRepeat) {
  const TrexConfig c = load_config_json(
      test::let_config(R"({"NumGrids": 51, "Rotation": true, "Short": true})"), "t.json");
  ASSERT_EQ(c.hybrids.size(), 4U);
  EXPECT_EQ(c.units.size(), 2U);
  EXPECT_EQ(c.hybrids[3].hybrid_id, kPlaceholderHybridId);
}

struct BadCase {
  const char* name;
  std::string from;
  std::string to;
  std::string message;  // after "trex instrument config 't.json': "
};

class TrexConfigErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(TrexConfigErrors, OneLineNamingFilePathAndExpectation) {
  const BadCase& c = GetParam();
  EXPECT_EQ(error_of(replaced(trex_config(), c.from, c.to)),
            "trex instrument config 't.json': " + c.message);
}

const std::string kFirstEntry = R"({"Ring": 0, "VesselId": "A", "FEN": 0, "Hybrid": 0)";

INSTANTIATE_TEST_SUITE_P(
    EveryCheck, TrexConfigErrors,
    ::testing::Values(
        BadCase{"Detector", R"("Detector": "TREX")", R"("Detector": "TREXs")",
                R"(/Detector: "TREXs" is not the TREX detector; expected "TREX")"},
        BadCase{"NoDetector", R"("Detector": "TREX",)", "",
                R"(/: missing "Detector"; expected it in this object)"},
        BadCase{"Geometry", R"("InstrumentGeometry": "TREX")", R"("InstrumentGeometry": "trex")",
                R"(/InstrumentGeometry: "trex" is unknown; expected "TREX" or "LET")"},
        BadCase{"Ring", kFirstEntry, R"({"Ring": 11, "VesselId": "A", "FEN": 0, "Hybrid": 0)",
                "/Config/0/Ring: 11 is out of range; expected 0..10"},
        BadCase{"Fen", kFirstEntry, R"({"Ring": 0, "VesselId": "A", "FEN": 14, "Hybrid": 0)",
                "/Config/0/FEN: 14 is out of range; expected 0..13"},
        BadCase{"Hybrid", kFirstEntry, R"({"Ring": 0, "VesselId": "A", "FEN": 0, "Hybrid": 11)",
                "/Config/0/Hybrid: 11 is out of range; expected 0..10"},
        BadCase{"HybridIdLength", "E5500000000000000000000000000000", "E55",
                R"(/Config/0/HybridId: "E55" has 3 characters; expected 32)"},
        BadCase{"HybridIdTwice", "E5500000000000000000000000000001",
                "E5500000000000000000000000000000",
                R"(/Config/1/HybridId: "E5500000000000000000000000000000" is used twice; )"
                R"(expected each hybrid once (only the placeholder of 32 zeros may repeat))"},
        BadCase{"HybridTwice", R"("FEN": 0, "Hybrid": 1)", R"("FEN": 0, "Hybrid": 0)",
                "/Config/1/Hybrid: ring 0, FEN 0, hybrid 0 is used twice; expected each "
                "hybrid once"},
        BadCase{"UnknownVessel", R"("VesselId": "A")", R"("VesselId": "Z")",
                R"(/Config/0/VesselId: "Z" is not in Vessel_Config; expected one of its keys)"},
        BadCase{"EntryKey", R"("VesselId": "A")", R"("Vessel": "A")",
                "/Config/0/Vessel: unknown key; expected one of Ring, VesselId, FEN, Hybrid, "
                "HybridId"},
        BadCase{"NoConfig", R"("Config": [)", R"("Configs": [)",
                R"(/: missing "Config"; expected it in this object)"},
        BadCase{"RotationMissing", R"("A": {"NumGrids": 140, "Rotation": false,)",
                R"("A": {"NumGrids": 140,)",
                R"(/Vessel_Config/A: missing "Rotation"; expected it in this object)"},
        BadCase{"RotationType", R"("A": {"NumGrids": 140, "Rotation": false,)",
                R"("A": {"NumGrids": 140, "Rotation": 0,)",
                "/Vessel_Config/A/Rotation: 0 is not true or false; expected true or false"},
        BadCase{"VesselKey", R"("XOffset": 12})", R"("XOfset": 12})",
                "/Vessel_Config/A/XOfset: unknown key; expected one of NumGrids, Rotation, "
                "Short, XOffset, YOffset, MinADC"},
        BadCase{"XOffset", R"("XOffset": 12})", R"("XOffset": 65536})",
                "/Vessel_Config/A/XOffset: 65536 is out of range; expected 0..65535"},
        BadCase{"MinAdc", R"("MinADC": 20)", R"("MinADC": 1024)",
                "/Vessel_Config/D/MinADC: 1024 is out of range; expected 0..1023"},
        BadCase{"NumGrids", R"("A": {"NumGrids": 140)", R"("A": {"NumGrids": 256)",
                "/Vessel_Config/A/NumGrids: 256 is out of range; expected 0..255"},
        BadCase{"NoVessels", R"("Vessel_Config": {)", R"("Vessel_Config": {}, "X": {)",
                "/Vessel_Config: is not a non-empty object; expected {\"<VesselId>\": "
                "{vessel}, ...}"},
        BadCase{"DefaultMinAdc", R"("DefaultMinADC": 50)", R"("DefaultMinADC": -1)",
                "/DefaultMinADC: -1 is out of range; expected 0..1023"},
        BadCase{"SizeY", R"("SizeY": 140)", R"("SizeY": 0)",
                "/SizeY: 0 is out of range; expected 1..65535"},
        BadCase{"Volume", R"("SizeX": 384, "SizeY": 140)", R"("SizeX": 65535, "SizeY": 65535)",
                "/SizeZ: 16 makes SizeX * SizeY * SizeZ exceed 2^32 - 1; expected pixel ids "
                "that fit 32 bits"},
        BadCase{"GridSpan", R"("MaxGridsSpan": 3)", R"("MaxGridsSpan": 0)",
                "/MaxGridsSpan: 0 is out of range; expected 1..65535"}),
    [](const ::testing::TestParamInfo<BadCase>& param_info) {
      return std::string(param_info.param.name);
    });

TEST(TrexConfig, AMissingFileIsAConfigError) {
  const std::string message =
      efu::test::config_error_of([] { load_config_file("/nonexistent/trex.json"); });
  EXPECT_NE(message.find("'/nonexistent/trex.json'"), std::string::npos) << message;
  EXPECT_NE(message.find("expected"), std::string::npos) << message;
}

}  // namespace
}  // namespace efu::trex
