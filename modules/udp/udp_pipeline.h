// The udp link-test pipeline: sequence accounting per flow (sender address and port) and in
// total, published as udp.* counters (docs/udp-link-test.md §3).
#pragma once

#include <cstdint>
#include <vector>

#include "efu/counters.h"
#include "efu/plugin.h"
#include "flow_table.h"
#include "sequence_tracker.h"

namespace efu::udp {

/// Plugin option names (the host parses them; see plugin.cpp for the table).
inline constexpr const char* kOptionSeqFormat = "seq-format";
inline constexpr const char* kOptionVerifyPayload = "verify-payload";
inline constexpr const char* kOptionMaxFlows = "max-flows";
// Each flow has 13 published counters; beyond ~1000 flows the stats outputs grow unwieldy.
inline constexpr std::int64_t kMaxFlowsLimit = 1024;

/// The route key of the udp plugin: a flow stays on one processing thread, in order.
std::uint32_t route_by_flow(const PacketView& packet) noexcept;

class UdpPipeline : public Pipeline {
 public:
  /// Throws ConfigError for an unknown --seq-format or a --max-flows out of range.
  explicit UdpPipeline(const PipelineContext& context);

  void process(PacketBatch batch) override;
  void flush() override;

  /// Sums over this pipeline's flows, plus the datagrams of untracked flows in packets/bytes.
  const SequenceStats& totals() const noexcept { return totals_; }
  std::uint32_t flows() const noexcept { return table_.size(); }
  /// The published name prefix of flow `slot` of this pipeline ("udp.flow.3.").
  std::string flow_prefix(std::uint32_t slot) const;

 private:
  /// The counters of one flow slot, registered at start-up whether or not a flow arrives.
  struct FlowCounters {
    Counter* packets;
    Counter* bytes;
    Counter* expected;
    Counter* lost;
    Counter* out_of_order;
    Counter* duplicates;
    Counter* restarts;
    Counter* runts;
    Counter* corrupted;
    Counter* family;  // gauges naming the sender, set when the flow first arrives
    Counter* port;
    Counter* address_high;
    Counter* address_low;
  };
  struct Flow {
    SequenceTracker tracker;
    SequenceStats published;  // what the counters and totals_ hold of this flow
    bool dirty = false;       // accounted since the last publish()
  };

  SequenceTracker* tracker_for(const PacketSource& source) noexcept;
  void publish() noexcept;
  void publish_flow(std::uint32_t slot) noexcept;

  unsigned instance_;
  unsigned instances_;
  FlowTable table_;
  std::vector<Flow> flows_;  // by slot, all constructed up front
  std::vector<FlowCounters> flow_counters_;
  std::vector<std::uint32_t> dirty_;  // slots accounted since the last publish()
  // The last flow looked up: GRO and recvmmsg batches mostly carry one flow after another.
  FlowKey last_key_;
  std::uint32_t last_slot_ = FlowTable::kFull;
  SequenceStats totals_;
  std::uint64_t untracked_packets_ = 0;

  Counter& packets_;
  Counter& bytes_;
  Counter& expected_;
  Counter& lost_;
  Counter& out_of_order_;
  Counter& duplicates_;
  Counter& restarts_;
  Counter& runts_;
  Counter& corrupted_;
  Counter& flows_gauge_;
  Counter& untracked_;
};

}  // namespace efu::udp
