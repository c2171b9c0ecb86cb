// The ESS readout packet header, v0 (30 B) and v1 (32 B), and its defensive parser
// (docs/architecture.md §5.1). One HeaderParser per pipeline instance: it owns that instance's
// sequence tracking and registers its counters under parser.essheader.*.
#pragma once

#include <array>
#include <cstdint>

#include "efu/counter_group.h"
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

/// Why a header was rejected; each reason has its counter parser.essheader.errors.<name>.
enum class HeaderError : std::uint8_t {
  kPadding,
  kVersion,
  kCookie,
  kType,
  kLength,
  kOutputQueue,
  kTimeFraction,
  kPrevPulseLater,
  kPulseTimeDiff,  // pulse - previous pulse > MaxPulseTimeNS (the reference's ErrorTimeHigh)
  kSequence,       // not rejected: a gap or repeat, counted and accepted
  kCount
};
inline constexpr std::array<const char*, static_cast<std::size_t>(HeaderError::kCount)>
    kHeaderErrorNames{"padding",         "version",      "cookie",        "type",
                      "length",          "output_queue", "time_fraction", "prev_pulse_later",
                      "pulse_time_diff", "sequence"};

/// A forward sequence gap of this many packets or more is not believed: one corrupted or
/// restarted sequence number must not add billions to missing_packets. At 10 Gb/s of jumbo
/// frames one queue carries < 140 k packets/s, so 2^20 is more than 7 s of total loss.
inline constexpr std::uint32_t kMaxPlausibleSequenceGap = 1U << 20;

struct HeaderSettings {
  std::uint8_t detector_type = 0;
  /// The facility's MaxPulseTimeNS: a header whose pulse time is more than this after its
  /// previous pulse time is rejected (parser.essheader.errors.pulse_time_diff). 0: no check.
  std::uint64_t max_pulse_time_diff_ns = 0;
};

/// Checks run in field order and the first failure is the one counted, so every rejected packet
/// lands in exactly one error counter.
///
/// Sequence numbers: a gap or repeat counts parser.essheader.errors.sequence and resynchronises
/// on the packet in hand, which is still accepted: the gap means loss upstream, the packet is
/// fine. A forward gap below kMaxPlausibleSequenceGap adds the skipped packets to
/// parser.essheader.missing_packets; a larger jump either way (a restart or a corrupted number)
/// counts parser.essheader.sequence_jumps instead; a small backward step (a repeat or a
/// reordering) counts only errors.sequence. The first packet seen on a
/// queue only sets the expectation.
class HeaderParser {
 public:
  HeaderParser(CounterRegistry& counters, const HeaderSettings& settings);
  HeaderParser(CounterRegistry& counters, std::uint8_t detector_type)
      : HeaderParser(counters, HeaderSettings{detector_type, 0}) {}

  HeaderStatus parse(const std::uint8_t* data, std::uint32_t size, PacketHeader& out) noexcept;

 private:
  HeaderStatus reject(HeaderError error) noexcept;
  void count_sequence_error(std::uint32_t gap) noexcept;

  HeaderSettings settings_;
  Counter& packets_;
  Counter& heartbeats_;
  Counter& missing_packets_;
  Counter& sequence_jumps_;
  CounterGroup<HeaderError, kHeaderErrorNames.size()> errors_;
  std::array<std::uint32_t, kMaxOutputQueues> next_sequence_{};
  std::array<bool, kMaxOutputQueues> sequence_seen_{};
};

/// A PluginDescriptor::route_key for ESS readout: the output queue byte, so every packet of one
/// queue (and so every readout of one sequence stream) is processed in order by one thread.
/// Packets too short to hold it get key 0; the parser rejects them later.
std::uint32_t route_key(const PacketView& packet) noexcept;

}  // namespace efu::ess
