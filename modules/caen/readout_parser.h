// CAEN readout blocks of one ESS packet → (pulse, TOF, pixel) events. Every rejected readout is
// counted under readouts.errors.<reason> and skipped; the blocks around it are still used.
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>

#include "caen_readout.h"
#include "efu/counter_group.h"
#include "efu/counters.h"
#include "efu/ess/ess_time.h"
#include "efu/ess/readout_blocks.h"
#include "efu/ess/readout_header.h"
#include "pixel_map.h"

namespace efu::caen {

/// Why a well-framed readout was rejected: readouts.errors.<name>. (A wrong data_length or a
/// short tail is counted by the block walker as readouts.errors.length / .truncated.) The
/// entries from kRing on are PixelMap's MapStatus, in the same order.
enum class ReadoutError : std::uint8_t {
  kFiber,
  kFen,
  kTimeFraction,
  kTofNegative,
  kTofTooLarge,
  kRing,
  kGroup,
  kAmplitudeZero,
  kAmplitudeLow,
  kAmplitudeHigh,
  kPosition,
  kCalibrationGroup,
  kOutsideInterval,
  kPixel,
  kCount
};
inline constexpr std::array<const char*, static_cast<std::size_t>(ReadoutError::kCount)>
    kReadoutErrorNames{"fiber",
                       "fen",
                       "time_fraction",
                       "tof_negative",
                       "tof_too_large",
                       "ring",
                       "group",
                       "amplitude_zero",
                       "amplitude_low",
                       "amplitude_high",
                       "position",
                       "calibration_group",
                       "outside_interval",
                       "pixel"};

inline constexpr ReadoutError to_error(MapStatus s) noexcept {
  switch (s) {
    case MapStatus::kRing:
      return ReadoutError::kRing;
    case MapStatus::kFen:
      return ReadoutError::kFen;
    case MapStatus::kGroup:
      return ReadoutError::kGroup;
    case MapStatus::kAmplitudeZero:
      return ReadoutError::kAmplitudeZero;
    case MapStatus::kAmplitudeLow:
      return ReadoutError::kAmplitudeLow;
    case MapStatus::kAmplitudeHigh:
      return ReadoutError::kAmplitudeHigh;
    case MapStatus::kPosition:
      return ReadoutError::kPosition;
    case MapStatus::kCalibrationGroup:
      return ReadoutError::kCalibrationGroup;
    case MapStatus::kOutsideInterval:
      return ReadoutError::kOutsideInterval;
    case MapStatus::kOk:
    case MapStatus::kPixel:
      break;
  }
  return ReadoutError::kPixel;
}

struct ReadoutSettings {
  std::uint64_t max_tof_ns = 0;
  std::int64_t readout_delay_ns = 0;  // added to each readout's time before the TOF
};

class ReadoutParser {
 public:
  ReadoutParser(CounterRegistry& counters, const PixelMap& pixels, const ReadoutSettings& settings)
      : pixels_(pixels),
        settings_(settings),
        blocks_(counters, kReadoutSize),
        events_(counters.counter("events.formed")),
        clamp_low_(counters.counter("calibration.clamp_low")),
        clamp_high_(counters.counter("calibration.clamp_high")),
        errors_(counters, "readouts.errors.", kReadoutErrorNames) {}

  /// Parses the bytes after the header; per good readout `on_event(pulse_ns, tof_ns, pixel,
  /// source)` with the event's source index (MapResult::source), or `on_event(pulse_ns, tof_ns,
  /// pixel)` for a caller that has one sink (tools and benchmarks).
  template <typename OnEvent>
  void parse(const std::uint8_t* data, std::uint32_t size, const ess::PacketHeader& header,
             OnEvent&& on_event) noexcept {
    blocks_.walk(data, size, [&](const ess::ReadoutBlock& block) {
      const CaenReadout r = read_readout(block.data);
      if (r.fiber > kMaxFiber) return errors_[ReadoutError::kFiber].add();
      if (r.fen > kMaxFen) return errors_[ReadoutError::kFen].add();
      if (r.time_low > ess::kMaxTimeLow) return errors_[ReadoutError::kTimeFraction].add();
      const std::uint64_t time_ns = ess::to_ns(r.time_high, r.time_low) +
                                    static_cast<std::uint64_t>(settings_.readout_delay_ns);
      const ess::Tof tof = ess::time_of_flight(time_ns, header.pulse_time_ns,
                                               header.prev_pulse_time_ns, settings_.max_tof_ns);
      if (tof.status != ess::TofStatus::kOk) {
        return errors_[tof.status == ess::TofStatus::kNegative ? ReadoutError::kTofNegative
                                                               : ReadoutError::kTofTooLarge]
            .add();
      }
      const MapResult m = pixels_.map(r);
      if (m.status != MapStatus::kOk) return errors_[to_error(m.status)].add();
      if (m.clamp == Calibration::Clamp::kLow) clamp_low_.add();
      if (m.clamp == Calibration::Clamp::kHigh) clamp_high_.add();
      events_.add();
      const auto tof_ns = static_cast<std::uint32_t>(tof.tof_ns);
      if constexpr (std::is_invocable_v<OnEvent&, std::uint64_t, std::uint32_t, std::uint32_t,
                                        std::uint32_t>) {
        on_event(tof.pulse_ns, tof_ns, m.pixel, std::uint32_t{m.source});
      } else {
        on_event(tof.pulse_ns, tof_ns, m.pixel);
      }
    });
  }

 private:
  const PixelMap& pixels_;
  ReadoutSettings settings_;
  ess::ReadoutBlockWalker blocks_;
  Counter& events_;
  Counter& clamp_low_;
  Counter& clamp_high_;
  CounterGroup<ReadoutError, kReadoutErrorNames.size()> errors_;
};

}  // namespace efu::caen
