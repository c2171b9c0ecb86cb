// The trex plugin's entry point: descriptor, options and factory. The config file's
// InstrumentGeometry says whether the channels are wired as TREX or as LET.
#include "efu/plugin.h"

#include "efu/ess/readout_header.h"
#include "trex_pipeline.h"

namespace {

// Once per plugin: the instrument config, its channel map and the calibration, which every
// processing thread's pipeline then only reads.
void* init(const efu::OptionValues& options) {
  return efu::trex::load_shared(efu::trex::settings_from_options(options)).release();
}

efu::Pipeline* create(const efu::PipelineContext& context) {
  if (const auto* shared = efu::shared_state<efu::trex::TrexShared>(context)) {
    return new efu::trex::TrexPipeline(*shared, context.counters, context.events, context.instance);
  }
  // A caller that did not run init() (the fuzz driver): this pipeline loads its own.
  return new efu::trex::TrexPipeline(efu::trex::settings_from_options(context.options),
                                     context.counters, context.events, context.instance);
}

const efu::PluginDescriptor kDescriptor{
    efu::kPluginAbiVersion,
    "trex",
    "0.1.0",
    "TREX (and LET) helium-3 multi-grid detectors, ESS VMM3a readout: wire and grid clusters to "
    "3D pixel events",
    efu::trex::kOptions,
    efu::trex::kOptionCount,
    &create,
    // By output queue: a (ring, FEN)'s readouts travel on one queue, so its time groups stay on
    // one processing thread (and each queue's sequence numbers with them).
    &efu::ess::route_key,
    // The readouts name their fiber and FEN: the sender's address is not needed.
    /*uses_source=*/false,
    &init,
    &efu::release_shared<efu::trex::TrexShared>,
};

}  // namespace

EFU_PLUGIN(kDescriptor)
