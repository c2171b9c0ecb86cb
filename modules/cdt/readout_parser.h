// CDT readout blocks of one ESS packet → (pulse, TOF, pixel) events. One readout is one neutron:
// every rejected readout is counted under readouts.errors.<reason> and skipped; the blocks around
// it are still used (docs/cdt.md "Counters").
#pragma once

#include <array>
#include <cstdint>

#include "cdt_readout.h"
#include "config.h"
#include "efu/counter_group.h"
#include "efu/counters.h"
#include "efu/ess/ess_time.h"
#include "efu/ess/readout_blocks.h"
#include "efu/ess/readout_header.h"
#include "geometry.h"
#include "pixel_map.h"

namespace efu::cdt {

/// Why a well-framed readout was rejected: readouts.errors.<name>. (A wrong data_length or a
/// short tail is the block walker's readouts.errors.length / .truncated.) The first entries are
/// the geometry's PixelStatus, in the same order, so a status indexes this directly.
enum class ReadoutError : std::uint8_t {
  kRing,
  kFen,
  kUnconfigured,
  kUnit,
  kCassette,
  kIndex,
  kPixel,
  kTimeFraction,
  kTofNegative,
  kTofTooLarge,
  kCount
};
inline constexpr std::array<const char*, static_cast<std::size_t>(ReadoutError::kCount)>
    kReadoutErrorNames{"ring",  "fen",   "unconfigured",  "unit",         "cassette",
                       "index", "pixel", "time_fraction", "tof_negative", "tof_too_large"};
static_assert(static_cast<std::size_t>(ReadoutError::kTimeFraction) == kPixelErrors,
              "the geometry's rejections come first, in PixelStatus order");

inline constexpr ReadoutError to_error(PixelStatus s) noexcept {
  return static_cast<ReadoutError>(s);
}

class ReadoutParser {
 public:
  /// `modules` is the instrument's table, resolved here once into this parser's PixelMap;
  /// `max_tof_ns` bounds the TOF as in every ESS family (ess::time_of_flight).
  ReadoutParser(CounterRegistry& counters, const ModuleTable& modules, std::uint64_t max_tof_ns)
      : pixels_(modules),
        max_tof_ns_(max_tof_ns),
        blocks_(counters, kReadoutSize),
        events_(counters.counter("events.formed")),
        errors_(counters, "readouts.errors.", kReadoutErrorNames) {}

  /// Parses the bytes after the header; `on_event(pulse_ns, tof_ns, pixel)` per good readout.
  /// The pixel comes first, as the reference validates (ring, FEN, config) before the time;
  /// each readout lands in exactly one tally. The tallies are locals, added to the counters
  /// once per packet: one atomic store per counter that moved, not one per readout.
  template <typename OnEvent>
  void parse(const std::uint8_t* data, std::uint32_t size, const ess::PacketHeader& header,
             OnEvent&& on_event) noexcept {
    std::array<std::uint32_t, kOutcomes> tally{};
    const std::uint64_t pulse_ns = header.pulse_time_ns;
    const std::uint64_t prev_pulse_ns = header.prev_pulse_time_ns;
    blocks_.walk(data, size, [&](const ess::ReadoutBlock& block) {
      const std::uint8_t* b = block.data;
      const PixelResult p = pixels_.pixel(block.fiber, block.fen, b[kUnitOffset],
                                          b[kAnodeOffset], b[kCathodeOffset]);
      if (p.status != PixelStatus::kOk) {
        ++tally[index(to_error(p.status))];
        return;
      }
      const std::uint32_t time_low = ess::load_u32(b + kTimeLowOffset);
      if (time_low > ess::kMaxTimeLow) [[unlikely]] {
        ++tally[index(ReadoutError::kTimeFraction)];
        return;
      }
      const ess::Tof tof =
          ess::time_of_flight(ess::to_ns(ess::load_u32(b + kTimeHighOffset), time_low), pulse_ns,
                              prev_pulse_ns, max_tof_ns_);
      if (tof.status != ess::TofStatus::kOk) [[unlikely]] {
        ++tally[index(tof.status == ess::TofStatus::kNegative ? ReadoutError::kTofNegative
                                                                 : ReadoutError::kTofTooLarge)];
        return;
      }
      ++tally[kAccepted];
      on_event(tof.pulse_ns, static_cast<std::uint32_t>(tof.tof_ns), p.pixel);
    });
    if (tally[kAccepted] != 0) events_.add(tally[kAccepted]);
    for (std::size_t i = 0; i < kReadoutErrorNames.size(); ++i) {
      if (tally[i] != 0) errors_[static_cast<ReadoutError>(i)].add(tally[i]);
    }
  }

 private:
  /// A tally per ReadoutError, then one for the good readouts.
  static constexpr std::size_t kAccepted = kReadoutErrorNames.size();
  static constexpr std::size_t kOutcomes = kAccepted + 1;

  static constexpr std::size_t index(ReadoutError e) noexcept { return static_cast<std::size_t>(e); }

  PixelMap pixels_;
  std::uint64_t max_tof_ns_;
  ess::ReadoutBlockWalker blocks_;
  Counter& events_;
  CounterGroup<ReadoutError, kReadoutErrorNames.size()> errors_;
};

}  // namespace efu::cdt
