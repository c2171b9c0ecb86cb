// The `udp` plugin: a link-test instrument that checks sequence numbers and emits no events.
#include "efu/plugin.h"

#include "udp_pipeline.h"

namespace {

const efu::OptionSpec kOptions[] = {
    {efu::udp::kOptionSeqFormat, efu::OptionType::kString, "efu64",
     "sequence number format: efu64 (64-bit little-endian from 0, efu-udpgen) or udptx32 "
     "(32-bit host order from 1, as the udptx tool sends)"},
    {efu::udp::kOptionVerifyPayload, efu::OptionType::kBool, "off",
     "check the efu-udpgen filler of every datagram; mismatches count as udp.corrupted"},
    {efu::udp::kOptionMaxFlows, efu::OptionType::kInt, "16",
     "senders (address and port) tracked on their own per processing thread, 1..1024; "
     "datagrams of further senders count as udp.untracked.packets"},
};

efu::Pipeline* create(const efu::PipelineContext& context) {
  return new efu::udp::UdpPipeline(context);
}

const efu::PluginDescriptor kDescriptor{
    efu::kPluginAbiVersion,
    "udp",
    "1.1.0",
    "UDP link test: counts packets, bytes, loss, reordering and duplicates by sequence number, "
    "per sender and in total",
    kOptions,
    sizeof kOptions / sizeof kOptions[0],
    &create,
    // Each sender's datagrams stay on one processing thread, so its sequence stays in order.
    &efu::udp::route_by_flow,
    /*uses_source=*/true,  // flows are told apart by their sender
};

}  // namespace

EFU_PLUGIN(kDescriptor)
