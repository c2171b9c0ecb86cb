// libFuzzer target trex_loaders_fuzz for the trex loaders of the facility's files
// (tests/trex/CMakeLists.txt; scripts/fuzz runs it; seeds in tests/fuzz/corpus/trex_loaders/,
// written by tests/trex/make_fuzz_seeds.py). The first byte chooses the loader: 'c' the VMM3a
// calibration file (against a fixed two-hybrid TREX config), anything else the instrument config,
// whose channel map is then built and checked. Any input must either load or fail with a
// ConfigError (exit code 2 in efu); no other exception, crash or sanitizer report.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "config.h"
#include "efu/errors.h"
#include "efu/vmm3a/hybrid_calibration.h"
#include "geometry.h"
#include "trex_pipeline.h"

namespace {

const efu::trex::TrexConfig& fixed_config() {
  static const efu::trex::TrexConfig c = efu::trex::load_config_json(
      R"({"Detector": "TREX", "InstrumentGeometry": "TREX",
          "Vessel_Config": {"0": {"NumGrids": 140, "Rotation": false}},
          "Config": [
          {"Ring": 0, "VesselId": "0", "FEN": 0, "Hybrid": 0,
           "HybridId": "E5533333222222221111111100000000"},
          {"Ring": 0, "VesselId": "0", "FEN": 0, "Hybrid": 1,
           "HybridId": "E5533333222222221111111100000001"}]})",
      "fixed");
  return c;
}

// Every channel of every configured hybrid maps as channel_place() says, on its own unit.
void check_map(const efu::trex::TrexConfig& c) {
  const efu::trex::ChannelMap map(c);
  for (const efu::trex::HybridEntry& h : c.hybrids) {
    for (std::uint32_t asic = 0; asic < 2; ++asic) {
      for (std::uint32_t ch = 0; ch < efu::vmm3a::kChannelsPerVmm; ++ch) {
        efu::vmm3a::ChannelMapping m{};
        const auto status = map.map(static_cast<std::uint8_t>(h.ring * 2), h.fen,
                                    static_cast<std::uint8_t>(h.hybrid * 2 + asic),
                                    static_cast<std::uint8_t>(ch), m);
        const efu::trex::ChannelPlace p = efu::trex::channel_place(c, h, asic, ch);
        if ((status == efu::vmm3a::MapStatus::kOk) != p.valid) std::abort();
        if (p.valid && (m.coordinate != p.coordinate || m.unit != h.unit)) std::abort();
      }
    }
  }
  (void)efu::trex::ChannelMap::outside_volume_warning(c);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    if (data[0] == 'c') {
      const auto hybrids = efu::trex::calibration_hybrids(fixed_config());
      const auto c = efu::vmm3a::HybridCalibration::from_json(text, "fuzz", hybrids);
      for (std::uint32_t v = 0; v < 2 * hybrids.ids.size(); ++v) {
        (void)c.adc(v, 63, 1023);
        (void)c.tdc_ns(v, 0, 255);
      }
    } else {
      check_map(efu::trex::load_config_json(text, "fuzz"));
    }
  } catch (const efu::ConfigError&) {
    // The expected way to refuse a bad file.
  }
  return 0;
}
