// Builds ESS readout packets for generators and tests: one open packet per output queue, readout
// blocks appended until the next would not fit, then the header written with the queue's next
// sequence number. The inverse of HeaderParser + ReadoutBlockWalker.
//
//   ess::PacketAssembler packets(/*type=*/0x48, /*version=*/1, /*max_size=*/8972, /*queues=*/2);
//   if (!packets.fits(q, 20)) sender.send(packets.finish(q, pulse, prev));
//   write_my_readout(packets.append(q, 20), ...);
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "efu/ess/ess_time.h"
#include "efu/ess/header_writer.h"

namespace efu::ess {

class PacketAssembler {
 public:
  PacketAssembler(std::uint8_t type, std::uint8_t version, std::uint32_t max_size, unsigned queues)
      : type_(type), version_(version), max_size_(max_size), queues_(queues) {
    for (Queue& q : queues_) q.bytes.reserve(max_size);
  }

  unsigned queues() const noexcept { return static_cast<unsigned>(queues_.size()); }
  std::uint8_t version() const noexcept { return version_; }
  bool empty(unsigned queue) const noexcept { return queues_[queue].bytes.empty(); }
  /// True if a block of `size` bytes fits in the queue's open packet (or in a new one).
  bool fits(unsigned queue, std::uint32_t size) const noexcept {
    const Queue& q = queues_[queue];
    const std::size_t used = q.bytes.empty() ? header_size(version_) : q.bytes.size();
    return used + size <= max_size_;
  }
  /// Room for one block of `size` bytes at the end of the queue's open packet; the caller writes
  /// it. Check fits() first.
  std::uint8_t* append(unsigned queue, std::uint32_t size) {
    Queue& q = queues_[queue];
    if (q.bytes.empty()) q.bytes.resize(header_size(version_));
    const std::size_t at = q.bytes.size();
    q.bytes.resize(at + size);
    return q.bytes.data() + at;
  }
  /// Writes the header (the queue's next sequence number) and returns the finished packet; it
  /// stays valid until the queue's next append(). A queue with no blocks gives a heartbeat.
  std::span<const std::uint8_t> finish(unsigned queue, EssTime pulse, EssTime prev_pulse,
                                       std::uint8_t time_source = 0) {
    Queue& q = queues_[queue];
    if (q.bytes.empty()) q.bytes.resize(header_size(version_));
    HeaderFields f;
    f.version = version_;
    f.type = type_;
    f.total_length = static_cast<std::uint16_t>(q.bytes.size());
    f.output_queue = static_cast<std::uint8_t>(queue);
    f.time_source = time_source;
    f.pulse = pulse;
    f.prev_pulse = prev_pulse;
    f.sequence = q.sequence++;
    write_header(q.bytes.data(), f);
    finished_.swap(q.bytes);
    q.bytes.clear();
    return finished_;
  }
  /// The sequence number the queue's next packet gets (fault injection may take one).
  std::uint32_t& next_sequence(unsigned queue) noexcept { return queues_[queue].sequence; }

 private:
  struct Queue {
    std::vector<std::uint8_t> bytes;
    std::uint32_t sequence = 0;
  };
  std::uint8_t type_;
  std::uint8_t version_;
  std::uint32_t max_size_;
  std::vector<Queue> queues_;
  std::vector<std::uint8_t> finished_;
};

}  // namespace efu::ess
