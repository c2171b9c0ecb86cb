#include "udp_pipeline.h"

#include <string>

#include "efu/errors.h"

namespace efu::udp {
namespace {

SeqFormat seq_format_option(const OptionValues& options) {
  const std::string& text = options.get_string(kOptionSeqFormat);
  const auto format = parse_seq_format(text);
  if (!format) {
    throw ConfigError(std::string("--") + kOptionSeqFormat + ": '" + text +
                      "' is not a sequence format; expected efu64 or udptx32");
  }
  return *format;
}

}  // namespace

UdpPipeline::UdpPipeline(const PipelineContext& context)
    : tracker_(seq_format_option(context.options), context.options.get_bool(kOptionVerifyPayload)),
      packets_(context.counters.counter("udp.packets")),
      bytes_(context.counters.counter("udp.bytes")),
      expected_(context.counters.counter("udp.expected")),
      lost_(context.counters.counter("udp.lost")),
      out_of_order_(context.counters.counter("udp.out_of_order")),
      duplicates_(context.counters.counter("udp.duplicates")),
      restarts_(context.counters.counter("udp.restarts")),
      runts_(context.counters.counter("udp.runts")),
      corrupted_(context.counters.counter("udp.corrupted")) {}

void UdpPipeline::process(PacketBatch batch) {
  for (const PacketView& packet : batch) tracker_.on_packet(packet.data, packet.size);
  publish();
}

void UdpPipeline::flush() {
  tracker_.flush();
  publish();
}

// The tracker keeps plain totals and publishes them once per batch: nine relaxed stores instead
// of several counter updates per packet. Each total only grows, so the counters stay monotonic.
void UdpPipeline::publish() noexcept {
  const SequenceStats& s = tracker_.stats();
  packets_.set(s.packets);
  bytes_.set(s.bytes);
  expected_.set(s.expected);
  lost_.set(s.lost);
  out_of_order_.set(s.out_of_order);
  duplicates_.set(s.duplicates);
  restarts_.set(s.restarts);
  runts_.set(s.runts);
  corrupted_.set(s.corrupted);
}

}  // namespace efu::udp
