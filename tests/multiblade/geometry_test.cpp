#include "geometry.h"

#include <string>

#include <gtest/gtest.h>

#include "efu/errors.h"
#include "multiblade_pipeline.h"

namespace efu::multiblade {
namespace {

const char* const kTwoCassettes = R"({
  "name": "t", "wires_per_cassette": 4, "strips_per_cassette": 8,
  "cassettes": [
    {"id": 1, "wires": {"fiber": 2, "fen": 1, "vmm": 0, "first_channel": 10},
              "strips": {"fiber": 2, "fen": 1, "vmm": 1, "first_channel": 0}},
    {"id": 0, "wires": {"fiber": 0, "fen": 0, "vmm": 3, "first_channel": 0},
              "strips": {"fiber": 0, "fen": 0, "vmm": 3, "first_channel": 4}}
  ]})";

std::string error_of(const std::string& json) {
  try {
    Geometry::from_json(json, "g.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(Geometry, MapsChannelsToCassettePlaneAndCoordinate) {
  const Geometry g = Geometry::from_json(kTwoCassettes, "t");
  EXPECT_EQ(g.cassettes(), 2U);
  ChannelMapping m{};
  ASSERT_EQ(g.map(2, 1, 0, 12, m), MapStatus::kOk);
  EXPECT_EQ(m.cassette, 1);
  EXPECT_EQ(m.plane, Plane::kWire);
  EXPECT_EQ(m.coordinate, 2);
  ASSERT_EQ(g.map(0, 0, 3, 4 + 7, m), MapStatus::kOk);
  EXPECT_EQ(m.cassette, 0);
  EXPECT_EQ(m.plane, Plane::kStrip);
  EXPECT_EQ(m.coordinate, 7);
  ASSERT_EQ(g.map(0, 0, 3, 3, m), MapStatus::kOk);  // wires and strips share one VMM here
  EXPECT_EQ(m.plane, Plane::kWire);
}

TEST(Geometry, ReportsWhichPartOfTheAddressIsUnknown) {
  const Geometry g = Geometry::from_json(kTwoCassettes, "t");
  ChannelMapping m{};
  EXPECT_EQ(g.map(3, 0, 0, 0, m), MapStatus::kFiber);
  EXPECT_EQ(g.map(1, 0, 0, 0, m), MapStatus::kFen);  // fiber 1 exists in the table, unused
  EXPECT_EQ(g.map(2, 0, 0, 0, m), MapStatus::kFen);
  EXPECT_EQ(g.map(2, 5, 0, 0, m), MapStatus::kFen);
  EXPECT_EQ(g.map(2, 1, 2, 0, m), MapStatus::kVmm);
  EXPECT_EQ(g.map(2, 1, 9, 0, m), MapStatus::kVmm);
  EXPECT_EQ(g.map(2, 1, 0, 9, m), MapStatus::kChannel);   // below first_channel
  EXPECT_EQ(g.map(2, 1, 0, 14, m), MapStatus::kChannel);  // past the 4 wires
  EXPECT_EQ(g.map(2, 1, 0, 64, m), MapStatus::kChannel);
  EXPECT_EQ(g.map(2, 1, 0, 255, m), MapStatus::kChannel);
}

TEST(Geometry, PixelsStackCassettesAlongY) {
  const Geometry g = Geometry::from_json(kTwoCassettes, "t");
  EXPECT_EQ(g.pixel(0, 0, 0), 1U);
  EXPECT_EQ(g.pixel(0, 7, 0), 8U);
  EXPECT_EQ(g.pixel(0, 0, 1), 9U);
  EXPECT_EQ(g.pixel(1, 0, 0), 1U + 4 * 8);
  EXPECT_EQ(g.pixel(1, 7, 3), g.pixel_count());
}

TEST(Geometry, ShippedDemoLoads) {
  const Geometry g = Geometry::from_file(default_geometry_path());
  EXPECT_EQ(g.cassettes(), 4U);
  EXPECT_EQ(g.wires(), 32U);
  EXPECT_EQ(g.strips(), 64U);
  EXPECT_EQ(g.pixel_count(), 4U * 32 * 64);
}

TEST(Geometry, ErrorsNameTheFileTheKeyAndWhatWasExpected) {
  EXPECT_EQ(error_of(replaced(kTwoCassettes, R"("wires_per_cassette": 4,)", "")),
            "multiblade geometry 'g.json': wires_per_cassette: is missing");
  EXPECT_EQ(
      error_of(
          replaced(kTwoCassettes, R"("strips_per_cassette": 8)", R"("strips_per_cassette": 65)")),
      "multiblade geometry 'g.json': strips_per_cassette: '65' is out of range; expected 1..64");
  EXPECT_EQ(error_of(replaced(kTwoCassettes, R"("vmm": 3, "first_channel": 0)",
                              R"("vmm": "3", "first_channel": 0)")),
            "multiblade geometry 'g.json': cassettes[1].wires.vmm: '\"3\"' is not an integer; "
            "expected 0..15");
  EXPECT_EQ(error_of(replaced(kTwoCassettes, R"("first_channel": 10)", R"("first_channel": 61)")),
            "multiblade geometry 'g.json': cassettes[0].wires.first_channel: '61' is out of "
            "range; expected 0..60");
  EXPECT_EQ(error_of(replaced(kTwoCassettes, R"("id": 1)", R"("id": 0)")),
            "multiblade geometry 'g.json': cassettes[1].id: '0' is used twice; expected unique "
            "ids 0..n-1");
  EXPECT_NE(error_of(replaced(kTwoCassettes, R"("vmm": 3, "first_channel": 4)",
                              R"("vmm": 3, "first_channel": 2)"))
                .find("channel 2 of fiber 0 fen 0 vmm 3 is already mapped to cassette 0"),
            std::string::npos);
  EXPECT_NE(error_of("{ nope").find("(document): is not valid JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"wires_per_cassette": 4, "strips_per_cassette": 8, "cassettes": []})")
                .find("cassettes: expected an array of 1..254 cassettes"),
            std::string::npos);
}

TEST(Geometry, UnreadableFileIsAConfigError) {
  try {
    Geometry::from_file("/nonexistent/geometry.json");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "--geometry: '/nonexistent/geometry.json' cannot be read; expected a readable "
                 "JSON file");
  }
}

}  // namespace
}  // namespace efu::multiblade
