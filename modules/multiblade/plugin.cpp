// The multiblade plugin's entry point: descriptor, options and factory.
#include "efu/plugin.h"

#include "efu/ess/readout_header.h"
#include "multiblade_pipeline.h"

namespace {

// Once per plugin: the instrument config and the calibration, which every processing thread's
// pipeline then only reads.
void* init(const efu::OptionValues& options) {
  return efu::multiblade::load_shared(efu::multiblade::config_from_options(options)).release();
}

efu::Pipeline* create(const efu::PipelineContext& context) {
  if (const auto* shared = efu::shared_state<efu::multiblade::MultibladeShared>(context)) {
    return new efu::multiblade::MultibladePipeline(*shared, context.counters, context.events,
                                                   context.instance);
  }
  // A caller that did not run init() (the fuzz driver): this pipeline loads its own.
  return new efu::multiblade::MultibladePipeline(
      efu::multiblade::config_from_options(context.options), context.counters, context.events,
      context.instance);
}

const efu::PluginDescriptor kDescriptor{
    efu::kPluginAbiVersion,
    "multiblade",
    "0.1.0",
    "Multi-Blade (Freia-like) boron-10 detector, ESS VMM3a readout: 2D clustering to events",
    efu::multiblade::kOptions,
    efu::multiblade::kOptionCount,
    &create,
    &efu::ess::route_key,
    // The readouts name their fiber and FEN: the sender's address is not needed.
    /*uses_source=*/false,
    &init,
    &efu::release_shared<efu::multiblade::MultibladeShared>,
};

}  // namespace

EFU_PLUGIN(kDescriptor)
