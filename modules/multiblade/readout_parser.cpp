#include "readout_parser.h"

namespace efu::multiblade {

ReadoutParser::ReadoutParser(CounterRegistry& counters, const Geometry& geometry,
                             const ReadoutSettings& settings)
    : geometry_(geometry),
      settings_(settings),
      received_(counters.counter("readouts.received")),
      accepted_(counters.counter("readouts.accepted")),
      errors_{counters.counter("readouts.errors.length"),
              counters.counter("readouts.errors.fiber"),
              counters.counter("readouts.errors.fen"),
              counters.counter("readouts.errors.vmm"),
              counters.counter("readouts.errors.channel"),
              counters.counter("readouts.errors.time_fraction"),
              counters.counter("readouts.errors.adc_below_threshold"),
              counters.counter("readouts.errors.tof_negative"),
              counters.counter("readouts.errors.tof_too_large")} {}

}  // namespace efu::multiblade
