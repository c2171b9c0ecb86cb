// Multi-Blade's use of the SDK's VMM3a calibration (efu/vmm3a/hybrid_calibration.h;
// docs/multiblade.md "Calibration"): the hybrids are the instrument config's cassettes, in
// Config[] order, named "cassette <number>"; the files' Detector is "Freia" for every
// Multi-Blade instrument, as the facility writes them; --calibration-strict on refuses a file
// that leaves a hybrid out.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "efu/vmm3a/hybrid_calibration.h"
#include "geometry.h"

namespace efu::multiblade {

using vmm3a::ChannelCalibration;
using vmm3a::MissingHybrids;

/// The cassettes as the SDK's hybrid list.
vmm3a::Hybrids hybrids_of(const Geometry& geometry);

/// A vmm3a::HybridCalibration loaded against a Multi-Blade geometry (its lookups are the SDK's;
/// vmm_index = cassette * 2 + (vmm & 1), ChannelMapping::vmm_index).
class Calibration : public vmm3a::HybridCalibration {
 public:
  /// Identity ADC calibration and no time correction (calibration off).
  Calibration() = default;
  static Calibration from_file(const std::string& path, const Geometry& geometry,
                               MissingHybrids missing = MissingHybrids::kUncalibrated);
  static Calibration from_json(std::string_view text, const std::string& origin,
                               const Geometry& geometry,
                               MissingHybrids missing = MissingHybrids::kUncalibrated);
  /// The one start-up warning naming every uncalibrated hybrid by cassette number and HybridId;
  /// empty if the file calibrates them all.
  std::string uncalibrated_warning(const Geometry& geometry) const;

 private:
  explicit Calibration(vmm3a::HybridCalibration c) : vmm3a::HybridCalibration(std::move(c)) {}
};

}  // namespace efu::multiblade
