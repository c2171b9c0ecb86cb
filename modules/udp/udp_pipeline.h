// The udp link-test pipeline: sequence accounting per datagram, published as udp.* counters.
#pragma once

#include "efu/counters.h"
#include "efu/plugin.h"
#include "sequence_tracker.h"

namespace efu::udp {

/// Plugin option names (the host parses them; see plugin.cpp for the table).
inline constexpr const char* kOptionSeqFormat = "seq-format";
inline constexpr const char* kOptionVerifyPayload = "verify-payload";

class UdpPipeline : public Pipeline {
 public:
  /// Throws ConfigError for an unknown --seq-format.
  explicit UdpPipeline(const PipelineContext& context);

  void process(PacketBatch batch) override;
  void flush() override;

  const SequenceTracker& tracker() const noexcept { return tracker_; }

 private:
  void publish() noexcept;

  SequenceTracker tracker_;
  Counter& packets_;
  Counter& bytes_;
  Counter& expected_;
  Counter& lost_;
  Counter& out_of_order_;
  Counter& duplicates_;
  Counter& restarts_;
  Counter& runts_;
  Counter& corrupted_;
};

}  // namespace efu::udp
