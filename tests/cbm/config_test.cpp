// The beam-monitor config: the facility's own files (read from the reference snapshot's bare git
// directory; skipped without it) load unchanged or are refused with one line naming the file,
// the entry and the rule; the shipped files load; every rule has a refusal case.
#include "config.h"

#include <string>

#include <gtest/gtest.h>

#include "cbm_pipeline.h"
#include "cbm_test_support.h"
#include "efu/errors.h"
#include "reference_snapshot.h"

namespace efu::cbm {
namespace {

using efu::test::reference_file;

/// The ConfigError message of loading `text` as `origin`, or "" when it loads.
std::string refusal(const std::string& text, const std::string& origin = "t.json") {
  try {
    load_config_json(text, origin);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

#define REFERENCE_OR_SKIP(text, path)            \
  const std::string text = reference_file(path); \
  if (text.empty()) GTEST_SKIP() << "no reference copy of " << path

// --- The facility's files ----------------------------------------------------------------------

TEST(FacilityFiles, CbmTestLoadsEveryEntryAsItsOwnSource) {
  REFERENCE_OR_SKIP(text, "src/modules/cbm/configs/cbmtest.json");
  const CbmConfig c = load_config_json(text, "cbmtest.json");
  EXPECT_EQ(c.instrument, Instrument::kCbm);
  EXPECT_EQ(c.monitor_ring, 11);
  EXPECT_EQ(c.max_fen_id, 2);
  EXPECT_EQ(c.max_tof_ns, 10'000'000'000ULL);
  EXPECT_EQ(c.effective_max_tof_ns(), kMaxEv44TofNs);
  ASSERT_EQ(c.monitors.size(), 8U);
  EXPECT_EQ(c.monitors[2].source, "cbm3");
  EXPECT_EQ(c.monitors[2].pixel_offset, 3U);
  EXPECT_EQ(c.monitors[3].type, MonitorType::kIbm);
  EXPECT_EQ(c.monitors[3].schema, Schema::kDa00);
  EXPECT_EQ(c.monitors[3].max_tof_bin, 10'000);
  EXPECT_EQ(c.monitors[3].bin_count, 100);
  EXPECT_EQ(c.monitors[3].aggregated_frames, 1U);
  EXPECT_EQ(c.monitors[6].type, MonitorType::kEvent2D);
  EXPECT_EQ(c.monitors[6].pixel_offset, 1024U);
  EXPECT_EQ(c.monitors[7].pixel_offset, 0U);  // PixelOffset is optional for 2D
  EXPECT_EQ(c.find(2, 1), 5);

  // Every entry is its own source, ev44 or da00 as its Schema says.
  test::Harness h(text);
  EXPECT_EQ(h.sources.event_sinks.size(), 5U);
  EXPECT_EQ(h.sources.histogram_sinks.size(), 3U);
  for (const char* name : {"cbm1", "cbm2", "cbm3", "cbm7", "cbm8"}) {
    EXPECT_EQ(h.sources.event_sinks.count(name), 1U) << name;
  }
  for (const char* name : {"cbm4", "cbm5", "cbm6"}) {
    EXPECT_EQ(h.sources.histogram_sinks.count(name), 1U) << name;
  }
}

TEST(FacilityFiles, Cbm2DTest) {
  REFERENCE_OR_SKIP(text, "src/modules/cbm/configs/cbm2Dtest.json");
  const CbmConfig c = load_config_json(text, "cbm2Dtest.json");
  ASSERT_EQ(c.monitors.size(), 1U);
  EXPECT_EQ(c.monitors[0].type, MonitorType::kEvent2D);
  EXPECT_EQ(c.monitors[0].width, 512);
  EXPECT_EQ(c.monitors[0].height, 512);
  EXPECT_EQ(c.monitors[0].channel, 3);
}

TEST(FacilityFiles, IbmTest) {
  REFERENCE_OR_SKIP(text, "src/modules/cbm/configs/ibmtest.json");
  const CbmConfig c = load_config_json(text, "ibmtest.json");
  ASSERT_EQ(c.monitors.size(), 1U);
  EXPECT_EQ(c.monitors[0].schema, Schema::kDa00);
  EXPECT_EQ(c.monitors[0].max_tof_bin, 71'428'572);
  EXPECT_EQ(c.monitors[0].bin_count, 512);
}

TEST(FacilityFiles, UtgaardIbmTest) {
  REFERENCE_OR_SKIP(text, "src/modules/cbm/configs/utgaard_ibm_test.json");
  const CbmConfig c = load_config_json(text, "utgaard_ibm_test.json");
  EXPECT_EQ(c.monitor_ring, 0);
  ASSERT_EQ(c.monitors.size(), 1U);
  EXPECT_EQ(c.monitors[0].type, MonitorType::kIbm);
  EXPECT_EQ(c.monitors[0].schema, Schema::kEv44);
}

// The reference's own sample configs that break its rules: refused with one line naming the
// file, the entry (its JSON path) and the rule.
TEST(FacilityFiles, AmorOnsiteIbmHasNoSchema) {
  REFERENCE_OR_SKIP(text, "src/modules/cbm/configs/amor_onsite_ibm.json");
  const std::string why = refusal(text, "amor_onsite_ibm.json");
  EXPECT_EQ(why,
            "cbm config 'amor_onsite_ibm.json': /Topology/0: missing \"Schema\"; expected "
            "\"ev44\" or \"da00\" (every CBM Topology entry names its schema)");
  EXPECT_EQ(why.find('\n'), std::string::npos);
}

TEST(FacilityFiles, UtgaardTtlTestGivesA2DMonitorDa00) {
  REFERENCE_OR_SKIP(text, "src/modules/cbm/configs/utgaard_ttl_test.json");
  const std::string why = refusal(text, "utgaard_ttl_test.json");
  EXPECT_EQ(why,
            "cbm config 'utgaard_ttl_test.json': /Topology/1/Schema: \"da00\" is not possible for "
            "an EVENT_2D monitor; expected \"ev44\" (the reference allows only ev44 for 2D)");
}

TEST(FacilityFiles, CbmUnitTestConfigs) {
  REFERENCE_OR_SKIP(base, "src/modules/cbm/test/cbm_base_test.json");
  const CbmConfig c = load_config_json(base, "cbm_base_test.json");
  EXPECT_EQ(c.monitors.size(), 9U);
  EXPECT_EQ(c.monitor_ring, kDefaultMonitorRing);
  EXPECT_EQ(c.max_ring, kDefaultMaxRing);
  EXPECT_TRUE(c.normalize_ibm);
  REFERENCE_OR_SKIP(upper, "src/modules/cbm/test/cbm_config_test.json");
  const CbmConfig u = load_config_json(upper, "cbm_config_test.json");
  ASSERT_EQ(u.monitors.size(), 3U);
  EXPECT_EQ(u.monitors[0].schema, Schema::kEv44);  // "EV44": the schema is read in any case
  EXPECT_EQ(u.monitors[1].schema, Schema::kDa00);
}

TEST(FacilityFiles, BeerBaseTest) {
  REFERENCE_OR_SKIP(text, "src/modules/beer/test/beer_base_test.json");
  const CbmConfig c = load_config_json(text, "beer_base_test.json");
  EXPECT_EQ(c.instrument, Instrument::kBeer);
  EXPECT_EQ(detector_type(c.instrument), 0x50);
  ASSERT_EQ(c.monitors.size(), 4U);
  for (const Monitor& m : c.monitors) {
    EXPECT_EQ(m.type, MonitorType::kEvent2D);
    EXPECT_EQ(m.schema, Schema::kEv44);
  }
  EXPECT_EQ(c.monitors[3].pixel_offset, 3072U);
}

// --- The shipped files -------------------------------------------------------------------------

TEST(ShippedFiles, Load) {
  const CbmConfig cbm = load_config_file(shipped_config_path("cbm.json"));
  EXPECT_EQ(cbm.instrument, Instrument::kCbm);
  EXPECT_EQ(cbm.monitors.size(), 6U);
  const CbmConfig beer = load_config_file(shipped_config_path("beer.json"));
  EXPECT_EQ(beer.instrument, Instrument::kBeer);
  EXPECT_EQ(beer.monitors.size(), 4U);
}

TEST(ShippedFiles, AMissingFileIsOneLine) {
  const std::string path = "/nonexistent/cbm.json";
  try {
    load_config_file(path);
    FAIL() << "loaded";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

// --- Rules -------------------------------------------------------------------------------------

std::string one(const std::string& entry, const std::string& root = "") {
  return R"({"Detector": "CBM", "MaxFENId": 2, )" + root + R"("Topology": [)" + entry + "]}";
}

struct Rule {
  const char* name;
  std::string text;
  const char* expected;  // the message after "cbm config 't.json': "
};

std::vector<Rule> rules() {
  const std::string e0 =
      R"({"FEN": 0, "Channel": 0, "Type": "EVENT_0D", "Source": "a", "Schema": "ev44", "PixelOffset": 1})";
  return {
      {"detector", R"({"Detector": "LOKI", "MaxFENId": 2, "Topology": [)" + e0 + "]}",
       "/Detector: \"LOKI\" is not a beam-monitor detector; expected \"CBM\" or \"BEER\""},
      {"no_max_fen", R"({"Detector": "CBM", "Topology": [)" + e0 + "]}", "missing \"MaxFENId\""},
      {"monitor_ring_above_max", one(e0, R"("MaxRing": 3, "MonitorRing": 5,)"),
       "/MonitorRing: MonitorRing 5 is above MaxRing 3; expected a ring the readouts can come "
       "from"},
      {"unknown_root_key", one(e0, R"("MaxTOF": 5,)"), "/MaxTOF"},
      {"fen_above_max",
       one(R"({"FEN": 3, "Channel": 0, "Type": "EVENT_0D", "Source": "a", "Schema": "ev44", "PixelOffset": 1})"),
       "/Topology/0/FEN: 3 is out of range"},
      {"duplicate_channel",
       one(e0 + "," +
           R"({"FEN": 0, "Channel": 0, "Type": "EVENT_0D", "Source": "b", "Schema": "ev44", "PixelOffset": 1})"),
       "/Topology/1/Channel: FEN 0, Channel 0 is used twice; expected each monitor channel once"},
      {"duplicate_source",
       one(e0 + "," +
           R"({"FEN": 0, "Channel": 1, "Type": "EVENT_0D", "Source": "a", "Schema": "ev44", "PixelOffset": 1})"),
       "/Topology/1/Source: \"a\" is used twice; expected each monitor to publish its own source"},
      {"type",
       one(R"({"FEN": 0, "Channel": 0, "Type": "EVENT_1D", "Source": "a", "Schema": "ev44", "PixelOffset": 1})"),
       "/Topology/0/Type: \"EVENT_1D\" is not a CBM type; expected \"EVENT_0D\", \"EVENT_2D\" "
       "or \"IBM\""},
      {"schema",
       one(R"({"FEN": 0, "Channel": 0, "Type": "EVENT_0D", "Source": "a", "Schema": "ev42", "PixelOffset": 1})"),
       "/Topology/0/Schema: \"ev42\" is not a schema; expected \"ev44\" or \"da00\""},
      {"0d_ev44_needs_pixel_offset",
       one(R"({"FEN": 0, "Channel": 0, "Type": "EVENT_0D", "Source": "a", "Schema": "ev44"})"),
       "/Topology/0: missing \"PixelOffset\""},
      {"0d_da00_needs_bins",
       one(R"({"FEN": 0, "Channel": 0, "Type": "EVENT_0D", "Source": "a", "Schema": "da00", "PixelOffset": 0})"),
       "/Topology/0: missing \"MaxTofBin\""},
      {"2d_needs_width",
       one(R"({"FEN": 0, "Channel": 0, "Type": "EVENT_2D", "Source": "a", "Schema": "ev44", "Height": 5})"),
       "/Topology/0: missing \"Width\""},
      {"2d_width_range",
       one(R"({"FEN": 0, "Channel": 0, "Type": "EVENT_2D", "Source": "a", "Schema": "ev44", "Width": 65536, "Height": 5})"),
       "/Topology/0/Width: 65536 is out of range"},
      {"ibm_needs_bins",
       one(R"({"FEN": 0, "Channel": 0, "Type": "IBM", "Source": "a", "Schema": "ev44"})"),
       "/Topology/0: missing \"MaxTofBin\""},
      {"ibm_zero_width_bins",
       one(R"({"FEN": 0, "Channel": 0, "Type": "IBM", "Source": "a", "Schema": "da00", "MaxTofBin": 10, "BinCount": 11})"),
       "/Topology/0/BinCount: 11 is above MaxTofBin 10; expected bins at least 1 ns wide "
       "(BinCount <= MaxTofBin)"},
      {"aggregation_mode",
       one(R"({"FEN": 0, "Channel": 0, "Type": "IBM", "Source": "a", "Schema": "da00", "MaxTofBin": 10, "BinCount": 10, "AggregationMode": 2})"),
       "/Topology/0/AggregationMode: 2 is out of range"},
      {"aggregated_frames",
       one(R"({"FEN": 0, "Channel": 0, "Type": "IBM", "Source": "a", "Schema": "da00", "MaxTofBin": 10, "BinCount": 10, "AggregatedFrames": 0})"),
       "/Topology/0/AggregatedFrames: 0 is out of range"},
      {"misplaced_key",
       one(R"({"FEN": 0, "Channel": 0, "Type": "IBM", "Source": "a", "Schema": "ev44", "MaxTofBin": 10, "BinCount": 10, "Width": 5})"),
       "/Topology/0/Width"},
      {"empty_source",
       one(R"({"FEN": 0, "Channel": 0, "Type": "EVENT_0D", "Source": "", "Schema": "ev44", "PixelOffset": 1})"),
       "/Topology/0/Source: \"\" is empty"},
      {"no_topology", R"({"Detector": "CBM", "MaxFENId": 2})", "missing \"Topology\""},
      {"beer_type",
       R"({"Detector": "BEER", "MaxFENId": 1, "Topology": [{"FEN": 0, "Channel": 0, "Type": "IBM", "Source": "a", "Width": 5, "Height": 5}]})",
       "/Topology/0/Type: \"IBM\" is not possible for BEER; expected \"EVENT_2D\" or no Type"},
      {"beer_schema",
       R"({"Detector": "BEER", "MaxFENId": 1, "Topology": [{"FEN": 0, "Channel": 0, "Schema": "da00", "Source": "a", "Width": 5, "Height": 5}]})",
       "/Topology/0/Schema: \"da00\" is not possible for BEER; expected \"ev44\" or no Schema"},
  };
}

void PrintTo(const Rule& r, std::ostream* os) { *os << r.name; }

class CbmConfigRule : public ::testing::TestWithParam<Rule> {};

TEST_P(CbmConfigRule, IsRefusedWithOneLine) {
  const Rule& r = GetParam();
  const std::string why = refusal(r.text);
  ASSERT_FALSE(why.empty()) << "loaded";
  EXPECT_EQ(why.rfind("cbm config 't.json': ", 0), 0U) << why;
  EXPECT_NE(why.find(r.expected), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
}

INSTANTIATE_TEST_SUITE_P(Config, CbmConfigRule, ::testing::ValuesIn(rules()),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(CbmConfig, DefaultsAreTheReferences) {
  const CbmConfig c = load_config_json(
      one(R"({"FEN": 0, "Channel": 0, "Type": "IBM", "Source": "a", "Schema": "da00", "MaxTofBin": 100, "BinCount": 10})"),
      "t.json");
  EXPECT_EQ(c.max_tof_ns, 20ULL * 71'428'571);
  EXPECT_EQ(c.max_pulse_time_diff_ns, 5ULL * 71'428'571);
  EXPECT_EQ(c.monitor_ring, 11);
  EXPECT_EQ(c.max_ring, 11);
  EXPECT_TRUE(c.normalize_ibm);
  EXPECT_EQ(c.monitors[0].aggregated_frames, 1U);
  EXPECT_EQ(c.monitors[0].aggregation, AggregationMode::kSum);
}

}  // namespace
}  // namespace efu::cbm
