#include "efu/ess/readout_header.h"

#include "efu/ess/byte_reader.h"
#include "efu/ess/ess_time.h"

namespace efu::ess {

HeaderParser::HeaderParser(CounterRegistry& counters, const HeaderSettings& settings)
    : settings_(settings),
      packets_(counters.counter("parser.essheader.packets")),
      heartbeats_(counters.counter("parser.essheader.heartbeats")),
      missing_packets_(counters.counter("parser.essheader.missing_packets")),
      sequence_jumps_(counters.counter("parser.essheader.sequence_jumps")),
      errors_(counters, "parser.essheader.errors.", kHeaderErrorNames) {}

// parse() is on the hot path and nearly every packet passes every check. The checks are small
// inline functions that only say which one failed; what is done for a rejected packet or a
// sequence error is in cold, out-of-line member functions, defined before parse() so that the
// compiler knows them as cold where parse() calls them. The common path, sequence tracking
// included, is written in parse() itself: a member function of a shared library that is not
// inline is called through the PLT, never inlined.
namespace {

// What the checks return when the header passed them.
constexpr HeaderError kPassed = HeaderError::kCount;

// The fixed fields, in field order: padding, version, cookie, type, length, output queue. A v0
// header is the shortest valid packet; nothing past `size` is ever read.
inline HeaderError check_fields(const std::uint8_t* data, std::uint32_t size,
                                std::uint8_t detector_type) noexcept {
  if (size < kHeaderSizeV0) return HeaderError::kLength;
  if (data[0] != 0) return HeaderError::kPadding;
  const std::uint8_t version = data[1];
  if (version > 1) return HeaderError::kVersion;
  if (data[2] != 'E' || data[3] != 'S' || data[4] != 'S') return HeaderError::kCookie;
  if (data[5] != detector_type) return HeaderError::kType;
  const std::uint32_t header_size = version == 0 ? kHeaderSizeV0 : kHeaderSizeV1;
  if (size < header_size || load_u16(data + 6) != size) return HeaderError::kLength;
  if (data[kOutputQueueOffset] >= kMaxOutputQueues) return HeaderError::kOutputQueue;
  return kPassed;
}

// The pulse and previous pulse times (set in ns when valid): fractions in range, the previous
// pulse not later than the pulse, and at most `max_diff_ns` between them (0: no limit).
inline HeaderError check_times(const std::uint8_t* data, std::uint64_t max_diff_ns,
                               std::uint64_t& pulse_ns, std::uint64_t& prev_ns) noexcept {
  const std::uint32_t pulse_low = load_u32(data + 14);
  const std::uint32_t prev_low = load_u32(data + 22);
  if (pulse_low > kMaxTimeLow || prev_low > kMaxTimeLow) return HeaderError::kTimeFraction;
  pulse_ns = to_ns(load_u32(data + 10), pulse_low);
  prev_ns = to_ns(load_u32(data + 18), prev_low);
  if (prev_ns > pulse_ns) return HeaderError::kPrevPulseLater;
  if (max_diff_ns != 0 && pulse_ns - prev_ns > max_diff_ns) return HeaderError::kPulseTimeDiff;
  return kPassed;
}

}  // namespace

[[gnu::cold, gnu::noinline]] HeaderStatus HeaderParser::reject(HeaderError error) noexcept {
  errors_[error].add();
  return HeaderStatus::kRejected;
}

// `gap` is the unsigned distance from the expected number: a small backward step (a repeat or
// reordering) wraps to just below 2^32 and is neither loss nor a jump.
[[gnu::cold, gnu::noinline]] void HeaderParser::count_sequence_error(std::uint32_t gap) noexcept {
  errors_[HeaderError::kSequence].add();
  if (gap < kMaxPlausibleSequenceGap) {
    missing_packets_.add(gap);
  } else if (gap <= 0U - kMaxPlausibleSequenceGap) {
    sequence_jumps_.add();
  }
}

HeaderStatus HeaderParser::parse(const std::uint8_t* data, std::uint32_t size,
                                 PacketHeader& out) noexcept {
  if (const HeaderError e = check_fields(data, size, settings_.detector_type); e != kPassed)
      [[unlikely]] {
    return reject(e);
  }
  std::uint64_t pulse_ns = 0;
  std::uint64_t prev_ns = 0;
  if (const HeaderError e = check_times(data, settings_.max_pulse_time_diff_ns, pulse_ns, prev_ns);
      e != kPassed) [[unlikely]] {
    return reject(e);
  }
  const std::uint8_t version = data[1];
  const std::uint32_t header_size = version == 0 ? kHeaderSizeV0 : kHeaderSizeV1;
  const std::uint8_t queue = data[kOutputQueueOffset];
  const std::uint32_t sequence = load_u32(data + 26);
  if (sequence_seen_[queue] && sequence != next_sequence_[queue]) [[unlikely]] {
    count_sequence_error(sequence - next_sequence_[queue]);
  }
  sequence_seen_[queue] = true;
  next_sequence_[queue] = sequence + 1;

  out.version = version;
  out.type = data[5];
  out.total_length = load_u16(data + 6);
  out.output_queue = queue;
  out.time_source = data[9];
  out.sequence = sequence;
  out.header_size = header_size;
  out.pulse_time_ns = pulse_ns;
  out.prev_pulse_time_ns = prev_ns;

  packets_.add();
  if (size == header_size) {
    heartbeats_.add();
    return HeaderStatus::kHeartbeat;
  }
  return HeaderStatus::kData;
}

std::uint32_t route_key(const PacketView& packet) noexcept {
  return packet.size > kOutputQueueOffset ? packet.data[kOutputQueueOffset] : 0;
}

}  // namespace efu::ess
