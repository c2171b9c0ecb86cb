// libFuzzer target for NMX's loaders on their own: the first byte picks the instrument config
// loader (even) or the calibration loader against the shipped nmx.json (odd); the rest is the
// file's text. Each must load or throw efu::ConfigError; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "config.h"
#include "efu/errors.h"
#include "efu/vmm3a/hybrid_calibration.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const efu::nmx::Config shipped =
      efu::nmx::Config::from_file(std::string(EFU_NMX_CONFIGS_DIR) + "/nmx.json");
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    if ((data[0] & 1U) == 0) {
      const efu::nmx::Config c = efu::nmx::Config::from_json(text, "fuzz.json");
      efu::vmm3a::ChannelMapping m{};
      for (std::uint8_t fen = 0; fen < 16; ++fen) c.map(0, fen, 0, 0, m);
    } else {
      efu::vmm3a::HybridCalibration::from_json(text, "fuzz.json", shipped.calibration_hybrids());
    }
  } catch (const efu::ConfigError&) {
  }
  return 0;
}
