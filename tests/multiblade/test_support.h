// Builders for multiblade test packets and a sink that records events.
#pragma once

#include <cstdint>
#include <vector>

#include "efu/ess/header_writer.h"
#include "efu/plugin.h"
#include "hit.h"
#include "vmm3_readout.h"

namespace efu::multiblade::test {

inline constexpr std::uint64_t kPulseNs = 1'700'000'000'000'000'000ULL;

struct Event {
  std::uint64_t pulse_ns;
  std::uint32_t tof_ns;
  std::uint32_t pixel;
  bool operator==(const Event&) const = default;
};

class RecordingSink : public EventSink {
 public:
  void add(std::uint64_t pulse_time_ns, std::uint32_t tof_ns, std::uint32_t pixel) override {
    events.push_back(Event{pulse_time_ns, tof_ns, pixel});
  }
  std::vector<Event> events;
};

/// One ESS packet of VMM3a readouts; pulse at kPulseNs, previous pulse 1/14 s earlier.
class PacketBuilder {
 public:
  explicit PacketBuilder(std::uint32_t sequence = 0, std::uint8_t queue = 0) {
    fields_.type = kDetectorType;
    fields_.output_queue = queue;
    fields_.sequence = sequence;
    fields_.pulse = ess::to_ess(kPulseNs);
    fields_.prev_pulse = ess::to_ess(kPulseNs - 71'428'571);
    bytes_.resize(ess::kHeaderSizeV1);
  }

  PacketBuilder& readout(const Vmm3Readout& r) {
    const std::size_t at = bytes_.size();
    bytes_.resize(at + kReadoutSize);
    write_readout(bytes_.data() + at, r);
    return *this;
  }

  /// A readout at kPulseNs + tof_ns.
  PacketBuilder& hit(std::uint8_t fiber, std::uint8_t fen, std::uint8_t vmm, std::uint8_t channel,
                     std::uint16_t adc, std::uint64_t tof_ns) {
    const ess::EssTime t = ess::to_ess(kPulseNs + tof_ns);
    return readout(
        Vmm3Readout{fiber, fen, kReadoutSize, t.high, t.low, 0, adc, 0, 0, vmm, channel});
  }

  PacketBuilder& raw(std::vector<std::uint8_t> extra) {
    bytes_.insert(bytes_.end(), extra.begin(), extra.end());
    return *this;
  }

  std::vector<std::uint8_t> build() {
    fields_.total_length = static_cast<std::uint16_t>(bytes_.size());
    ess::write_header(bytes_.data(), fields_);
    return bytes_;
  }

 private:
  ess::HeaderFields fields_;
  std::vector<std::uint8_t> bytes_;
};

/// The TOF the pipeline reports for a readout written at kPulseNs + tof_ns (ESS tick rounding).
inline std::uint32_t quantised_tof(std::uint64_t tof_ns) {
  const ess::EssTime t = ess::to_ess(kPulseNs + tof_ns);
  return static_cast<std::uint32_t>(
      ess::to_ns(t.high, t.low) -
      ess::to_ns(ess::to_ess(kPulseNs).high, ess::to_ess(kPulseNs).low));
}

}  // namespace efu::multiblade::test
