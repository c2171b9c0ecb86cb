// libFuzzer target multiblade_loaders_fuzz for the multiblade loaders of the facility's files
// (tests/multiblade/CMakeLists.txt; scripts/fuzz runs it; seeds in config_fuzz_seeds/). The first byte chooses the
// loader: 'c' the calibration file (against a fixed two-hybrid Freia config), anything else the
// instrument config. Any input must either load or fail with a ConfigError (exit code 2 in efu);
// no other exception, crash or sanitizer report.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "calibration.h"
#include "efu/errors.h"
#include "geometry.h"

namespace {

const efu::multiblade::Geometry& fixed_geometry() {
  static const efu::multiblade::Geometry g = efu::multiblade::Geometry::from_json(
      R"({"Detector": "Freia", "InstrumentGeometry": "Freia", "Version": 1, "Config": [
          {"CassetteNumber": 0, "Ring": 0, "FEN": 0, "Hybrid": 0, "Thresholds": [[0],[0]],
           "HybridId": "E5533333222222221111111100000000"},
          {"CassetteNumber": 1, "Ring": 0, "FEN": 0, "Hybrid": 1, "Thresholds": [[0],[0]],
           "HybridId": "E5533333222222221111111100000001"}]})",
      "fixed");
  return g;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    if (data[0] == 'c') {
      const auto c = efu::multiblade::Calibration::from_json(text, "fuzz", fixed_geometry());
      // What loads must be usable: every (hybrid, vmm, channel) entry exists.
      for (std::uint32_t v = 0; v < 2 * fixed_geometry().cassettes(); ++v) {
        (void)c.adc(v, 63, 1023);
        (void)c.tdc_ns(v, 0, 255);
      }
    } else {
      const auto g = efu::multiblade::Geometry::from_json(text, "fuzz");
      // Every channel of every configured hybrid maps inside the logical geometry.
      for (std::uint32_t c = 0; c < g.cassettes(); ++c) {
        for (auto plane : {efu::multiblade::Plane::kWire, efu::multiblade::Plane::kStrip}) {
          efu::multiblade::ChannelMapping m{};
          const auto& cc = g.cassette(c);
          if (g.map(static_cast<std::uint8_t>(cc.ring * 2), cc.fen, g.vmm_of(c, plane),
                    g.channel_of(plane, 0), m) != efu::multiblade::MapStatus::kOk) {
            std::abort();
          }
        }
      }
    }
  } catch (const efu::ConfigError&) {
    // The expected way to refuse a bad file.
  }
  return 0;
}
