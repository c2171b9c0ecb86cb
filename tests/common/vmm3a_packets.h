// VMM3a test packets and a sink that records events, for every VMM3a plugin's tests (multiblade,
// nmx, trex).
//
// Packets are written byte by byte from the format's definition (docs/architecture.md §5.1,
// §5.2), not with the project's own header or readout writer, so a bug there cannot hide in a
// matching bug here. A family's test support brings these into its own test namespace
// (`using namespace efu::test::vmm3a;`) and names its builder with its type byte.
#pragma once

#include <cstdint>
#include <vector>

#include "efu/ess/ess_time.h"
#include "efu/plugin.h"

namespace efu::test::vmm3a {

inline constexpr std::uint64_t kPulseNs = 1'700'000'000'000'000'000ULL;
inline constexpr std::uint64_t kPeriodNs = 71'428'571;

struct Event {
  std::uint64_t pulse_ns;
  std::uint32_t tof_ns;
  std::uint32_t pixel;
  bool operator==(const Event&) const = default;
  auto operator<=>(const Event&) const = default;
};

class RecordingSink : public EventSink {
 public:
  void add(std::uint64_t pulse_time_ns, std::uint32_t tof_ns, std::uint32_t pixel) override {
    events.push_back(Event{pulse_time_ns, tof_ns, pixel});
  }
  std::vector<Event> events;
};

inline void put8(std::vector<std::uint8_t>& b, unsigned v) {
  b.push_back(static_cast<std::uint8_t>(v));
}
inline void put16(std::vector<std::uint8_t>& b, unsigned v) {
  put8(b, v & 0xFF);
  put8(b, (v >> 8) & 0xFF);
}
inline void put32(std::vector<std::uint8_t>& b, std::uint32_t v) {
  put16(b, v & 0xFFFF);
  put16(b, v >> 16);
}

/// ESS time (s, ticks of 88.0525 MHz) of ns since the epoch, on the nearest tick; tests only use
/// it for times that the test itself then converts back with ess::to_ns.
inline ess::EssTime ticks(std::uint64_t ns) { return ess::to_ess(ns); }

/// The 20 bytes of one VMM3a readout: fiber, fen, data_length, time_high, time_low, bc (0),
/// otadc, geo (0), tdc, vmm, channel.
inline std::vector<std::uint8_t> readout_bytes(std::uint8_t fiber, std::uint8_t fen,
                                               std::uint16_t length, std::uint32_t high,
                                               std::uint32_t low, std::uint16_t otadc,
                                               std::uint8_t tdc, std::uint8_t vmm,
                                               std::uint8_t channel) {
  std::vector<std::uint8_t> b;
  put8(b, fiber);
  put8(b, fen);
  put16(b, length);
  put32(b, high);
  put32(b, low);
  put16(b, 0);  // bc
  put16(b, otadc);
  put8(b, 0);  // geo
  put8(b, tdc);
  put8(b, vmm);
  put8(b, channel);
  return b;
}

/// One ESS v1 packet of VMM3a readouts of the detector type `kType`; pulse at kPulseNs, previous
/// pulse one period earlier unless pulse() says otherwise.
template <std::uint8_t kType>
class PacketBuilder {
 public:
  explicit PacketBuilder(std::uint32_t sequence = 0, std::uint8_t queue = 0,
                         std::uint8_t type = kType)
      : sequence_(sequence), queue_(queue), type_(type) {}

  PacketBuilder& pulse(std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    pulse_ = pulse_ns;
    prev_ = prev_ns;
    return *this;
  }

  PacketBuilder& readout(std::uint8_t fiber, std::uint8_t fen, std::uint16_t length,
                         std::uint32_t high, std::uint32_t low, std::uint16_t otadc,
                         std::uint8_t tdc, std::uint8_t vmm, std::uint8_t channel) {
    return raw(readout_bytes(fiber, fen, length, high, low, otadc, tdc, vmm, channel));
  }

  /// A readout at pulse + tof_ns (on the nearest tick).
  PacketBuilder& hit(std::uint8_t fiber, std::uint8_t fen, std::uint8_t vmm, std::uint8_t channel,
                     std::uint16_t adc, std::uint64_t tof_ns) {
    const ess::EssTime t = ticks(pulse_ + tof_ns);
    return readout(fiber, fen, 20, t.high, t.low, adc, 0, vmm, channel);
  }

  PacketBuilder& raw(const std::vector<std::uint8_t>& extra) {
    body_.insert(body_.end(), extra.begin(), extra.end());
    return *this;
  }

  std::size_t readouts() const { return body_.size() / 20; }

  std::vector<std::uint8_t> build() const {
    std::vector<std::uint8_t> b;
    put8(b, 0);  // padding
    put8(b, 1);  // version 1: 32-byte header
    put8(b, 'E');
    put8(b, 'S');
    put8(b, 'S');
    put8(b, type_);
    put16(b, static_cast<unsigned>(32 + body_.size()));
    put8(b, queue_);
    put8(b, 0);  // time source
    const ess::EssTime p = ticks(pulse_);
    const ess::EssTime q = ticks(prev_);
    put32(b, p.high);
    put32(b, p.low);
    put32(b, q.high);
    put32(b, q.low);
    put32(b, sequence_);
    put16(b, 0);  // v1 padding
    b.insert(b.end(), body_.begin(), body_.end());
    return b;
  }

 private:
  std::uint32_t sequence_;
  std::uint8_t queue_;
  std::uint8_t type_;
  std::uint64_t pulse_ = kPulseNs;
  std::uint64_t prev_ = kPulseNs - kPeriodNs;
  std::vector<std::uint8_t> body_;
};

/// The time the pipeline decodes for `ns` (on ticks, converted back as ess::to_ns does), and the
/// TOF it reports for a readout written at kPulseNs + tof_ns.
inline std::uint64_t decoded(std::uint64_t ns) {
  const ess::EssTime t = ticks(ns);
  return ess::to_ns(t.high, t.low);
}
inline std::uint32_t quantised_tof(std::uint64_t tof_ns) {
  return static_cast<std::uint32_t>(decoded(kPulseNs + tof_ns) - decoded(kPulseNs));
}

}  // namespace efu::test::vmm3a
