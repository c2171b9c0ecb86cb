// The caen plugin's entry point: descriptor, options and factory. The instrument (LoKI,
// BIFROST, CSPEC, MIRACLES) is the one the --geometry file names.
#include "efu/plugin.h"

#include "caen_pipeline.h"
#include "efu/ess/readout_header.h"

namespace {

// Once per plugin: the instrument config, its calibration and the pixel map, which every
// processing thread's pipeline then only reads.
void* init(const efu::OptionValues& options) {
  return efu::caen::load_shared(efu::caen::settings_from_options(options)).release();
}

efu::Pipeline* create(const efu::PipelineContext& context) {
  if (const auto* shared = efu::shared_state<efu::caen::CaenShared>(context)) {
    return new efu::caen::CaenPipeline(*shared, context.counters, context.events);
  }
  // A caller that did not run init() (the fuzz driver): this pipeline loads its own.
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
    &init,
    &efu::release_shared<efu::caen::CaenShared>,
};

}  // namespace

EFU_PLUGIN(kDescriptor)
