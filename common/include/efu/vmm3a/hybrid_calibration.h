// VMM3a calibration in the facility's format, for any VMM3a plugin (docs/plugins.md "VMM3a
// detectors"): per channel of each VMM of each hybrid, an ADC offset and slope and a TDC offset
// and slope, keyed by the hybrid's HybridId. Loaded once at start (a plugin's init()) and looked
// up per readout by the hybrid's index in the plugin's own tables.
//
// The file (the reference's VMMHybridCalibration files):
//   {"Detector": "<name>", "Version": 1, "Calibrations": [
//     {"VMMHybridCalibration": {"HybridId": "<32 characters>", "CalibrationDate": "...",
//        "vmm0": {"Settings": ..., "adc_offset": [64], "adc_slope": [64],
//                 "tdc_offset": [64], "tdc_slope": [64]},
//        "vmm1": {...}}}, ...]}
// Every HybridId must be one of the instrument config's, once. A hybrid the file leaves out keeps
// offset 0 and slope 1 (the reference's initial values), or is refused (MissingHybrids).
//
//   vmm3a::Hybrids hybrids{.ids = ..., .names = ..., .origin = ..., .detector = "NMX"};
//   auto cal = vmm3a::HybridCalibration::from_file(path, hybrids);
//   adc = cal.adc(vmm3a::vmm_index(hybrid, vmm), channel, raw_adc);   // per readout
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "efu/vmm3a/hybrid_map.h"
#include "efu/vmm3a/readout.h"

namespace efu::vmm3a {

struct ChannelCalibration {
  double adc_offset;
  double adc_slope;
  double tdc_offset;
  double tdc_slope;
};

/// What a calibration file that lacks some hybrids of the instrument config means.
enum class MissingHybrids : std::uint8_t {
  kUncalibrated,  // they run with the identity parameters, as the reference does (the default)
  kRefuse,        // a ConfigError naming the first one (multiblade's --calibration-strict on)
};

/// The hybrids a calibration file is checked against, from the plugin's instrument config.
struct Hybrids {
  std::vector<std::string> ids;    // HybridIds; a hybrid's index here is its index in the tables
  std::vector<std::string> names;  // how messages name each ("cassette 3"); may be empty
  std::string origin;              // how errors name the instrument config
  std::string detector;            // the file's expected "Detector"
  std::string what = "VMM3a calibration";  // how errors name the calibration file
  std::string strict_option;  // the plugin's option that refuses such a file, for the warning
};

/// A HybridId's length: the hybrid's serial number as 32 hex digits.
inline constexpr std::size_t kHybridIdLength = 32;

class HybridCalibration {
 public:
  /// Identity ADC calibration and no time correction (calibration off).
  HybridCalibration() = default;
  /// Throws ConfigError naming the file, the JSON path and what was expected.
  static HybridCalibration from_file(const std::string& path, const Hybrids& hybrids,
                                     MissingHybrids missing = MissingHybrids::kUncalibrated);
  static HybridCalibration from_json(std::string_view text, const std::string& origin,
                                     const Hybrids& hybrids,
                                     MissingHybrids missing = MissingHybrids::kUncalibrated);

  bool enabled() const noexcept { return !channels_.empty(); }
  const ChannelCalibration& channel(std::uint32_t vmm_index, std::uint32_t channel) const noexcept {
    return channels_[vmm_index * kChannelsPerVmm + channel];
  }

  /// Indices (in Hybrids::ids) of the hybrids the file has no entry for, ascending.
  const std::vector<std::uint32_t>& uncalibrated() const noexcept { return uncalibrated_; }
  /// The one start-up warning, "<plugin>: ...", naming every uncalibrated hybrid by its name
  /// and HybridId; empty if the file calibrates them all.
  std::string uncalibrated_warning(std::string_view plugin, const Hybrids& hybrids) const;

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
  std::vector<ChannelCalibration> channels_;  // (hybrid * 2 + vmm) * 64 + channel
  std::vector<std::uint32_t> uncalibrated_;
  std::string file_;  // the path (or test origin) the warning names
};

}  // namespace efu::vmm3a
