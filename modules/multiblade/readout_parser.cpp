#include "readout_parser.h"

namespace efu::multiblade {

ReadoutParser::ReadoutParser(CounterRegistry& counters, const Geometry& geometry,
                             const Calibration& calibration, const ReadoutSettings& settings)
    : geometry_(geometry),
      calibration_(calibration),
      calibrated_(calibration.enabled()),
      settings_(settings),
      blocks_(counters, vmm3a::kReadoutSize),
      accepted_(counters.counter("readouts.accepted")),
      errors_(counters, "readouts.errors.", kReadoutErrorNames) {}

}  // namespace efu::multiblade
