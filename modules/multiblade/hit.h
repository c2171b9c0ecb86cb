// A mapped readout: one wire or strip signal of one cassette, ready for clustering.
#pragma once

#include <cstdint>

#include "geometry.h"

namespace efu::multiblade {

struct Hit {
  std::uint64_t time_ns;   // ns since the Unix epoch
  std::uint64_t pulse_ns;  // the pulse its TOF is relative to (after the previous-pulse fallback)
  std::uint16_t coordinate;
  std::uint16_t adc;
  Plane plane;
};

}  // namespace efu::multiblade
