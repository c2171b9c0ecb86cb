// The cbm plugin's entry point: descriptor, options and factory. The config's Detector says
// whether it runs the beam monitors (CBM, header type 0x10) or BEER (0x50); its Topology gives
// each monitor its own source (docs/cbm.md).
#include "efu/plugin.h"

#include "cbm_pipeline.h"

namespace {

// Once per plugin: the config and its (FEN, Channel) table, which every processing thread's
// pipeline then only reads.
void* init(const efu::OptionValues& options) {
  return efu::cbm::load_shared(efu::cbm::settings_from_options(options)).release();
}

efu::Pipeline* create(const efu::PipelineContext& context) {
  if (const auto* shared = efu::shared_state<efu::cbm::CbmShared>(context)) {
    return new efu::cbm::CbmPipeline(*shared, context);
  }
  // A caller that did not run init() (the fuzz driver): this pipeline loads its own.
  return new efu::cbm::CbmPipeline(efu::cbm::settings_from_options(context.options), context);
}

const efu::PluginDescriptor kDescriptor{
    efu::kPluginAbiVersion,
    "cbm",
    "0.1.0",
    "Beam monitors (CBM: EVENT_0D, EVENT_2D, IBM) and BEER, ESS readout: per monitor ev44 "
    "events or da00 TOF histograms",
    efu::cbm::kOptions,
    efu::cbm::kOptionCount,
    &create,
    // Every packet to thread 0: one ring (MonitorRing) carries every monitor, and each monitor's
    // stream (a da00 window above all) must be formed by one thread (docs/cbm.md "Routing").
    &efu::cbm::route_key,
    // The readouts name their fiber and FEN: the sender's address is not needed.
    /*uses_source=*/false,
    &init,
    &efu::release_shared<efu::cbm::CbmShared>,
};

}  // namespace

EFU_PLUGIN(kDescriptor)
