#include "efu/ess/readout_header.h"

#include "efu/ess/byte_reader.h"
#include "efu/ess/ess_time.h"

namespace efu::ess {

HeaderParser::HeaderParser(CounterRegistry& counters, std::uint8_t detector_type)
    : detector_type_(detector_type),
      packets_(counters.counter("parser.essheader.packets")),
      heartbeats_(counters.counter("parser.essheader.heartbeats")),
      missing_packets_(counters.counter("parser.essheader.missing_packets")),
      errors_{counters.counter("parser.essheader.errors.padding"),
              counters.counter("parser.essheader.errors.version"),
              counters.counter("parser.essheader.errors.cookie"),
              counters.counter("parser.essheader.errors.type"),
              counters.counter("parser.essheader.errors.length"),
              counters.counter("parser.essheader.errors.output_queue"),
              counters.counter("parser.essheader.errors.time_fraction"),
              counters.counter("parser.essheader.errors.prev_pulse_later"),
              counters.counter("parser.essheader.errors.sequence")} {}

HeaderStatus HeaderParser::parse(const std::uint8_t* data, std::uint32_t size,
                                 PacketHeader& out) noexcept {
  // A v0 header is the shortest valid packet; nothing past `size` is ever read.
  if (size < kHeaderSizeV0) {
    errors_.length.add();
    return HeaderStatus::kRejected;
  }
  if (data[0] != 0) {
    errors_.padding.add();
    return HeaderStatus::kRejected;
  }
  const std::uint8_t version = data[1];
  if (version > 1) {
    errors_.version.add();
    return HeaderStatus::kRejected;
  }
  if (data[2] != 'E' || data[3] != 'S' || data[4] != 'S') {
    errors_.cookie.add();
    return HeaderStatus::kRejected;
  }
  if (data[5] != detector_type_) {
    errors_.type.add();
    return HeaderStatus::kRejected;
  }
  const std::uint32_t header_size = version == 0 ? kHeaderSizeV0 : kHeaderSizeV1;
  const std::uint16_t total_length = load_u16(data + 6);
  if (size < header_size || total_length != size) {
    errors_.length.add();
    return HeaderStatus::kRejected;
  }
  const std::uint8_t queue = data[kOutputQueueOffset];
  if (queue >= kMaxOutputQueues) {
    errors_.output_queue.add();
    return HeaderStatus::kRejected;
  }
  const std::uint32_t pulse_high = load_u32(data + 10);
  const std::uint32_t pulse_low = load_u32(data + 14);
  const std::uint32_t prev_high = load_u32(data + 18);
  const std::uint32_t prev_low = load_u32(data + 22);
  if (pulse_low > kMaxTimeLow || prev_low > kMaxTimeLow) {
    errors_.time_fraction.add();
    return HeaderStatus::kRejected;
  }
  const std::uint64_t pulse_ns = to_ns(pulse_high, pulse_low);
  const std::uint64_t prev_ns = to_ns(prev_high, prev_low);
  if (prev_ns > pulse_ns) {
    errors_.prev_pulse_later.add();
    return HeaderStatus::kRejected;
  }

  const std::uint32_t sequence = load_u32(data + 26);
  if (sequence_seen_[queue] && sequence != next_sequence_[queue]) {
    errors_.sequence.add();
    // Unsigned distance; a "gap" of 2^31 or more is a restart or a reordering, not loss.
    const std::uint32_t gap = sequence - next_sequence_[queue];
    if (gap < 0x8000'0000U) missing_packets_.add(gap);
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
