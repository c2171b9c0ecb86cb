// VMM3a readout blocks of one ESS packet → mapped hits. Every rejected block is counted under
// readouts.errors.<reason> and skipped; the blocks around it are still used.
#pragma once

#include <cstdint>

#include "efu/counters.h"
#include "efu/ess/byte_reader.h"
#include "efu/ess/ess_time.h"
#include "efu/ess/readout_header.h"
#include "geometry.h"
#include "hit.h"
#include "vmm3_readout.h"

namespace efu::multiblade {

struct ReadoutSettings {
  std::uint16_t adc_threshold = 0;  // readouts with ADC below are dropped
  std::uint64_t max_tof_ns = 0;
};

class ReadoutParser {
 public:
  ReadoutParser(CounterRegistry& counters, const Geometry& geometry,
                const ReadoutSettings& settings);

  /// Parses the bytes after the header. `on_hit(cassette, hit)` is called per valid readout.
  /// VMM3a blocks have a fixed size, so a block whose data_length is wrong is counted and
  /// stepped over by 20 bytes rather than ending the packet; only a tail shorter than one block
  /// ends it (counted once under readouts.errors.length).
  template <typename OnHit>
  void parse(const std::uint8_t* data, std::uint32_t size, const ess::PacketHeader& header,
             OnHit&& on_hit) noexcept {
    while (size != 0) {
      received_.add();
      if (size < kReadoutSize) {
        errors_.length.add();
        return;
      }
      const std::uint8_t* r = data;
      data += kReadoutSize;
      size -= kReadoutSize;
      if (ess::load_u16(r + 2) != kReadoutSize) {
        errors_.length.add();
        continue;
      }
      ChannelMapping mapping;
      switch (geometry_.map(r[0], r[1], r[18], r[19], mapping)) {
        case MapStatus::kOk:
          break;
        case MapStatus::kFiber:
          errors_.fiber.add();
          continue;
        case MapStatus::kFen:
          errors_.fen.add();
          continue;
        case MapStatus::kVmm:
          errors_.vmm.add();
          continue;
        case MapStatus::kChannel:
          errors_.channel.add();
          continue;
      }
      const std::uint32_t time_low = ess::load_u32(r + 8);
      if (time_low > ess::kMaxTimeLow) {
        errors_.time_fraction.add();
        continue;
      }
      const auto adc = static_cast<std::uint16_t>(ess::load_u16(r + 14) & kAdcMask);
      if (adc < settings_.adc_threshold) {
        errors_.adc_below_threshold.add();
        continue;
      }
      // BC and TDC fine time are not applied: time is the coarse time_high/time_low.
      const std::uint64_t time_ns = ess::to_ns(ess::load_u32(r + 4), time_low);
      const ess::Tof tof = ess::time_of_flight(time_ns, header.pulse_time_ns,
                                               header.prev_pulse_time_ns, settings_.max_tof_ns);
      if (tof.status != ess::TofStatus::kOk) {
        (tof.status == ess::TofStatus::kNegative ? errors_.tof_negative : errors_.tof_too_large)
            .add();
        continue;
      }
      accepted_.add();
      on_hit(mapping.cassette, Hit{time_ns, tof.pulse_ns, mapping.coordinate, adc, mapping.plane});
    }
  }

 private:
  struct Errors {
    Counter& length;
    Counter& fiber;
    Counter& fen;
    Counter& vmm;
    Counter& channel;
    Counter& time_fraction;
    Counter& adc_below_threshold;
    Counter& tof_negative;
    Counter& tof_too_large;
  };
  const Geometry& geometry_;
  ReadoutSettings settings_;
  Counter& received_;
  Counter& accepted_;
  Errors errors_;
};

}  // namespace efu::multiblade
