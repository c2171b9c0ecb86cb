// The caen plugin's entry point: descriptor, options and factory. The instrument (LoKI,
// BIFROST, CSPEC, MIRACLES) is the one the --geometry file names.
#include "efu/plugin.h"

#include "caen_pipeline.h"
#include "efu/ess/readout_header.h"

namespace {

efu::Pipeline* create(const efu::PipelineContext& context) {
  const efu::caen::CaenSettings settings = efu::caen::settings_from_options(context.options);
  return new efu::caen::CaenPipeline(efu::caen::load_instrument(settings),
                                     settings.amplitude_threshold, context.counters,
                                     context.events);
}

const efu::PluginDescriptor kDescriptor{
    efu::kPluginAbiVersion,
    "caen",
    "0.1.0",
    "CAEN charge-division helium-3 tubes (LoKI, BIFROST, CSPEC, MIRACLES), ESS CAEN readout: "
    "one event per readout",
    efu::caen::kOptions,
    efu::caen::kOptionCount,
    &create,
    &efu::ess::route_key,
    // The readouts name their fiber and FEN: the sender's address is not needed.
    /*uses_source=*/false,
};

}  // namespace

EFU_PLUGIN(kDescriptor)
