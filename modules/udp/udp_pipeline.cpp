#include "udp_pipeline.h"

#include <string>

#include <spdlog/spdlog.h>

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

std::uint32_t max_flows_option(const OptionValues& options) {
  return static_cast<std::uint32_t>(options.get_int(kOptionMaxFlows, 1, kMaxFlowsLimit));
}

/// `now - before`, field by field (each field only grows).
SequenceStats difference(const SequenceStats& now, const SequenceStats& before) noexcept {
  return SequenceStats{now.packets - before.packets,           now.bytes - before.bytes,
                       now.expected - before.expected,         now.lost - before.lost,
                       now.out_of_order - before.out_of_order, now.duplicates - before.duplicates,
                       now.restarts - before.restarts,         now.runts - before.runts,
                       now.corrupted - before.corrupted};
}

void add_to(SequenceStats& sum, const SequenceStats& d) noexcept {
  sum.packets += d.packets;
  sum.bytes += d.bytes;
  sum.expected += d.expected;
  sum.lost += d.lost;
  sum.out_of_order += d.out_of_order;
  sum.duplicates += d.duplicates;
  sum.restarts += d.restarts;
  sum.runts += d.runts;
  sum.corrupted += d.corrupted;
}

}  // namespace

std::uint32_t route_by_flow(const PacketView& packet) noexcept {
  return packet.source->flow_hash();
}

UdpPipeline::UdpPipeline(const PipelineContext& context)
    : instance_(context.instance),
      instances_(context.instances == 0 ? 1 : context.instances),
      table_(max_flows_option(context.options)),
      packets_(context.counters.counter("udp.packets")),
      bytes_(context.counters.counter("udp.bytes")),
      expected_(context.counters.counter("udp.expected")),
      lost_(context.counters.counter("udp.lost")),
      out_of_order_(context.counters.counter("udp.out_of_order")),
      duplicates_(context.counters.counter("udp.duplicates")),
      restarts_(context.counters.counter("udp.restarts")),
      runts_(context.counters.counter("udp.runts")),
      corrupted_(context.counters.counter("udp.corrupted")),
      flows_gauge_(context.counters.gauge("udp.flows")),
      untracked_(context.counters.counter("udp.untracked.packets")) {
  const SeqFormat format = seq_format_option(context.options);
  const bool verify = context.options.get_bool(kOptionVerifyPayload);
  const std::uint32_t slots = table_.capacity();
  flows_.reserve(slots);
  flow_counters_.reserve(slots);
  dirty_.reserve(slots);
  CounterRegistry& c = context.counters;
  for (std::uint32_t s = 0; s < slots; ++s) {
    flows_.push_back(Flow{SequenceTracker(format, verify), SequenceStats{}, false});
    // Registered whether or not a flow ever takes the slot: the registry is frozen before the
    // first datagram, and the names must not depend on the traffic.
    const std::string p = flow_prefix(s);
    flow_counters_.push_back(FlowCounters{
        &c.counter(p + "packets"), &c.counter(p + "bytes"), &c.counter(p + "expected"),
        &c.counter(p + "lost"), &c.counter(p + "out_of_order"), &c.counter(p + "duplicates"),
        &c.counter(p + "restarts"), &c.counter(p + "runts"), &c.counter(p + "corrupted"),
        &c.gauge(p + "source.family"), &c.gauge(p + "source.port"),
        &c.gauge(p + "source.address_high"), &c.gauge(p + "source.address_low")});
  }
}

std::string UdpPipeline::flow_prefix(std::uint32_t slot) const {
  // Slots interleave over the processing threads, so every thread's flows have names of their
  // own (a name registered twice would be published as a sum).
  return "udp.flow." + std::to_string(instance_ + instances_ * slot) + ".";
}

SequenceTracker* UdpPipeline::tracker_for(const PacketSource& source) noexcept {
  const FlowKey key = FlowKey::of(source);
  if (last_slot_ == FlowTable::kFull || !(key == last_key_)) {
    const std::uint32_t before = table_.size();
    const std::uint32_t slot = table_.find_or_add(key, source.flow_hash());
    if (slot == FlowTable::kFull) return nullptr;
    if (table_.size() != before) {
      // A new flow: name its sender once (gauges, so they are published as set).
      const FlowCounters& fc = flow_counters_[slot];
      fc.family->set(key.family == AF_INET ? 4 : key.family == AF_INET6 ? 6 : 0);
      fc.port->set(key.port);
      fc.address_high->set(key.address_high);
      fc.address_low->set(key.address_low);
      flows_gauge_.set(table_.size());
    }
    last_key_ = key;
    last_slot_ = slot;
  }
  Flow& flow = flows_[last_slot_];
  if (!flow.dirty) {
    flow.dirty = true;
    dirty_.push_back(last_slot_);  // at most one entry per slot: within the reserved capacity
  }
  return &flow.tracker;
}

void UdpPipeline::process(PacketBatch batch) {
  for (const PacketView& packet : batch) {
    SequenceTracker* tracker = tracker_for(*packet.source);
    if (tracker != nullptr) {
      tracker->on_packet(packet.data, packet.size);
    } else {
      // More flows than --max-flows: counted in the totals' packets and bytes, but without
      // sequence accounting (mixing flows in one tracker would invent loss).
      ++untracked_packets_;
      ++totals_.packets;
      totals_.bytes += packet.size;
    }
  }
  publish();
}

void UdpPipeline::publish_flow(std::uint32_t slot) noexcept {
  Flow& flow = flows_[slot];
  const SequenceStats& s = flow.tracker.stats();
  add_to(totals_, difference(s, flow.published));
  flow.published = s;
  flow.dirty = false;
  const FlowCounters& fc = flow_counters_[slot];
  fc.packets->set(s.packets);
  fc.bytes->set(s.bytes);
  fc.expected->set(s.expected);
  fc.lost->set(s.lost);
  fc.out_of_order->set(s.out_of_order);
  fc.duplicates->set(s.duplicates);
  fc.restarts->set(s.restarts);
  fc.runts->set(s.runts);
  fc.corrupted->set(s.corrupted);
}

// The trackers keep plain totals; the counters of the flows accounted in this batch and the
// totals are stored once per batch, not per datagram. Each value only grows, so the counters
// stay monotonic.
void UdpPipeline::publish() noexcept {
  for (const std::uint32_t slot : dirty_) publish_flow(slot);
  dirty_.clear();
  const SequenceStats& s = totals_;
  packets_.set(s.packets);
  bytes_.set(s.bytes);
  expected_.set(s.expected);
  lost_.set(s.lost);
  out_of_order_.set(s.out_of_order);
  duplicates_.set(s.duplicates);
  restarts_.set(s.restarts);
  runts_.set(s.runts);
  corrupted_.set(s.corrupted);
  untracked_.set(untracked_packets_);
}

void UdpPipeline::flush() {
  for (std::uint32_t slot = 0; slot < table_.size(); ++slot) {
    flows_[slot].tracker.flush();
    publish_flow(slot);
  }
  dirty_.clear();
  publish();
  // At stop, one line per flow with its sender's address (the counters carry it as numbers).
  for (std::uint32_t slot = 0; slot < table_.size(); ++slot) {
    const SequenceStats& s = flows_[slot].tracker.stats();
    const double per =
        s.expected != 0 ? static_cast<double>(s.lost) / static_cast<double>(s.expected) : 0.0;
    spdlog::info(
        "udp: flow {} from {}: packets {} expected {} lost {} PER {:.3g} out_of_order {} "
        "duplicates {} restarts {}",
        instance_ + instances_ * slot, table_.key(slot).to_string(), s.packets, s.expected, s.lost,
        per, s.out_of_order, s.duplicates, s.restarts);
  }
  if (untracked_packets_ != 0) {
    spdlog::warn(
        "udp: {} datagram(s) came from flows beyond --max-flows {} and had no sequence "
        "accounting (udp.untracked.packets)",
        untracked_packets_, table_.capacity());
  }
}

}  // namespace efu::udp
