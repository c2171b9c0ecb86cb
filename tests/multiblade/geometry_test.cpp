// The facility's instrument config files and pixel numbering. Expected pixel ids are worked out
// by hand from the facility's rules (docs/multiblade.md "Pixels") and written here as literals.
#include "geometry.h"

#include <string>

#include <gtest/gtest.h>

#include "efu/errors.h"
#include "multiblade_pipeline.h"
#include "test_support.h"

namespace efu::multiblade {
namespace {

using test::entry;
using test::instrument_config;

std::string error_of(const std::string& json) {
  try {
    Geometry::from_json(json, "inst.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

// The pixel of a wire readout and a strip readout, each mapped as the parser maps it.
std::uint32_t pixel_of(const Geometry& g, std::uint8_t fiber, std::uint8_t fen,
                       std::uint8_t wire_vmm, std::uint8_t wire_channel, std::uint8_t strip_vmm,
                       std::uint8_t strip_channel) {
  ChannelMapping w{}, s{};
  EXPECT_EQ(g.map(fiber, fen, wire_vmm, wire_channel, w), MapStatus::kOk);
  EXPECT_EQ(g.map(fiber, fen, strip_vmm, strip_channel, s), MapStatus::kOk);
  EXPECT_EQ(w.plane, Plane::kWire);
  EXPECT_EQ(s.plane, Plane::kStrip);
  EXPECT_EQ(w.unit, s.unit);
  return g.pixel(w.coordinate, s.coordinate);
}

TEST(Geometry, FreiaPixels) {
  // Freia: even VMM = wires, y = 32 * cassette + 47 - channel; odd VMM = strips, x = 63 -
  // channel; pixel = 1 + x + 64 * y.
  const Geometry g =
      Geometry::from_json(instrument_config("Freia", entry(0, 0, 0, 0) + "," + entry(5, 1, 1, 1) +
                                                         "," + entry(31, 10, 13, 10)),
                          "t");
  EXPECT_EQ(g.instrument(), Instrument::kFreia);
  EXPECT_EQ(detector_type(g.instrument()), 0x48);
  EXPECT_EQ(g.logical().nx, 64U);
  EXPECT_EQ(g.logical().ny, 1024U);
  // Cassette 0 on ring 0 (fibres 0 and 1), FEN 0, hybrid 0 (VMMs 0 and 1).
  EXPECT_EQ(pixel_of(g, 0, 0, 0, 47, 1, 63), 1U);
  EXPECT_EQ(pixel_of(g, 1, 0, 0, 47, 1, 0), 64U);
  EXPECT_EQ(pixel_of(g, 0, 0, 0, 16, 1, 0), 2048U);
  // Cassette 5 on ring 1 (fibre 2 or 3), FEN 1, hybrid 1 (VMMs 2 and 3): y = 160 + 7, x = 43.
  EXPECT_EQ(pixel_of(g, 3, 1, 2, 40, 3, 20), 10732U);
  // Cassette 31 on ring 10 (fibre 20 or 21), FEN 13, hybrid 10 (VMMs 20 and 21).
  EXPECT_EQ(pixel_of(g, 20, 13, 20, 47, 21, 63), 63489U);
  EXPECT_EQ(pixel_of(g, 21, 13, 20, 16, 21, 0), 65536U);
}

TEST(Geometry, AmorAndTblMbPixels) {
  // AMOR: odd VMM = wires, y = 32 * cassette + 47 - channel; even VMM = strips, x = 63 -
  // channel; 64 x 448.
  const std::string text = instrument_config(
      "AMOR", entry(0, 2, 0, 4) + "," + entry(7, 1, 0, 2) + "," + entry(13, 0, 0, 0),
      R"("MaxPulseTimeNS": 2071428570, "MaxGapWire": 1, "MaxGapStrip": 1,)");
  Geometry g = Geometry::from_json(text, "t");
  EXPECT_EQ(g.instrument(), Instrument::kAmor);
  EXPECT_EQ(detector_type(g.instrument()), 0x48);
  EXPECT_EQ(g.logical().ny, 448U);
  EXPECT_EQ(pixel_of(g, 4, 0, 9, 47, 8, 63), 1U);      // cassette 0: ring 2, hybrid 4
  EXPECT_EQ(pixel_of(g, 2, 0, 5, 30, 4, 10), 15478U);  // cassette 7: y = 224 + 17, x = 53
  EXPECT_EQ(pixel_of(g, 0, 0, 1, 16, 0, 0), 28672U);   // cassette 13: y = 447, x = 63
  EXPECT_EQ(g.max_gap_wire(), 1U);
  EXPECT_EQ(g.max_pulse_time_ns(), 2071428570U);
  // TBL-MB runs the AMOR layout under its own type byte.
  g.select_instrument(Instrument::kTblMb);
  EXPECT_EQ(detector_type(g.instrument()), 0x49);
  EXPECT_EQ(pixel_of(g, 0, 0, 1, 16, 0, 0), 28672U);
}

TEST(Geometry, EstiaPixels) {
  // Estia: odd VMM = wires along x, x = 32 * (cassette % 48) + channel - 16; even VMM = strips,
  // y = 64 * (cassette / 48) + 63 - channel; 1536 x 128.
  const Geometry g = Geometry::from_json(
      instrument_config("Estia", entry(0, 0, 0, 0) + "," + entry(47, 3, 1, 5) + "," +
                                     entry(48, 4, 0, 0) + "," + entry(50, 4, 0, 2) + "," +
                                     entry(95, 7, 1, 5)),
      "t");
  EXPECT_EQ(g.instrument(), Instrument::kEstia);
  EXPECT_EQ(detector_type(g.instrument()), 0x4C);
  EXPECT_EQ(g.logical().nx, 1536U);
  EXPECT_EQ(g.logical().ny, 128U);
  EXPECT_EQ(pixel_of(g, 0, 0, 1, 16, 0, 63), 1U);
  EXPECT_EQ(pixel_of(g, 6, 1, 11, 47, 10, 63), 1536U);    // cassette 47: x = 1535, y = 0
  EXPECT_EQ(pixel_of(g, 8, 0, 1, 16, 0, 0), 195073U);     // cassette 48: x = 0, y = 127
  EXPECT_EQ(pixel_of(g, 9, 0, 5, 20, 4, 10), 179781U);    // cassette 50: x = 68, y = 117
  EXPECT_EQ(pixel_of(g, 15, 1, 11, 47, 10, 0), 196608U);  // cassette 95: x = 1535, y = 127
}

TEST(Geometry, GeneratorInverseMatchesTheMapping) {
  for (const char* name : {"Freia", "AMOR", "Estia"}) {
    const Geometry g = Geometry::from_json(
        instrument_config(name, entry(3, 1, 0, 1) + "," + entry(12, 4, 2, 3)), "t");
    for (std::uint32_t c = 0; c < g.cassettes(); ++c) {
      for (Plane plane : {Plane::kWire, Plane::kStrip}) {
        const std::uint32_t n = plane == Plane::kWire ? kWiresPerCassette : kStripsPerCassette;
        for (std::uint32_t local = 0; local < n; ++local) {
          ChannelMapping m{};
          ASSERT_EQ(g.map(static_cast<std::uint8_t>(g.cassette(c).ring * 2), g.cassette(c).fen,
                          g.vmm_of(c, plane), g.channel_of(plane, local), m),
                    MapStatus::kOk);
          EXPECT_EQ(m.plane, plane);
          EXPECT_EQ(m.unit, c);
          EXPECT_EQ(m.coordinate, g.coordinate_of(c, plane, local)) << name;
        }
      }
    }
  }
}

TEST(Geometry, ReportsWhichPartOfTheAddressIsUnknown) {
  // Thresholds: even VMM 7, odd VMM 9.
  const Geometry g = Geometry::from_json(instrument_config("Freia", entry(0, 1, 2, 3, 7, 9)), "t");
  ChannelMapping m{};
  EXPECT_EQ(g.map(0, 2, 6, 20, m), MapStatus::kFiber);   // ring 0 unused
  EXPECT_EQ(g.map(22, 2, 6, 20, m), MapStatus::kFiber);  // ring 11 beyond the facility's 0..10
  EXPECT_EQ(g.map(2, 1, 6, 20, m), MapStatus::kFen);
  EXPECT_EQ(g.map(3, 14, 6, 20, m), MapStatus::kFen);
  EXPECT_EQ(g.map(3, 2, 4, 20, m), MapStatus::kVmm);      // hybrid 2 not configured
  EXPECT_EQ(g.map(3, 2, 30, 20, m), MapStatus::kVmm);     // hybrid 15
  EXPECT_EQ(g.map(3, 2, 6, 15, m), MapStatus::kChannel);  // wires: channels 16..47
  EXPECT_EQ(g.map(3, 2, 6, 48, m), MapStatus::kChannel);
  EXPECT_EQ(g.map(3, 2, 7, 64, m), MapStatus::kChannel);  // strips: 0..63
  ASSERT_EQ(g.map(3, 2, 6, 16, m), MapStatus::kOk);
  EXPECT_EQ(m.threshold, 7);
  EXPECT_EQ(m.vmm_index, 0);
  ASSERT_EQ(g.map(2, 2, 7, 0, m), MapStatus::kOk);
  EXPECT_EQ(m.threshold, 9);
  EXPECT_EQ(m.vmm_index, 1);
}

TEST(Geometry, ReadsEveryField) {
  const Geometry g = Geometry::from_json(
      R"({"Detector": "Freia", "InstrumentGeometry": "freia", "Version": 1, "Comment": "c",
          "Date": "d", "Info": "i", "History": ["h"], "WireChOffset": 8,
          "MaxPulseTimeNS": 71428580, "MaxGapWire": 2, "MaxGapStrip": 3,
          "MaxClusteringTimeGap": 700, "MaxMatchingTimeGap": 600,
          "Config": [{"CassetteNumber": 4, "Ring": 9, "FEN": 12, "Hybrid": 7,
                      "Thresholds": [[11], [22]],
                      "HybridId": "E5533333222222221111111100000004"}]})",
      "t");
  EXPECT_EQ(g.instrument(), Instrument::kFreia);
  EXPECT_EQ(g.wire_channel_offset(), 8U);
  EXPECT_EQ(g.max_pulse_time_ns(), 71428580U);
  EXPECT_EQ(g.max_gap_wire(), 2U);
  EXPECT_EQ(g.max_gap_strip(), 3U);
  EXPECT_EQ(g.max_clustering_time_gap_ns(), 700U);
  EXPECT_EQ(g.max_matching_time_gap_ns(), 600U);
  ASSERT_EQ(g.cassettes(), 1U);
  const CassetteConfig& c = g.cassette(0);
  EXPECT_EQ(c.cassette_number, 4U);
  EXPECT_EQ(c.ring, 9);
  EXPECT_EQ(c.fen, 12);
  EXPECT_EQ(c.hybrid, 7);
  EXPECT_EQ(c.thresholds[0], 11);
  EXPECT_EQ(c.thresholds[1], 22);
  EXPECT_EQ(c.hybrid_id, "E5533333222222221111111100000004");
  // WireChOffset 8: wires are channels 8..39.
  ChannelMapping m{};
  EXPECT_EQ(g.map(18, 12, 14, 7, m), MapStatus::kChannel);
  ASSERT_EQ(g.map(18, 12, 14, 8, m), MapStatus::kOk);
  EXPECT_EQ(m.coordinate, 4 * 32 + 31);
  EXPECT_EQ(g.map(18, 12, 14, 40, m), MapStatus::kChannel);
}

TEST(Geometry, DefaultsOfOptionalFields) {
  const Geometry g = Geometry::from_json(
      R"({"Detector": "Freia", "InstrumentGeometry": "Freia", "Version": 1,
          "Config": [{"CassetteNumber": 0, "Ring": 0, "FEN": 0, "Hybrid": 0,
                      "Thresholds": [[0], [0]], "HybridId": "E5533333222222221111111100000000"}]})",
      "t");
  EXPECT_EQ(g.wire_channel_offset(), 16U);
  EXPECT_EQ(g.max_pulse_time_ns(), 357142855U);
  EXPECT_EQ(g.max_gap_wire(), 0U);
  EXPECT_EQ(g.max_gap_strip(), 0U);
  EXPECT_EQ(g.max_clustering_time_gap_ns(), 0U);
  EXPECT_EQ(g.max_matching_time_gap_ns(), 0U);
}

TEST(Geometry, ShippedConfigsLoad) {
  const std::string dir = std::string(EFU_SOURCE_DIR) + "/modules/multiblade/configs/";
  const Geometry freia = Geometry::from_file(dir + "freia.json");
  EXPECT_EQ(freia.cassettes(), 32U);
  EXPECT_EQ(freia.instrument(), Instrument::kFreia);
  const Geometry estia = Geometry::from_file(dir + "estia.json");
  EXPECT_EQ(estia.cassettes(), 96U);
  EXPECT_EQ(estia.instrument(), Instrument::kEstia);
  const Geometry amor = Geometry::from_file(dir + "amor.json");
  EXPECT_EQ(amor.cassettes(), 14U);
  EXPECT_EQ(amor.instrument(), Instrument::kAmor);
  Geometry tblmb = Geometry::from_file(dir + "tblmb.json");
  tblmb.select_instrument(Instrument::kTblMb);
  EXPECT_EQ(detector_type(tblmb.instrument()), 0x49);
  EXPECT_EQ(Geometry::from_file(default_geometry_path()).cassettes(), 32U);
}

TEST(Geometry, ReadsTheFacilitysOwnFilesWhenPresent) {
  // The reference system's config files, read unchanged, if its snapshot is on this machine
  // (CI has none: then there is nothing to check).
  for (const char* name : {"freia.json", "estia_config.json", "amor.json", "tblmb.json"}) {
    const std::string text = test::reference_file(name);
    if (text.empty()) continue;
    const Geometry g = Geometry::from_json(text, name);
    EXPECT_GT(g.cassettes(), 0U) << name;
  }
}

TEST(Geometry, SelectingAnInstrumentChecksTheGeometry) {
  Geometry estia = Geometry::from_json(instrument_config("Estia", entry(0, 0, 0, 0)), "e.json");
  EXPECT_THROW(estia.select_instrument(Instrument::kFreia), ConfigError);
  EXPECT_THROW(estia.select_instrument(Instrument::kTblMb), ConfigError);
  Geometry freia = Geometry::from_json(instrument_config("Freia", entry(0, 0, 0, 0)), "f.json");
  try {
    freia.select_instrument(Instrument::kEstia);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "multiblade instrument config 'f.json': /InstrumentGeometry: \"Freia\" cannot "
                 "run as instrument Estia; expected Estia");
  }
  Geometry amor = Geometry::from_json(instrument_config("AMOR", entry(0, 0, 0, 0)), "a.json");
  amor.select_instrument(Instrument::kFreia);  // the facility's Freia EFU runs AMOR files too
  EXPECT_EQ(detector_type(amor.instrument()), 0x48);
}

struct BadCase {
  const char* what;
  std::string json;
  const char* message;
};

TEST(Geometry, EachBadFieldNamesTheFileThePathAndWhatWasExpected) {
  const std::string e0 = entry(0, 0, 0, 0);
  auto with = [](const std::string& field) {
    return R"({"Detector": "Freia", "InstrumentGeometry": "Freia", "Version": 1, )" + field +
           R"(, "Config": [)" + entry(0, 0, 0, 0) + "]}";
  };
  auto one = [](const std::string& e) { return instrument_config("Freia", e); };
  const std::string id = R"("HybridId": "E5533333222222221111111100000000")";
  const BadCase cases[] = {
      {"not an object", "[1]", "/: "},
      {"Detector missing",
       R"({"InstrumentGeometry": "Freia", "Version": 1, "Config": [)" + e0 + "]}",
       "/: missing \"Detector\""},
      {"Detector",
       R"({"Detector": "Loki", "InstrumentGeometry": "Freia", "Version": 1, "Config": [)" + e0 +
           "]}",
       "/Detector: \"Loki\" is not a Multi-Blade detector; expected \"Freia\""},
      {"InstrumentGeometry", instrument_config("Nmx", e0),
       "/InstrumentGeometry: \"Nmx\" is unknown; expected Freia, Estia or AMOR"},
      {"Version",
       R"({"Detector": "Freia", "InstrumentGeometry": "Freia", "Version": 2, "Config": [)" + e0 +
           "]}",
       "/Version: is not 1; expected version 1"},
      {"WireChOffset", with(R"("WireChOffset": 33)"),
       "/WireChOffset: 33 is out of range; expected 0..32"},
      {"MaxPulseTimeNS", with(R"("MaxPulseTimeNS": 0)"),
       "/MaxPulseTimeNS: 0 is out of range; expected 1..4294967295"},
      {"MaxGapWire", with(R"("MaxGapWire": -1)"),
       "/MaxGapWire: -1 is out of range; expected 0..32"},
      {"MaxGapStrip", with(R"("MaxGapStrip": "1")"), "/MaxGapStrip: \"1\" is not an integer"},
      {"MaxClusteringTimeGap", with(R"("MaxClusteringTimeGap": 0)"),
       "/MaxClusteringTimeGap: 0 is out of range; expected 1..1000000000"},
      {"MaxMatchingTimeGap", with(R"("MaxMatchingTimeGap": 1.5)"),
       "/MaxMatchingTimeGap: 1.5 is not an integer"},
      {"Config missing", R"({"Detector": "Freia", "InstrumentGeometry": "Freia", "Version": 1})",
       "/: missing \"Config\""},
      {"Config empty", instrument_config("Freia", ""), "/Config: has 0 elements; expected"},
      {"Config entry", one("7"), "/Config/0: is not an object; expected a cassette entry"},
      {"CassetteNumber", one(entry(32, 0, 0, 0)),
       "/Config/0/CassetteNumber: 32 is out of range; expected 0..31"},
      {"CassetteNumber twice", one(entry(1, 0, 0, 0) + "," + entry(1, 0, 0, 1)),
       "/Config/1/CassetteNumber: cassette 1 is used twice; expected each cassette once"},
      {"Ring", one(entry(0, 11, 0, 0)), "/Config/0/Ring: 11 is out of range; expected 0..10"},
      {"FEN", one(entry(0, 0, 14, 0)), "/Config/0/FEN: 14 is out of range; expected 0..13"},
      {"Hybrid", one(entry(0, 0, 0, 11)), "/Config/0/Hybrid: 11 is out of range; expected 0..10"},
      {"Hybrid twice", one(entry(0, 0, 0, 0) + "," + entry(1, 0, 0, 0)),
       "/Config/1/Hybrid: ring 0, FEN 0, hybrid 0 is used twice; expected each hybrid once"},
      {"HybridId",
       one(R"({"CassetteNumber": 0, "Ring": 0, "FEN": 0, "Hybrid": 0, "Thresholds": [[0],[0]], "HybridId": "E55"})"),
       "/Config/0/HybridId: \"E55\" has 3 characters; expected 32"},
      {"HybridId twice",
       one(R"({"CassetteNumber": 0, "Ring": 0, "FEN": 0, "Hybrid": 0, "Thresholds": [[0],[0]], )" +
           id +
           R"(}, {"CassetteNumber": 1, "Ring": 0, "FEN": 0, "Hybrid": 1, "Thresholds": [[0],[0]], )" +
           id + "}"),
       "/Config/1/HybridId: \"E5533333222222221111111100000000\" is used twice; expected each "
       "hybrid once"},
      {"Thresholds shape",
       one(R"({"CassetteNumber": 0, "Ring": 0, "FEN": 0, "Hybrid": 0, "Thresholds": [[0]], )" + id +
           "}"),
       "/Config/0/Thresholds: has 1 elements; expected"},
      {"Thresholds per channel",
       one(R"({"CassetteNumber": 0, "Ring": 0, "FEN": 0, "Hybrid": 0, "Thresholds": [[0, 1],[0]], )" +
           id + "}"),
       "/Config/0/Thresholds/0: has 2 elements; expected"},
      {"Threshold value", one(entry(0, 0, 0, 0, 0, 1024)),
       "/Config/0/Thresholds/1/0: 1024 is out of range; expected 0..1023"},
      {"unknown key",
       one(R"({"CassetteNumber": 0, "Ring": 0, "FEN": 0, "Hybrid": 0, "Thresholds": [[0],[0]], "Fen": 1, )" +
           id + "}"),
       "/Config/0/Fen: unknown key"},
      {"Ring missing",
       one(R"({"CassetteNumber": 0, "FEN": 0, "Hybrid": 0, "Thresholds": [[0],[0]], )" + id + "}"),
       "/Config/0: missing \"Ring\""},
  };
  for (const BadCase& c : cases) {
    const std::string error = error_of(c.json);
    EXPECT_EQ(error.rfind("multiblade instrument config 'inst.json': ", 0), 0U)
        << c.what << ": " << error;
    EXPECT_NE(error.find(c.message), std::string::npos) << c.what << ": " << error;
    EXPECT_NE(error.find("expected"), std::string::npos) << c.what << ": " << error;
  }
}

TEST(Geometry, UnreadableFileIsAConfigError) {
  EXPECT_THROW(Geometry::from_file("/nonexistent/inst.json"), ConfigError);
}

}  // namespace
}  // namespace efu::multiblade
