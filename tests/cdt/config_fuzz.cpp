// libFuzzer target for the CDT instrument file loader (tests/cdt/CMakeLists.txt says how to
// build it; seeds in tests/fuzz/corpus/cdt_config/): the input is the file's text. A bad file
// must be one ConfigError, never another exception or a crash; a file that loads must map any
// readout to a pixel inside the module type's own range, or to 0 with a reason.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "config.h"
#include "efu/errors.h"
#include "geometry.h"

namespace {

void check(const efu::cdt::CdtConfig& config, std::uint8_t spice) {
  const std::uint8_t values[] = {0, 15, 16, 31, 32, 63, 64, 127, 128, 255, spice};
  efu::cdt::CdtReadout r;
  for (unsigned fiber = 0; fiber < 26; ++fiber) {
    for (unsigned fen = 0; fen < 14; ++fen) {
      r.fiber = static_cast<std::uint8_t>(fiber);
      r.fen = static_cast<std::uint8_t>(fen);
      const bool in_table = fiber / 2 < efu::cdt::kRings && fen < efu::cdt::kFens;
      const efu::cdt::Module* m = in_table ? &config.module(fiber / 2, fen) : nullptr;
      for (unsigned unit = 0; unit < 8; ++unit) {
        for (const std::uint8_t a : values) {
          for (const std::uint8_t c : values) {
            r.unit = static_cast<std::uint8_t>(unit);
            r.anode = a;
            r.cathode = c;
            const efu::cdt::PixelResult p = efu::cdt::pixel(config.modules, r);
            if ((p.status == efu::cdt::PixelStatus::kOk) != (p.pixel != 0)) std::abort();
            if (p.pixel == 0) continue;
            if (m == nullptr || !m->configured) std::abort();
            const efu::cdt::ModuleGeometry& g = efu::cdt::geometry(m->type);
            if (p.pixel <= g.offset || p.pixel > g.offset + g.grid.pixel_count()) std::abort();
            if (efu::cdt::info(m->type).instrument != config.instrument) std::abort();
          }
        }
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const efu::cdt::CdtConfig config = efu::cdt::CdtConfig::from_text(text, "fuzz.json");
    check(config, size > 0 ? data[size / 2] : 0);
  } catch (const efu::ConfigError&) {
  }
  return 0;
}
