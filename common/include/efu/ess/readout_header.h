// The ESS readout packet header, v0 (30 B) and v1 (32 B), and its defensive parser
// (design.md §5.1). One HeaderParser per pipeline instance: it owns that instance's sequence
// tracking and registers its counters under parser.essheader.*.
#pragma once

#include <array>
#include <cstdint>

#include "efu/counters.h"
#include "efu/plugin.h"

namespace efu::ess {

inline constexpr std::uint32_t kHeaderSizeV0 = 30;
inline constexpr std::uint32_t kHeaderSizeV1 = 32;
inline constexpr std::uint32_t kMaxOutputQueues = 12;
inline constexpr std::uint32_t kOutputQueueOffset = 8;

/// The checked header fields, times already converted to ns since the Unix epoch.
struct PacketHeader {
  std::uint8_t version;
  std::uint8_t type;
  std::uint16_t total_length;
  std::uint8_t output_queue;
  std::uint8_t time_source;
  std::uint32_t sequence;
  std::uint32_t header_size;  // where the readout blocks start
  std::uint64_t pulse_time_ns;
  std::uint64_t prev_pulse_time_ns;
};

enum class HeaderStatus : std::uint8_t {
  kData,       // valid, readout blocks follow
  kHeartbeat,  // valid, header only
  kRejected,   // counted under parser.essheader.errors.<reason>; skip the packet
};

/// Checks run in field order and the first failure is the one counted, so every rejected packet
/// lands in exactly one error counter.
///
/// Sequence numbers: a gap or repeat counts parser.essheader.errors.sequence (and a forward gap
/// adds the number of skipped packets to parser.essheader.missing_packets) but the packet is
/// still accepted: the gap means loss upstream, the packet in hand is fine. The first packet
/// seen on a queue only sets the expectation.
class HeaderParser {
 public:
  HeaderParser(CounterRegistry& counters, std::uint8_t detector_type);

  HeaderStatus parse(const std::uint8_t* data, std::uint32_t size, PacketHeader& out) noexcept;

 private:
  struct Errors {
    Counter& padding;
    Counter& version;
    Counter& cookie;
    Counter& type;
    Counter& length;
    Counter& output_queue;
    Counter& time_fraction;
    Counter& prev_pulse_later;
    Counter& sequence;
  };

  std::uint8_t detector_type_;
  Counter& packets_;
  Counter& heartbeats_;
  Counter& missing_packets_;
  Errors errors_;
  std::array<std::uint32_t, kMaxOutputQueues> next_sequence_{};
  std::array<bool, kMaxOutputQueues> sequence_seen_{};
};

/// A PluginDescriptor::route_key for ESS readout: the output queue byte, so every packet of one
/// queue (and so every readout of one sequence stream) is processed in order by one thread.
/// Packets too short to hold it get key 0; the parser rejects them later.
std::uint32_t route_key(const PacketView& packet) noexcept;

}  // namespace efu::ess
