// A mapped VMM3a readout (docs/plugins.md "VMM3a detectors"): what a detector's channel map makes
// of one readout, and the hit that the clustering works on.
//
// Every VMM3a detector efu runs has two planes per detector unit: Multi-Blade's wires and strips
// of a cassette, NMX's x and y strips of a panel, TREX's wires and grids of a vessel. The
// plugin's map decides the unit, the plane (0 or 1) and the coordinate along the plane's axis;
// everything after that (thresholds, calibration, TOF, time grouping, clusters, matching) is the
// SDK's and the same for all of them.
#pragma once

#include <cstdint>

namespace efu::vmm3a {

/// One readout that passed the readout parser: its calibrated time and ADC, its place, and the
/// pulse its time of flight is counted from (after the previous-pulse fallback).
struct Hit {
  std::uint64_t time_ns;   // ns since the Unix epoch
  std::uint64_t pulse_ns;  // the pulse its TOF is relative to
  std::uint16_t coordinate;
  std::uint16_t adc;
  std::uint8_t plane;  // 0 or 1: the plugin names them (wire/strip, x/y, wire/grid)
};

/// What a plugin's channel map gives for one readout (the readout parser's Map::map()).
struct ChannelMapping {
  std::uint16_t unit;        // the detector unit whose hits cluster together (cassette, panel...)
  std::uint16_t coordinate;  // along the plane's axis, as the instrument numbers it
  std::uint16_t threshold;   // the ADC threshold of this VMM (0: none), compared after calibration
  std::uint16_t vmm_index;   // the calibration table's VMM: vmm_index(hybrid index, vmm)
  std::uint8_t plane;        // 0 or 1
};

/// Why a map gave no mapping; the readout parser counts each under readouts.errors.<name>. The
/// first four are vmm3a::HybridStatus's (hybrid_map.h), in the same order.
enum class MapStatus : std::uint8_t { kOk, kFiber, kFen, kVmm, kChannel };

}  // namespace efu::vmm3a
