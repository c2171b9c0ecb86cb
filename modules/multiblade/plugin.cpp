// The multiblade plugin's entry point: descriptor, options and factory.
#include "efu/plugin.h"

#include "efu/ess/readout_header.h"
#include "multiblade_pipeline.h"

namespace {

efu::Pipeline* create(const efu::PipelineContext& context) {
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
};

}  // namespace

EFU_PLUGIN(kDescriptor)
