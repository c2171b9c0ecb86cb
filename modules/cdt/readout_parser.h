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
  /// `modules` is the instrument's table (read-only, shared by every pipeline); `max_tof_ns`
  /// bounds the TOF as in every ESS family (ess::time_of_flight).
  ReadoutParser(CounterRegistry& counters, const ModuleTable& modules, std::uint64_t max_tof_ns)
      : modules_(modules),
        max_tof_ns_(max_tof_ns),
        blocks_(counters, kReadoutSize),
        events_(counters.counter("events.formed")),
        errors_(counters, "readouts.errors.", kReadoutErrorNames) {}

  /// Parses the bytes after the header; `on_event(pulse_ns, tof_ns, pixel)` per good readout.
  /// The pixel comes first, as the reference validates (ring, FEN, config) before the time;
  /// each readout lands in exactly one counter.
  template <typename OnEvent>
  void parse(const std::uint8_t* data, std::uint32_t size, const ess::PacketHeader& header,
             OnEvent&& on_event) noexcept {
    blocks_.walk(data, size, [&](const ess::ReadoutBlock& block) {
      const CdtReadout r = read_readout(block.data);
      const PixelResult p = pixel(modules_, r);
      if (p.status != PixelStatus::kOk) return errors_[to_error(p.status)].add();
      if (r.time_low > ess::kMaxTimeLow) return errors_[ReadoutError::kTimeFraction].add();
      const ess::Tof tof =
          ess::time_of_flight(ess::to_ns(r.time_high, r.time_low), header.pulse_time_ns,
                              header.prev_pulse_time_ns, max_tof_ns_);
      if (tof.status != ess::TofStatus::kOk) {
        return errors_[tof.status == ess::TofStatus::kNegative ? ReadoutError::kTofNegative
                                                               : ReadoutError::kTofTooLarge]
            .add();
      }
      events_.add();
      on_event(tof.pulse_ns, static_cast<std::uint32_t>(tof.tof_ns), p.pixel);
    });
  }

 private:
  const ModuleTable& modules_;
  std::uint64_t max_tof_ns_;
  ess::ReadoutBlockWalker blocks_;
  Counter& events_;
  CounterGroup<ReadoutError, kReadoutErrorNames.size()> errors_;
};

}  // namespace efu::cdt
