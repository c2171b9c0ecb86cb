#include "efu/gen/ess_stream.h"

#include <algorithm>
#include <cstdio>

namespace efu::gen {
namespace {
// The sender's buffers have room for the largest data packet, or for an oversize fault.
SenderSettings with_room_for_faults(SenderSettings s, const GeneratorOptions& o) {
  if (o.fault_fraction > 0 && names_oversize(o.fault_kinds)) {
    s.max_size = std::max<std::uint32_t>(s.max_size, static_cast<std::uint32_t>(kOversizeBytes));
  }
  return s;
}
}  // namespace

EssStream::EssStream(const GeneratorOptions& o, const std::string& program, std::uint8_t type,
                     std::span<const Fault> faults, std::uint8_t wrong_type)
    : pulses_(o.pulses),
      count_(o.count),
      duration_s_(o.duration_s),
      start_time_ns_(o.start_time_ns),
      pacer_(rate_of(o)),
      sender_(with_room_for_faults(sender_settings(o, program), o), pacer_),
      packets_(type, static_cast<std::uint8_t>(o.header_version), o.size, o.queues),
      faults_(parse_fault_kinds(o.fault_kinds, faults, o.fault_fraction), o.fault_fraction,
              wrong_type),
      replay_pulses_(o.replay_pulses) {}

void EssStream::send(std::span<const std::uint8_t> bytes) {
  if (!sender_.send(bytes.data(), static_cast<std::uint32_t>(bytes.size()))) {
    throw std::runtime_error(sender_.error());
  }
  ++sent_packets_;
  if (recording_) {
    recorded_offsets_.push_back(recorded_.size());
    recorded_sizes_.push_back(static_cast<std::uint32_t>(bytes.size()));
    recorded_data_.push_back(0);  // send_data() marks its data packet
    recorded_.insert(recorded_.end(), bytes.begin(), bytes.end());
  }
}

void EssStream::replay(std::uint64_t pulse) {
  const std::size_t first = pulse == 0 ? 0 : recorded_pulse_end_[pulse - 1];
  for (std::size_t i = first; i < recorded_pulse_end_[pulse]; ++i) {
    send({recorded_.data() + recorded_offsets_[i], recorded_sizes_[i]});
    data_packets_ += recorded_data_[i];
  }
}

void check_neutron_spacing(std::uint64_t neutrons_per_pulse, std::uint64_t spacing_ns,
                           std::uint64_t min_spacing_ns, const std::string& why) {
  if (spacing_ns >= min_spacing_ns) return;
  throw ConfigError("--neutrons-per-pulse: '" + std::to_string(neutrons_per_pulse) +
                    "' spaces neutrons " + std::to_string(spacing_ns) +
                    " ns apart; expected at most " +
                    std::to_string(kNeutronWindowNs / min_spacing_ns) + why);
}

std::span<const std::uint8_t> shuffle_readouts(std::span<const std::uint8_t> packet,
                                               std::size_t header, std::size_t block, Random& rng,
                                               std::vector<std::uint8_t>& scratch) {
  scratch.assign(packet.begin(), packet.end());
  const std::size_t n = scratch.size() > header ? (scratch.size() - header) / block : 0;
  auto at = [&](std::size_t k) {
    return scratch.begin() + static_cast<std::ptrdiff_t>(header + k * block);
  };
  for (std::size_t i = n; i > 1; --i) {
    const std::size_t j = rng.below(i);
    std::swap_ranges(at(i - 1), at(i), at(j));
  }
  return scratch;
}

std::span<const std::uint8_t> finish_packet(ess::PacketAssembler& packets, unsigned queue,
                                            std::uint64_t pulse_ns, std::uint64_t prev_ns,
                                            const ReorderOptions& o, std::size_t block, Random& rng,
                                            std::vector<std::uint8_t>& scratch) {
  const std::span<const std::uint8_t> packet =
      packets.finish(queue, ess::to_ess(pulse_ns), ess::to_ess(prev_ns));
  if (!o.shuffle) return packet;
  return shuffle_readouts(packet, ess::header_size(packets.version()), block, rng, scratch);
}

SummaryJson& EssStream::add_sent(SummaryJson& json) const {
  return json.number("packets", sent_packets_).number("data_packets", data_packets_);
}

SummaryJson& EssStream::add_errors(SummaryJson& json) const {
  return json.number("send_errors", send_errors()).counts("faults", faults_.counts());
}

void EssStream::print_summary(std::uint64_t readouts, std::uint64_t neutrons, std::uint64_t noise,
                              const char* noise_name) const {
  std::printf(
      "sent %llu packets (%llu data), %llu readouts, %llu neutrons, %llu %s, %llu send errors\n",
      static_cast<unsigned long long>(sent_packets_),
      static_cast<unsigned long long>(data_packets_), static_cast<unsigned long long>(readouts),
      static_cast<unsigned long long>(neutrons), static_cast<unsigned long long>(noise), noise_name,
      static_cast<unsigned long long>(send_errors()));
}

}  // namespace efu::gen
