// The cdt plugin's entry point: descriptor, options and factory. The instrument (DREAM, MAGIC,
// HEIMDAL) is the one the --geometry file's Detector names.
#include "efu/plugin.h"

#include "cdt_pipeline.h"
#include "efu/ess/readout_header.h"

namespace {

// Once per plugin: the instrument file's (ring, FEN) table, which every processing thread's
// pipeline then only reads.
void* init(const efu::OptionValues& options) {
  return efu::cdt::load_shared(efu::cdt::settings_from_options(options)).release();
}

efu::Pipeline* create(const efu::PipelineContext& context) {
  if (const auto* shared = efu::shared_state<efu::cdt::CdtShared>(context)) {
    return new efu::cdt::CdtPipeline(*shared, context.counters, context.events);
  }
  // A caller that did not run init() (the fuzz driver): this pipeline loads its own.
  return new efu::cdt::CdtPipeline(
      efu::cdt::load_shared(efu::cdt::settings_from_options(context.options)), context.counters,
      context.events);
}

const efu::PluginDescriptor kDescriptor{
    efu::kPluginAbiVersion,
    "cdt",
    "0.1.0",
    "CDT boron-10 jalousie detectors (DREAM, MAGIC, HEIMDAL), ESS CDT readout: one event per "
    "readout",
    efu::cdt::kOptions,
    efu::cdt::kOptionCount,
    &create,
    // By output queue: a (ring, FEN) pair's readouts travel on one queue, so they stay in order
    // on one processing thread (and each queue's sequence numbers with them).
    &efu::ess::route_key,
    // The readouts name their fiber and FEN: the sender's address is not needed.
    /*uses_source=*/false,
    &init,
    &efu::release_shared<efu::cdt::CdtShared>,
};

}  // namespace

EFU_PLUGIN(kDescriptor)
