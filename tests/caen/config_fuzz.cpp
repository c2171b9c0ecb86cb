// libFuzzer target for the CAEN config and calibration loaders (tests/caen/CMakeLists.txt says
// how to build it; seeds in tests/fuzz/corpus/caen_config/): the first byte picks the loader, the rest is
// the file's text. A bad file must be one ConfigError, never another exception or a crash; a
// config that loads must map any readout without reading outside its tables.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "calibration.h"
#include "config.h"
#include "efu/errors.h"
#include "pixel_map.h"

namespace {

/// A zero calibration with the group size the instrument's formulas need.
std::string calibration_for(efu::caen::Instrument instrument, int groups) {
  const int size = instrument == efu::caen::Instrument::kLoki      ? 7
                   : instrument == efu::caen::Instrument::kBifrost ? 3
                                                                   : 1;
  std::string intervals = "[";
  for (int u = 0; u < size; ++u) {
    intervals += std::string(u ? "," : "") + "[" + std::to_string(u / double(size)) + "," +
                 std::to_string((u + 0.9) / size) + "]";
  }
  intervals += "]";
  std::string polys = "[";
  for (int u = 0; u < size; ++u) polys += std::string(u ? "," : "") + "[0.01,0.02,0,0]";
  polys += "]";
  std::string s = std::string(R"({"Calibration":{"instrument":")") +
                  efu::caen::instrument_name(instrument) + R"(","groups":)" +
                  std::to_string(groups) + R"(,"groupsize":)" + std::to_string(size) +
                  R"(,"Parameters":[)";
  for (int g = 0; g < groups; ++g) {
    s += std::string(g ? "," : "") + R"({"groupindex":)" + std::to_string(g) + R"(,"intervals":)" +
         intervals + R"(,"polynomials":)" + polys + "}";
  }
  return s + "]}}";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    if (data[0] & 1) {
      efu::caen::Calibration::from_text(text, "fuzz.json", data[0] & 2 ? "loki" : "bifrost");
      return 0;
    }
    const efu::caen::CaenConfig config = efu::caen::CaenConfig::from_text(text, "fuzz.json");
    static const efu::caen::Calibration kCalibrations[] = {
        efu::caen::Calibration::from_text(calibration_for(efu::caen::Instrument::kLoki, 40), "c",
                                          "loki"),
        efu::caen::Calibration::from_text(calibration_for(efu::caen::Instrument::kBifrost, 40), "c",
                                          "bifrost"),
        efu::caen::Calibration::from_text(calibration_for(efu::caen::Instrument::kCspec, 4), "c",
                                          "cspec"),
        efu::caen::Calibration::from_text(calibration_for(efu::caen::Instrument::kMiracles, 4), "c",
                                          "miracles"),
    };
    const efu::caen::PixelMap map(config, kCalibrations[static_cast<int>(config.instrument)], 0);
    // Every ring, FEN and group the readout bytes can name, with amplitudes from the input.
    efu::caen::CaenReadout r;
    r.a = static_cast<std::uint16_t>(size * 977);
    r.b = static_cast<std::uint16_t>(size * 131);
    r.c = static_cast<std::uint16_t>(size * 17);
    r.d = static_cast<std::uint16_t>(size * 3);
    for (unsigned fiber = 0; fiber <= efu::caen::kMaxFiber; ++fiber) {
      for (unsigned fen = 0; fen <= efu::caen::kMaxFen; fen += 3) {
        for (unsigned group = 0; group < 256; group += 7) {
          r.fiber = static_cast<std::uint8_t>(fiber);
          r.fen = static_cast<std::uint8_t>(fen);
          r.group = static_cast<std::uint8_t>(group);
          const efu::caen::MapResult m = map.map(r);
          if ((m.status == efu::caen::MapStatus::kOk) != (m.pixel != 0)) std::abort();
          if (m.pixel > map.pixel_count()) std::abort();
        }
      }
    }
  } catch (const efu::ConfigError&) {
  }
  return 0;
}
