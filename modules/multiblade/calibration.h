// VMM3a calibration in the facility's format (docs/multiblade.md "Calibration"): per channel of
// each VMM of each hybrid, an ADC offset and slope and a TDC offset and slope, keyed by HybridId.
// Loaded once at start and looked up per readout by the mapping's vmm_index.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "geometry.h"

namespace efu::multiblade {

struct ChannelCalibration {
  double adc_offset;
  double adc_slope;
  double tdc_offset;
  double tdc_slope;
};

/// What a calibration file that lacks some hybrids of the instrument config means.
enum class MissingHybrids : std::uint8_t {
  kUncalibrated,  // they run with the identity parameters, as the reference does (the default)
  kRefuse,        // --calibration-strict on: a ConfigError naming the first one
};

class Calibration {
 public:
  /// Identity ADC calibration and no time correction (calibration off).
  Calibration() = default;
  /// Throws ConfigError naming the file, the JSON path and what was expected. A hybrid of
  /// `geometry` without an entry keeps offset 0 and slope 1 for ADC and TDC (listed by
  /// uncalibrated()), or is an error with MissingHybrids::kRefuse.
  static Calibration from_file(const std::string& path, const Geometry& geometry,
                               MissingHybrids missing = MissingHybrids::kUncalibrated);
  static Calibration from_json(std::string_view text, const std::string& origin,
                               const Geometry& geometry,
                               MissingHybrids missing = MissingHybrids::kUncalibrated);

  bool enabled() const noexcept { return !channels_.empty(); }
  const ChannelCalibration& channel(std::uint32_t vmm_index, std::uint32_t channel) const noexcept {
    return channels_[vmm_index * kChannelsPerVmm + channel];
  }

  /// Config[] indices (Geometry::cassette()) of the hybrids the file has no entry for, ascending.
  const std::vector<std::uint32_t>& uncalibrated() const noexcept { return uncalibrated_; }
  /// The one start-up warning naming every uncalibrated hybrid by cassette number and HybridId;
  /// empty if the file calibrates them all.
  std::string uncalibrated_warning(const Geometry& geometry) const;

  /// The facility's ADC correction: (adc - offset) * slope, clamped to 0..1023 and truncated.
  std::uint16_t adc(std::uint32_t vmm_index, std::uint32_t ch, std::uint16_t raw) const noexcept {
    if (!enabled()) return raw;
    const ChannelCalibration& c = channel(vmm_index, ch);
    double v = (raw - c.adc_offset) * c.adc_slope;
    v = v < 0.0 ? 0.0 : (v > 1023.0 ? 1023.0 : v);
    return static_cast<std::uint16_t>(v);
  }
  /// The facility's TDC time correction in ns, added to the readout time:
  /// (1.5 * 22.72 - 60 * tdc / 255 - offset) * slope, truncated towards zero.
  std::int64_t tdc_ns(std::uint32_t vmm_index, std::uint32_t ch, std::uint8_t tdc) const noexcept {
    if (!enabled()) return 0;
    const ChannelCalibration& c = channel(vmm_index, ch);
    const double tdc_ns = 1.5 * 22.72 - 60.0 * tdc / 255;
    return static_cast<std::int64_t>((tdc_ns - c.tdc_offset) * c.tdc_slope);
  }

 private:
  std::vector<ChannelCalibration> channels_;  // (cassette * 2 + vmm) * 64 + channel
  std::vector<std::uint32_t> uncalibrated_;
  std::string file_;  // the path (or test origin) the warning names
};

}  // namespace efu::multiblade
