// The `udp` plugin: a link-test instrument that checks sequence numbers and emits no events.
#include "efu/plugin.h"

#include "udp_pipeline.h"

namespace {

const efu::OptionSpec kOptions[] = {
    {efu::udp::kOptionSeqFormat, efu::OptionType::kString, "efu64",
     "sequence number format: efu64 (64-bit little-endian from 0, efu-udpgen) or udptx32 "
     "(32-bit host order from 1, the study's udptx)"},
    {efu::udp::kOptionVerifyPayload, efu::OptionType::kBool, "off",
     "check the efu-udpgen filler of every datagram; mismatches count as udp.corrupted"},
};

efu::Pipeline* create(const efu::PipelineContext& context) {
  return new efu::udp::UdpPipeline(context);
}

const efu::PluginDescriptor kDescriptor{
    efu::kPluginAbiVersion,
    "udp",
    "1.0.0",
    "UDP link test: counts packets, bytes, loss, reordering and duplicates by sequence number",
    kOptions,
    sizeof kOptions / sizeof kOptions[0],
    &create,
    nullptr,  // one stream: everything on processing thread 0 keeps the sequence in order
};

}  // namespace

EFU_PLUGIN(kDescriptor)
