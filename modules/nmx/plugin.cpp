// The nmx plugin's entry point: descriptor, options and factory.
#include "efu/plugin.h"

#include "efu/ess/readout_header.h"
#include "nmx_pipeline.h"

namespace {

// Once per plugin: the instrument config and the calibration, which every processing thread's
// pipeline then only reads.
void* init(const efu::OptionValues& options) {
  return efu::nmx::load_shared(efu::nmx::settings_from_options(options)).release();
}

efu::Pipeline* create(const efu::PipelineContext& context) {
  if (const auto* shared = efu::shared_state<efu::nmx::NmxShared>(context)) {
    return new efu::nmx::NmxPipeline(*shared, context.counters, context.events, context.instance);
  }
  // A caller that did not run init() (the fuzz driver): this pipeline loads its own.
  return new efu::nmx::NmxPipeline(efu::nmx::settings_from_options(context.options),
                                   context.counters, context.events, context.instance);
}

const efu::PluginDescriptor kDescriptor{
    efu::kPluginAbiVersion,
    "nmx",
    "0.1.0",
    "NMX GEM detector panels, ESS VMM3a readout (type 0x44): x/y strip clusters per panel, "
    "uTPC position, to events",
    efu::nmx::kOptions,
    efu::nmx::kOptionCount,
    &create,
    &efu::ess::route_key,
    // The readouts name their fiber and FEN: the sender's address is not needed.
    /*uses_source=*/false,
    &init,
    &efu::release_shared<efu::nmx::NmxShared>,
};

}  // namespace

EFU_PLUGIN(kDescriptor)
