// VMM3a readout blocks of one ESS packet → mapped hits. Every rejected block is counted under
// readouts.errors.<reason> and skipped; the blocks around it are still used.
#pragma once

#include <array>
#include <cstdint>

#include "calibration.h"
#include "efu/counter_group.h"
#include "efu/counters.h"
#include "efu/ess/byte_reader.h"
#include "efu/ess/ess_time.h"
#include "efu/ess/readout_blocks.h"
#include "efu/ess/readout_header.h"
#include "efu/vmm3a/readout.h"
#include "geometry.h"
#include "hit.h"

namespace efu::multiblade {

struct ReadoutSettings {
  std::uint64_t max_tof_ns = 0;
};

/// Why a well-framed readout was rejected: readouts.errors.<name>. (Framing errors, a wrong
/// data_length or a short tail, are counted by the block walker as readouts.errors.length and
/// readouts.errors.truncated.)
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

class ReadoutParser {
 public:
  ReadoutParser(CounterRegistry& counters, const Geometry& geometry, const Calibration& calibration,
                const ReadoutSettings& settings);

  /// Parses the bytes after the header. `on_hit(cassette, hit)` is called per valid readout.
  /// Blocks are walked at the 20-byte stride (ess::ReadoutBlockWalker): a block whose
  /// data_length is wrong is counted and stepped over rather than ending the packet.
  template <typename OnHit>
  void parse(const std::uint8_t* data, std::uint32_t size, const ess::PacketHeader& header,
             OnHit&& on_hit) noexcept {
    // Inlined into the walk by force: once per readout, and as a call of its own (GCC's choice
    // when the hybrid lookup moved to efu/vmm3a/hybrid_map.h) it costs a few per cent.
    blocks_.walk(
        data, size, [&](const ess::ReadoutBlock& block) __attribute__((always_inline)) {
          const std::uint8_t* r = block.data;
          ChannelMapping mapping;
          switch (
              geometry_.map(r[0], r[1], r[vmm3a::kVmmOffset], r[vmm3a::kChannelOffset], mapping)) {
            case MapStatus::kOk:
              break;
            case MapStatus::kFiber:
              errors_[ReadoutError::kFiber].add();
              return;
            case MapStatus::kFen:
              errors_[ReadoutError::kFen].add();
              return;
            case MapStatus::kVmm:
              errors_[ReadoutError::kVmm].add();
              return;
            case MapStatus::kChannel:
              errors_[ReadoutError::kChannel].add();
              return;
          }
          const std::uint32_t time_low = ess::load_u32(r + vmm3a::kTimeLowOffset);
          if (time_low > ess::kMaxTimeLow) {
            errors_[ReadoutError::kTimeFraction].add();
            return;
          }
          // Calibrated per channel first, then compared with the threshold of this VMM.
          std::uint16_t adc = vmm3a::adc(r);
          if (calibrated_) adc = calibration_.adc(mapping.vmm_index, r[vmm3a::kChannelOffset], adc);
          if (adc < mapping.threshold) {
            errors_[ReadoutError::kAdcBelowThreshold].add();
            return;
          }
          // BC is not applied; TDC fine time only through a calibration file (calibration.h).
          std::uint64_t time_ns = ess::to_ns(ess::load_u32(r + vmm3a::kTimeHighOffset), time_low);
          if (calibrated_) {
            time_ns += static_cast<std::uint64_t>(calibration_.tdc_ns(
                mapping.vmm_index, r[vmm3a::kChannelOffset], r[vmm3a::kTdcOffset]));
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
          on_hit(mapping.cassette,
                 Hit{time_ns, tof.pulse_ns, mapping.coordinate, adc, mapping.plane});
        });
  }

 private:
  const Geometry& geometry_;
  const Calibration& calibration_;
  bool calibrated_;
  ReadoutSettings settings_;
  ess::ReadoutBlockWalker blocks_;
  Counter& accepted_;
  CounterGroup<ReadoutError, kReadoutErrorNames.size()> errors_;
};

}  // namespace efu::multiblade
