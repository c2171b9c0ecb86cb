// VMM3a readout blocks of one ESS packet → hits (docs/plugins.md "VMM3a detectors"). The parser
// is the SDK's; the channel map is the plugin's: a `Map` with
//
//   vmm3a::MapStatus map(uint8_t fiber, uint8_t fen, uint8_t vmm, uint8_t channel,
//                        vmm3a::ChannelMapping& out) const noexcept;
//
// For each readout, in this order, a failure counted under readouts.errors.<name> and the
// readout skipped (the blocks around it are still used):
//   1. the map: fiber, fen, vmm (an unconfigured hybrid), channel (one the unit does not use);
//   2. TimeLow above the clock's ticks per second: time_fraction;
//   3. the ADC (OTADC bits 0..9), calibrated per channel if a calibration is loaded, below the
//      mapping's threshold: adc_below_threshold (the thresholds: a plugin puts its per-VMM or
//      per-unit MinADC into ChannelMapping::threshold);
//   4. the time, TimeHigh:TimeLow in ns plus the calibration's TDC correction, its time of flight
//      from the packet's pulse (the previous pulse when earlier): tof_negative, tof_too_large.
// Framing errors (a wrong DataLength, a short tail) are the block walker's: readouts.errors.length
// and readouts.errors.truncated. Every accepted readout counts readouts.accepted. BC is not used.
#pragma once

#include <array>
#include <cstdint>

#include "efu/counter_group.h"
#include "efu/counters.h"
#include "efu/ess/byte_reader.h"
#include "efu/ess/ess_time.h"
#include "efu/ess/readout_blocks.h"
#include "efu/ess/readout_header.h"
#include "efu/vmm3a/hit.h"
#include "efu/vmm3a/hybrid_calibration.h"
#include "efu/vmm3a/readout.h"

namespace efu::vmm3a {

struct ReadoutSettings {
  std::uint64_t max_tof_ns = 0;
};

/// Why a well-framed readout was rejected: readouts.errors.<name>.
enum class ReadoutError : std::uint8_t {
  kFiber,
  kFen,
  kVmm,
  kChannel,
  kTimeFraction,
  kAdcBelowThreshold,
  kTofNegative,
  kTofTooLarge,
  kCount
};
inline constexpr std::array<const char*, static_cast<std::size_t>(ReadoutError::kCount)>
    kReadoutErrorNames{"fiber",        "fen",           "vmm",
                       "channel",      "time_fraction", "adc_below_threshold",
                       "tof_negative", "tof_too_large"};

template <typename Map>
class ReadoutParser {
 public:
  /// `map` and `calibration` are the plugin's and outlive the parser; a calibration that is not
  /// enabled() leaves ADC and time as read.
  ReadoutParser(CounterRegistry& counters, const Map& map, const HybridCalibration& calibration,
                const ReadoutSettings& settings)
      : map_(map),
        calibration_(calibration),
        calibrated_(calibration.enabled()),
        settings_(settings),
        blocks_(counters, kReadoutSize),
        accepted_(counters.counter("readouts.accepted")),
        errors_(counters, "readouts.errors.", kReadoutErrorNames) {}

  /// Parses the bytes after the header; `on_hit(unit, hit)` is called per accepted readout.
  /// Blocks are walked at the 20-byte stride (ess::ReadoutBlockWalker): a block whose
  /// data_length is wrong is counted and stepped over rather than ending the packet.
  template <typename OnHit>
  void parse(const std::uint8_t* data, std::uint32_t size, const ess::PacketHeader& header,
             OnHit&& on_hit) noexcept {
    // Inlined into the walk by force: it runs once per readout, and as a call of its own (GCC's
    // choice for Multi-Blade's map) it costs a few per cent.
    blocks_.walk(
        data, size, [&](const ess::ReadoutBlock& block) __attribute__((always_inline)) {
          const std::uint8_t* r = block.data;
          ChannelMapping m;
          const MapStatus status = map_.map(r[0], r[1], r[kVmmOffset], r[kChannelOffset], m);
          if (status != MapStatus::kOk) {
            // MapStatus kFiber..kChannel are ReadoutError kFiber..kChannel, one below.
            errors_[static_cast<ReadoutError>(static_cast<std::uint8_t>(status) - 1)].add();
            return;
          }
          const std::uint32_t time_low = ess::load_u32(r + kTimeLowOffset);
          if (time_low > ess::kMaxTimeLow) {
            errors_[ReadoutError::kTimeFraction].add();
            return;
          }
          std::uint16_t adc = vmm3a::adc(r);
          if (calibrated_) adc = calibration_.adc(m.vmm_index, r[kChannelOffset], adc);
          if (adc < m.threshold) {
            errors_[ReadoutError::kAdcBelowThreshold].add();
            return;
          }
          std::uint64_t time_ns = ess::to_ns(ess::load_u32(r + kTimeHighOffset), time_low);
          if (calibrated_) {
            time_ns += static_cast<std::uint64_t>(
                calibration_.tdc_ns(m.vmm_index, r[kChannelOffset], r[kTdcOffset]));
          }
          const ess::Tof tof = ess::time_of_flight(time_ns, header.pulse_time_ns,
                                                   header.prev_pulse_time_ns, settings_.max_tof_ns);
          if (tof.status != ess::TofStatus::kOk) {
            errors_[tof.status == ess::TofStatus::kNegative ? ReadoutError::kTofNegative
                                                            : ReadoutError::kTofTooLarge]
                .add();
            return;
          }
          accepted_.add();
          on_hit(m.unit, Hit{time_ns, tof.pulse_ns, m.coordinate, adc, m.plane});
        });
  }

 private:
  static_assert(static_cast<int>(MapStatus::kChannel) - 1 ==
                static_cast<int>(ReadoutError::kChannel));
  static_assert(static_cast<int>(MapStatus::kFiber) - 1 == static_cast<int>(ReadoutError::kFiber));

  const Map& map_;
  const HybridCalibration& calibration_;
  bool calibrated_;
  ReadoutSettings settings_;
  ess::ReadoutBlockWalker blocks_;
  Counter& accepted_;
  CounterGroup<ReadoutError, kReadoutErrorNames.size()> errors_;
};

}  // namespace efu::vmm3a
