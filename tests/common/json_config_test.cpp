#include "efu/json_config.h"

#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "config_error_of.h"
#include "efu/errors.h"

namespace efu {
namespace {

JsonDocument doc(const char* text) {
  return JsonDocument::from_text(text, "test config", "t.json");
}

constexpr const char* kInstrument = R"({
  "Detector": "Freia",
  "WireChOffset": 16,
  "Scale": 2.5,
  "Enabled": true,
  "Config": [
    {"Ring": 0, "FEN": 1, "Thresholds": [[10], [20]]},
    {"Ring": 3, "FEN": "one"}
  ]
})";

TEST(JsonConfig, ReadsTypedMembers) {
  const JsonDocument d = doc(kInstrument);
  const JsonNode root = d.root();
  EXPECT_EQ(root.path(), "/");
  EXPECT_EQ(root.get_string("Detector"), "Freia");
  EXPECT_EQ(root.get_int("WireChOffset", 0, 63), 16);
  EXPECT_DOUBLE_EQ(root.get_double("Scale", 0, 10), 2.5);
  EXPECT_DOUBLE_EQ(root.get_double("WireChOffset", 0, 100), 16.0);  // integers are numbers
  EXPECT_TRUE(root.get_bool("Enabled"));
  EXPECT_EQ(root.get_int_or("Missing", 7, 0, 10), 7);
  EXPECT_EQ(root.get_string_or("Missing", "x"), "x");
  EXPECT_FALSE(root.get_bool_or("Missing", false));
  EXPECT_DOUBLE_EQ(root.get_double_or("Missing", 1.5, 0, 2), 1.5);
  EXPECT_TRUE(root.has("Config"));
  EXPECT_FALSE(root.has("Nope"));
  EXPECT_FALSE(root.find("Nope").has_value());
  const auto config = root.at("Config").elements(1, 32);
  ASSERT_EQ(config.size(), 2U);
  EXPECT_EQ(config[0].path(), "/Config/0");
  EXPECT_EQ(config[0].get_int("FEN", 0, 15), 1);
  const auto thresholds = config[0].at("Thresholds").elements(2, 2);
  EXPECT_EQ(thresholds[1].elements()[0].as_int(0, 1023), 20);
  EXPECT_EQ(thresholds[1].elements()[0].path(), "/Config/0/Thresholds/1/0");
}

TEST(JsonConfig, EveryErrorNamesTheFileThePathAndWhatWasExpected) {
  const JsonDocument d = doc(kInstrument);
  const JsonNode root = d.root();
  const auto config = root.at("Config").elements();
  EXPECT_EQ(test::config_error_of([&] { root.get_int("WireChOffset", 0, 15); }),
            "test config 't.json': /WireChOffset: 16 is out of range; expected 0..15");
  EXPECT_EQ(test::config_error_of([&] { config[1].get_int("FEN", 0, 15); }),
            "test config 't.json': /Config/1/FEN: \"one\" is not an integer; expected an "
            "integer in 0..15");
  EXPECT_EQ(test::config_error_of([&] { root.get_int("Scale", 0, 15); }),
            "test config 't.json': /Scale: 2.5 is not an integer; expected an integer in 0..15");
  EXPECT_EQ(test::config_error_of([&] { config[1].get_int("Hybrid", 0, 1); }),
            "test config 't.json': /Config/1: missing \"Hybrid\"; expected it in this object");
  EXPECT_EQ(test::config_error_of([&] { root.get_string("WireChOffset"); }),
            "test config 't.json': /WireChOffset: 16 is not a string; expected a string");
  EXPECT_EQ(test::config_error_of([&] { root.get_bool("Detector"); }),
            "test config 't.json': /Detector: \"Freia\" is not true or false; expected true or "
            "false");
  EXPECT_EQ(test::config_error_of([&] { root.get_double("Detector", 0, 1); }),
            "test config 't.json': /Detector: \"Freia\" is not a number; expected a number in "
            "0..1");
  EXPECT_EQ(test::config_error_of([&] { root.get_double("Scale", 0, 1); }),
            "test config 't.json': /Scale: 2.5 is out of range; expected 0..1");
  EXPECT_EQ(test::config_error_of([&] { root.at("Detector").elements(); }),
            "test config 't.json': /Detector: \"Freia\" is not an array; expected an array");
  EXPECT_EQ(test::config_error_of([&] { root.at("Config").elements(3); }),
            "test config 't.json': /Config: has 2 elements; expected at least 3");
  EXPECT_EQ(test::config_error_of([&] { root.at("Config").elements(1, 1); }),
            "test config 't.json': /Config: has 2 elements; expected exactly 1");
  EXPECT_EQ(test::config_error_of([&] { root.at("Config").at("Ring"); }),
            "test config 't.json': /Config: [...] is not an object; expected an object");
  EXPECT_EQ(test::config_error_of([&] {
              config[0].check_keys({"Ring", "FEN"});
            }),
            "test config 't.json': /Config/0/Thresholds: unknown key; expected one of Ring, FEN");
  EXPECT_EQ(test::config_error_of(
                [&] { config[0].fail("cassette 3 is used twice; expected each once"); }),
            "test config 't.json': /Config/0: cassette 3 is used twice; expected each once");
  EXPECT_EQ(test::config_error_of([&] { root.get_int("WireChOffset", 0, 63); }), "");
}

TEST(JsonConfig, LargeUnsignedValuesAreRangeChecked) {
  const JsonDocument d = doc(R"({"Big": 18446744073709551615, "Neg": -5})");
  EXPECT_EQ(test::config_error_of([&] { d.root().get_int("Big", 0, 100); }),
            "test config 't.json': /Big: 18446744073709551615 is out of range; expected 0..100");
  EXPECT_EQ(d.root().get_int("Neg", -10, 0), -5);
}

TEST(JsonConfig, KeysWithSlashesAreEscapedInPaths) {
  const JsonDocument d = doc(R"({"a/b": {"c~d": "x"}})");
  EXPECT_EQ(test::config_error_of([&] { d.root().at("a/b").get_int("c~d", 0, 1); }),
            "test config 't.json': /a~1b/c~0d: \"x\" is not an integer; expected an integer in "
            "0..1");
}

TEST(JsonConfig, SyntaxErrorsGiveLineAndColumn) {
  EXPECT_EQ(test::config_error_of([] { doc("{\n  \"a\": 1,\n  \"b\" 2\n}"); }),
            "test config 't.json': not valid JSON at line 3, column 7; expected a JSON document");
}

TEST(JsonConfig, ANumberBeyondEveryTypeIsAConfigError) {
  // Found by the multiblade config fuzzer: valid syntax, but nlohmann refuses the number with
  // out_of_range (not parse_error); it must still be a ConfigError, not an uncaught exception.
  const std::string error = test::config_error_of([] { doc(R"({"a": 50E5533333222222})"); });
  EXPECT_EQ(error.rfind("test config 't.json': not usable JSON (", 0), 0U) << error;
  EXPECT_NE(error.find("expected numbers within 64-bit range"), std::string::npos) << error;
}

TEST(JsonConfig, FilesAreReadAndAMissingFileIsNamed) {
  const std::string path = ::testing::TempDir() + "json_config_test.json";
  {
    std::ofstream out(path);
    out << R"({"Detector": "Estia"})";
  }
  const JsonDocument d = JsonDocument::from_file(path, "estia geometry");
  EXPECT_EQ(d.root().get_string("Detector"), "Estia");
  EXPECT_EQ(d.name(), "estia geometry '" + path + "'");
  std::remove(path.c_str());
  EXPECT_EQ(test::config_error_of([&] { JsonDocument::from_file(path, "estia geometry"); }),
            "estia geometry '" + path + "': cannot be read; expected a readable JSON file");
}

}  // namespace
}  // namespace efu
