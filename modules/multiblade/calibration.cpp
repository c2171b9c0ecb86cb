#include "calibration.h"

#include <utility>

namespace efu::multiblade {

vmm3a::Hybrids hybrids_of(const Geometry& geometry) {
  vmm3a::Hybrids h;
  for (std::uint32_t i = 0; i < geometry.cassettes(); ++i) {
    h.ids.push_back(geometry.cassette(i).hybrid_id);
    h.names.push_back("cassette " + std::to_string(geometry.cassette(i).cassette_number));
  }
  h.origin = geometry.origin();
  h.detector = "Freia";
  h.what = "multiblade calibration";
  h.strict_option = "--calibration-strict on";
  return h;
}

Calibration Calibration::from_file(const std::string& path, const Geometry& geometry,
                                   MissingHybrids missing) {
  return Calibration(vmm3a::HybridCalibration::from_file(path, hybrids_of(geometry), missing));
}

Calibration Calibration::from_json(std::string_view text, const std::string& origin,
                                   const Geometry& geometry, MissingHybrids missing) {
  return Calibration(
      vmm3a::HybridCalibration::from_json(text, origin, hybrids_of(geometry), missing));
}

std::string Calibration::uncalibrated_warning(const Geometry& geometry) const {
  return vmm3a::HybridCalibration::uncalibrated_warning("multiblade", hybrids_of(geometry));
}

}  // namespace efu::multiblade
