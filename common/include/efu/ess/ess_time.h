// ESS time: seconds since the Unix epoch plus ticks of the 88.0525 MHz timing-system clock
// (docs/architecture.md §5.1), and the time-of-flight rule shared by every ESS detector plugin
// (§5.2). The pulse time rule (MaxPulseTimeNS: pulse - previous pulse) is checked by the
// HeaderParser.
#pragma once

#include <cstdint>

namespace efu::ess {

inline constexpr std::uint32_t kTicksPerSecond = 88'052'500;
inline constexpr std::uint32_t kMaxTimeLow = kTicksPerSecond - 1;
inline constexpr std::uint64_t kNsPerSecond = 1'000'000'000;
/// One tick in ns (11.3568...), as a double: exactly the reference system's ESSClockTick.
inline constexpr double kTickNs = static_cast<double>(kNsPerSecond) / kTicksPerSecond;

/// ESS time -> ns since the Unix epoch, computed exactly as the facility's reference system
/// computes it (ESSTime::toNS): high s in ns plus low ticks times the double tick length,
/// truncated. Every efu plugin uses this, so efu and the reference give identical pulse times
/// and TOFs for the same readouts (the truncation is at most one ns lower than exact rounding).
///
/// The product is below 2^36 for any 32-bit `low`, so truncating it through int64 gives the
/// same value as through uint64; x86-64 has a one-instruction double → int64 conversion, while
/// double → uint64 needs a compare and a branch around it (measurable at 100 M readouts/s).
constexpr std::uint64_t to_ns(std::uint32_t high, std::uint32_t low) noexcept {
  return std::uint64_t{high} * kNsPerSecond +
         static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<double>(low) * kTickNs));
}

struct EssTime {
  std::uint32_t high;  // s
  std::uint32_t low;   // ticks, <= kMaxTimeLow
};

/// ns -> the ESS time whose to_ns() is nearest to it (for generators and tests). A generator that
/// needs its ground truth exact records to_ns(to_ess(t)), which is within 6 ns of t.
constexpr EssTime to_ess(std::uint64_t ns) noexcept {
  auto high = static_cast<std::uint32_t>(ns / kNsPerSecond);
  const std::uint64_t frac = ns % kNsPerSecond;
  auto low = static_cast<std::uint64_t>(static_cast<double>(frac) / kTickNs);
  // The estimate is within one tick; take the neighbour whose converted time is nearest.
  auto distance = [frac](std::uint64_t l) {
    const std::uint64_t t = static_cast<std::uint64_t>(static_cast<double>(l) * kTickNs);
    return t > frac ? t - frac : frac - t;
  };
  if (low > 0 && distance(low - 1) <= distance(low)) --low;
  if (distance(low + 1) < distance(low)) ++low;
  if (low >= kTicksPerSecond) {  // nearest is the next second's first tick
    low = 0;
    ++high;
  }
  return EssTime{high, static_cast<std::uint32_t>(low)};
}

enum class TofStatus : std::uint8_t {
  kOk,
  kNegative,  // earlier than both the pulse and the previous pulse
  kTooLarge,  // later than max_tof_ns after its reference pulse
};

struct Tof {
  std::uint64_t pulse_ns;  // the reference pulse the TOF is relative to
  std::uint64_t tof_ns;
  TofStatus status;
};

/// TOF of a readout at `time_ns` against its packet's pulse. A readout earlier than the pulse
/// belongs to the previous pulse (the packet header was stamped after a new pulse started), so
/// it is measured against `prev_pulse_ns` instead.
constexpr Tof time_of_flight(std::uint64_t time_ns, std::uint64_t pulse_ns,
                             std::uint64_t prev_pulse_ns, std::uint64_t max_tof_ns) noexcept {
  std::uint64_t reference = pulse_ns;
  if (time_ns < pulse_ns) {
    if (time_ns < prev_pulse_ns) return Tof{pulse_ns, 0, TofStatus::kNegative};
    reference = prev_pulse_ns;
  }
  const std::uint64_t tof = time_ns - reference;
  return Tof{reference, tof, tof > max_tof_ns ? TofStatus::kTooLarge : TofStatus::kOk};
}

}  // namespace efu::ess
