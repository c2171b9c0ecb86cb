// ESS time: seconds since the Unix epoch plus ticks of the 88.0525 MHz timing-system clock
// (design.md §5.1), and the time-of-flight rule shared by every ESS detector plugin.
#pragma once

#include <cstdint>

namespace efu::ess {

inline constexpr std::uint32_t kTicksPerSecond = 88'052'500;
inline constexpr std::uint32_t kMaxTimeLow = kTicksPerSecond - 1;
inline constexpr std::uint64_t kNsPerSecond = 1'000'000'000;

/// ESS time → ns since the Unix epoch, rounded to the nearest ns. Integer only: a tick is
/// 11.3568... ns, so any floating-point tick length would drift over a second, and truncating
/// instead of rounding would bias every time by half a ns. low * 1e9 < 8.9e16 (and < 4.3e18 even
/// for an unchecked low), so the product never overflows 64 bits.
constexpr std::uint64_t to_ns(std::uint32_t high, std::uint32_t low) noexcept {
  return std::uint64_t{high} * kNsPerSecond +
         (std::uint64_t{low} * kNsPerSecond + kTicksPerSecond / 2) / kTicksPerSecond;
}

struct EssTime {
  std::uint32_t high;  // s
  std::uint32_t low;   // ticks, <= kMaxTimeLow
};

/// ns → the nearest ESS time (for generators and tests). Round trip to_ns(to_ess(t)) is within
/// half a tick (5.7 ns) of t.
constexpr EssTime to_ess(std::uint64_t ns) noexcept {
  auto high = static_cast<std::uint32_t>(ns / kNsPerSecond);
  const std::uint64_t frac = ns % kNsPerSecond;
  std::uint64_t low = (frac * kTicksPerSecond + kNsPerSecond / 2) / kNsPerSecond;
  if (low == kTicksPerSecond) {  // rounded up into the next second
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
