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

HeaderStatus HeaderParser::parse(const std::uint8_t* data, std::uint32_t size,
                                 PacketHeader& out) noexcept {
  auto reject = [this](HeaderError e) {
    errors_[e].add();
    return HeaderStatus::kRejected;
  };
  // A v0 header is the shortest valid packet; nothing past `size` is ever read.
  if (size < kHeaderSizeV0) return reject(HeaderError::kLength);
  if (data[0] != 0) return reject(HeaderError::kPadding);
  const std::uint8_t version = data[1];
  if (version > 1) return reject(HeaderError::kVersion);
  if (data[2] != 'E' || data[3] != 'S' || data[4] != 'S') return reject(HeaderError::kCookie);
  if (data[5] != settings_.detector_type) return reject(HeaderError::kType);
  const std::uint32_t header_size = version == 0 ? kHeaderSizeV0 : kHeaderSizeV1;
  const std::uint16_t total_length = load_u16(data + 6);
  if (size < header_size || total_length != size) return reject(HeaderError::kLength);
  const std::uint8_t queue = data[kOutputQueueOffset];
  if (queue >= kMaxOutputQueues) return reject(HeaderError::kOutputQueue);
  const std::uint32_t pulse_high = load_u32(data + 10);
  const std::uint32_t pulse_low = load_u32(data + 14);
  const std::uint32_t prev_high = load_u32(data + 18);
  const std::uint32_t prev_low = load_u32(data + 22);
  if (pulse_low > kMaxTimeLow || prev_low > kMaxTimeLow) {
    return reject(HeaderError::kTimeFraction);
  }
  const std::uint64_t pulse_ns = to_ns(pulse_high, pulse_low);
  const std::uint64_t prev_ns = to_ns(prev_high, prev_low);
  if (prev_ns > pulse_ns) return reject(HeaderError::kPrevPulseLater);
  if (settings_.max_pulse_time_diff_ns != 0 &&
      pulse_ns - prev_ns > settings_.max_pulse_time_diff_ns) {
    return reject(HeaderError::kPulseTimeDiff);
  }

  const std::uint32_t sequence = load_u32(data + 26);
  if (sequence_seen_[queue] && sequence != next_sequence_[queue]) {
    errors_[HeaderError::kSequence].add();
    // Unsigned distance: a small backward step (a repeat or reordering) wraps to just below
    // 2^32 and is neither loss nor a jump.
    const std::uint32_t gap = sequence - next_sequence_[queue];
    if (gap < kMaxPlausibleSequenceGap) {
      missing_packets_.add(gap);
    } else if (gap <= 0U - kMaxPlausibleSequenceGap) {
      sequence_jumps_.add();
    }
  }
  sequence_seen_[queue] = true;
  next_sequence_[queue] = sequence + 1;

  out.version = version;
  out.type = data[5];
  out.total_length = total_length;
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
