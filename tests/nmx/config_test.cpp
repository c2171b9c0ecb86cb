// The instrument config loader and the channel map (docs/nmx.md "Instrument config", "Channel
// map"): the shipped facility files, hand-worked coordinates, and one-line errors.
#include "config.h"

#include <string>

#include <gtest/gtest.h>

#include "config_error_of.h"
#include "nmx_test_support.h"

namespace efu::nmx {
namespace {

using efu::test::config_error_of;

std::string shipped(const std::string& name) {
  return std::string(EFU_NMX_CONFIGS_DIR) + "/" + name;
}

TEST(NmxConfig, ShippedNmxJsonHasFortyHybridsOnFourPanels) {
  const Config c = Config::from_file(shipped("nmx.json"));
  EXPECT_EQ(c.hybrids(), 40U);
  EXPECT_EQ(c.panels(), 4U);  // not in the file: the reference's default
  EXPECT_EQ(c.size_x(), 1280U);
  EXPECT_EQ(c.size_y(), 1280U);
  EXPECT_EQ(c.default_min_adc(), 50U);
  EXPECT_EQ(c.events().max_span[kX], 10U);
  EXPECT_EQ(c.events().max_span[kY], 10U);
  EXPECT_EQ(c.events().min_span[kX], 1U);
  EXPECT_EQ(c.events().max_gap[kX], 2U);
  EXPECT_EQ(c.events().max_matching_time_gap_ns, 500U);
  EXPECT_EQ(c.events().max_clustering_time_gap_ns, 200U);
  EXPECT_EQ(c.events().max_time_span_ns, 500U);
  EXPECT_FALSE(c.events().split_multi_events);
  EXPECT_EQ(c.max_pulse_time_ns(), 5U * 71'428'571U);
  // Config[5]: ring 0, FEN 1, hybrid 0, x of panel 1 from 1152, reversed.
  EXPECT_EQ(c.hybrid(5).fen, 1U);
  EXPECT_EQ(c.hybrid(5).panel, 1U);
  EXPECT_EQ(c.hybrid(5).offset, 1152U);
  EXPECT_TRUE(c.hybrid(5).reversed);
}

TEST(NmxConfig, ShippedVariantsLoad) {
  const Config mini = Config::from_file(shipped("mininmx.json"));
  EXPECT_EQ(mini.hybrids(), 10U);
  EXPECT_EQ(mini.events().max_clustering_time_gap_ns, 500U);  // absent: the default
  const Config p0 = Config::from_file(shipped("nmx_p0.json"));
  EXPECT_EQ(p0.size_y(), 3840U);
  const Config split = Config::from_file(shipped("nmx_split.json"));
  EXPECT_TRUE(split.events().split_multi_events);
  EXPECT_FLOAT_EQ(split.events().split_coefficient_low, 0.8F);
  EXPECT_FLOAT_EQ(split.events().split_coefficient_high, 1.2F);
}

TEST(NmxConfig, StripCoordinateFormula) {
  // normal: Offset + 64 * asic + channel
  EXPECT_EQ(strip_coordinate(128, false, 1, 5), 197U);
  EXPECT_EQ(strip_coordinate(0, false, 0, 0), 0U);
  // reversed: Offset + 64 * (1 - asic) + 63 - channel
  EXPECT_EQ(strip_coordinate(512, true, 0, 0), 639U);
  EXPECT_EQ(strip_coordinate(512, true, 1, 63), 512U);
  EXPECT_EQ(strip_coordinate(512, true, 1, 0), 575U);
}

TEST(NmxConfig, MapGivesPanelPlaneStripThresholdAndVmmIndex) {
  const Config c = Config::from_file(shipped("nmx.json"));
  vmm3a::ChannelMapping m{};
  // Fibre 1 is ring 0; FEN 0 hybrid 4 (VMM 9, asic 1) is Config[4]: x of panel 0 from 0, reversed.
  ASSERT_EQ(c.map(1, 0, 9, 63, m), vmm3a::MapStatus::kOk);
  EXPECT_EQ(m.unit, 0U);
  EXPECT_EQ(m.plane, kX);
  EXPECT_EQ(m.coordinate, 0U);
  EXPECT_EQ(m.threshold, 50U);
  EXPECT_EQ(m.vmm_index, 9U);  // 2 * 4 + 1
  // FEN 6 hybrid 2 (VMM 4, asic 0) is Config[32]: y of panel 2 from 896, normal; channel 7.
  ASSERT_EQ(c.map(0, 6, 4, 7, m), vmm3a::MapStatus::kOk);
  EXPECT_EQ(m.unit, 2U);
  EXPECT_EQ(m.plane, kY);
  EXPECT_EQ(m.coordinate, 903U);
  EXPECT_EQ(m.vmm_index, 64U);  // 2 * 32 + 0
}

TEST(NmxConfig, MapRejectsWhatNoHybridReads) {
  const Config c = Config::from_file(shipped("nmx.json"));
  vmm3a::ChannelMapping m{};
  EXPECT_EQ(c.map(2, 0, 0, 0, m), vmm3a::MapStatus::kFiber);  // ring 1: not configured
  EXPECT_EQ(c.map(0, 8, 0, 0, m), vmm3a::MapStatus::kFen);    // FEN 8 of ring 0: not configured
  EXPECT_EQ(c.map(0, 0, 10, 0, m), vmm3a::MapStatus::kVmm);   // hybrid 5: not configured
  EXPECT_EQ(c.map(0, 0, 0, 64, m), vmm3a::MapStatus::kChannel);
}

TEST(NmxConfig, ChannelOfInvertsMapForEveryChannel) {
  const Config c = Config::from_file(shipped("nmx.json"));
  for (std::uint32_t i = 0; i < c.hybrids(); ++i) {
    const HybridConfig& h = c.hybrid(i);
    for (std::uint8_t vmm = 0; vmm < 2; ++vmm) {
      for (std::uint8_t ch = 0; ch < 64; ++ch) {
        vmm3a::ChannelMapping m{};
        const auto v = static_cast<std::uint8_t>(h.hybrid * 2 + vmm);
        ASSERT_EQ(c.map(static_cast<std::uint8_t>(h.ring * 2), h.fen, v, ch, m),
                  vmm3a::MapStatus::kOk);
        Config::Channel back{};
        ASSERT_TRUE(c.channel_of(m.unit, m.plane, m.coordinate, back));
        EXPECT_EQ(back.hybrid_index, i);
        EXPECT_EQ(back.vmm, v);
        EXPECT_EQ(back.channel, ch);
      }
    }
  }
}

TEST(NmxConfig, DefaultsForOptionalEntryFields) {
  const Config c = Config::from_json(R"({"Detector": "NMX", "InstrumentGeometry": "NMX",
    "Config": [{"Ring": 1, "FEN": 2, "Hybrid": 3, "HybridId": "E5533333222222221111111100000000"}]})",
                                     "t.json");
  EXPECT_EQ(c.hybrid(0).plane, kX);
  EXPECT_EQ(c.hybrid(0).panel, 0U);
  EXPECT_EQ(c.hybrid(0).offset, 0U);
  EXPECT_FALSE(c.hybrid(0).reversed);
  EXPECT_EQ(c.default_min_adc(), 50U);
  EXPECT_EQ(c.events().max_span[kY], 10U);
  EXPECT_FLOAT_EQ(c.events().split_coefficient_low, 0.8F);
}

std::string error_of(const std::string& text) {
  return config_error_of([&] { Config::from_json(text, "bad.json"); });
}

// The small config with one entry field replaced.
std::string with_entry(const std::string& from, const std::string& to) {
  std::string s = test::small_config();
  s.replace(s.find(from), from.size(), to);
  return s;
}

TEST(NmxConfig, ErrorsNameFilePathAndExpectation) {
  const std::string prefix = "nmx instrument config 'bad.json': ";
  EXPECT_EQ(error_of(R"({"Detector": "Freia", "InstrumentGeometry": "NMX", "Config": []})"),
            prefix + "/Detector: \"Freia\" is not NMX; expected \"NMX\"");
  EXPECT_NE(error_of(R"({"Detector": "NMX", "Config": []})").find("missing \"InstrumentGeometry\""),
            std::string::npos);
  const std::string overlap =
      error_of(with_entry("\"Plane\": 1, \"Offset\": 0", "\"Plane\": 0, \"Offset\": 64"));
  EXPECT_EQ(overlap, prefix +
                         "/Config/1/Offset: strips 64..191 of panel 0 plane 0 overlap /Config/0's "
                         "0..127; expected each strip read by one hybrid");
  // Next to each other is fine.
  EXPECT_EQ(error_of(with_entry("\"Plane\": 1, \"Offset\": 0", "\"Plane\": 0, \"Offset\": 128")),
            "");
  // The same strips on another panel or plane are fine too (the small config's y is 0..127).
  EXPECT_NE(error_of(with_entry("\"Hybrid\": 1,", "\"Hybrid\": 0,"))
                .find("/Config/1/Hybrid: ring 0 FEN 0 hybrid 0 is used twice"),
            std::string::npos);
  EXPECT_NE(error_of(with_entry("100000001", "100000000"))
                .find("/Config/1/HybridId: \"E5533333222222221111111100000000\" is used twice"),
            std::string::npos);
  EXPECT_NE(
      error_of(with_entry("100000001\"", "10000001\"")).find("has 31 characters; expected 32"),
      std::string::npos);
}

TEST(NmxConfig, RangeErrorsNameTheField) {
  const auto contains = [](const std::string& message, const std::string& part) {
    return message.find(part) != std::string::npos && message.find("expected") != std::string::npos;
  };
  EXPECT_TRUE(contains(
      error_of(with_entry("\"Panel\": 0, \"HybridId\": \"E5533333222222221111111100000001",
                          "\"Panel\": 4, \"HybridId\": \"E5533333222222221111111100000001")),
      "/Config/1/Panel"));
  EXPECT_TRUE(contains(error_of(with_entry("\"Plane\": 1", "\"Plane\": 2")), "/Config/1/Plane"));
  EXPECT_TRUE(
      contains(error_of(with_entry("\"Plane\": 1", "\"Plane\": \"y\"")), "/Config/1/Plane"));
  EXPECT_TRUE(contains(error_of(with_entry("\"Ring\": 0, \"FEN\": 0, \"Hybrid\": 1",
                                           "\"Ring\": 11, \"FEN\": 0, \"Hybrid\": 1")),
                       "/Config/1/Ring"));
  EXPECT_TRUE(contains(error_of(with_entry("\"Offset\": 0, \"ReversedChannels\": true",
                                           "\"Ofset\": 0, \"ReversedChannels\": true")),
                       "/Config/1"));
  EXPECT_TRUE(contains(error_of(test::small_config("\"MinSpanX\": 11,")), "/MinSpanX"));
  EXPECT_TRUE(contains(error_of(test::small_config("\"NumPanels\": 0,")), "/NumPanels"));
  EXPECT_TRUE(contains(error_of(test::small_config("\"DefaultMinADC\": 1024,")), "/DefaultMinADC"));
  EXPECT_TRUE(
      contains(error_of(test::small_config("\"SplitMultiEvents\": 1,")), "/SplitMultiEvents"));
  EXPECT_TRUE(contains(error_of(test::small_config("\"SplitMultiEventsCoefficientLow\": 2.0, "
                                                   "\"SplitMultiEventsCoefficientHigh\": 1.5,")),
                       "/SplitMultiEventsCoefficientHigh"));
  EXPECT_TRUE(contains(
      error_of(R"({"Detector": "NMX", "InstrumentGeometry": "NMX", "Config": []})"), "/Config"));
  // One line each.
  EXPECT_EQ(error_of(test::small_config("\"MinSpanX\": 11,")).find('\n'), std::string::npos);
}

TEST(NmxConfig, MissingFileIsAConfigError) {
  const std::string e = config_error_of([] { Config::from_file("/nonexistent/nmx.json"); });
  EXPECT_NE(e.find("/nonexistent/nmx.json"), std::string::npos);
}

}  // namespace
}  // namespace efu::nmx
