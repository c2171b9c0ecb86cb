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

// One sink per source, asked of the host here, once: BIFROST's per-triplet sources by name (a
// table the hot path indexes by triplet), the other instruments' the host's own.
efu::Pipeline* create(const efu::PipelineContext& context) {
  if (const auto* shared = efu::shared_state<efu::caen::CaenShared>(context)) {
    return new efu::caen::CaenPipeline(*shared, context.counters,
                                       efu::caen::event_sinks(shared->instrument.config, context));
  }
  // A caller that did not run init() (the fuzz driver): this pipeline loads its own.
  const efu::caen::CaenSettings settings = efu::caen::settings_from_options(context.options);
  const efu::caen::LoadedInstrument instrument = efu::caen::load_instrument(settings);
  return new efu::caen::CaenPipeline(instrument, settings.amplitude_threshold, context.counters,
                                     efu::caen::event_sinks(instrument.config, context));
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
