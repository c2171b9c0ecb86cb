// Readouts and module table entries for the cdt geometry tests.
#pragma once

#include <cstdint>
#include <ostream>

#include "cdt_readout.h"
#include "config.h"
#include "geometry.h"

namespace efu::cdt::test {

/// A readout of ring 0, FEN 0 with the counters the geometry uses.
inline CdtReadout readout(std::uint8_t unit, std::uint8_t cathode, std::uint8_t anode,
                          std::uint8_t fiber = 0, std::uint8_t fen = 0) {
  CdtReadout r;
  r.fiber = fiber;
  r.fen = fen;
  r.unit = unit;
  r.cathode = cathode;
  r.anode = anode;
  return r;
}

inline Module module(ModuleType type, std::uint8_t index = 0, std::uint8_t index2 = 0) {
  return Module{true, type, index, index2};
}

}  // namespace efu::cdt::test

namespace efu::cdt {
/// gtest prints results as "ok 1713" or "rejected cassette".
inline void PrintTo(const PixelResult& p, std::ostream* os) {
  if (p.status == PixelStatus::kOk) {
    *os << "ok " << p.pixel;
  } else {
    *os << "rejected " << kPixelErrorNames[static_cast<std::size_t>(p.status)] << " (pixel "
        << p.pixel << ")";
  }
}
}  // namespace efu::cdt
