// The VMM3a readout (docs/architecture.md §5.2; docs/plugins.md "VMM3a detectors"): the 20-byte
// block that every VMM3a detector's readout master sends after the ESS header, whatever the
// detector (Multi-Blade, NMX, TREX). Little-endian:
//
//   offset  size  field
//        0     1  FiberId      ring = FiberId / 2
//        1     1  FENId
//        2     2  DataLength   20
//        4     4  TimeHigh     s since the Unix epoch
//        8     4  TimeLow      ticks of the 88.0525 MHz clock (ess_time.h)
//       12     2  BC           bunch-crossing counter (not used by efu's VMM3a plugins)
//       14     2  OTADC        bit 15: over threshold; bits 0..9: the ADC
//       16     1  GEO
//       17     1  TDC          the fine time (applied through a calibration, hybrid_calibration.h)
//       18     1  VMM          hybrid = VMM / 2, the hybrid's ASIC = VMM & 1
//       19     1  Channel      0..63
//
// A plugin walks the blocks with ess::ReadoutBlockWalker(counters, vmm3a::kReadoutSize) and reads
// the fields at these offsets; generators and tests write them with write_readout().
#pragma once

#include <cstdint>

#include "efu/ess/byte_reader.h"

namespace efu::vmm3a {

inline constexpr std::uint32_t kReadoutSize = 20;

inline constexpr std::uint32_t kTimeHighOffset = 4;
inline constexpr std::uint32_t kTimeLowOffset = 8;
inline constexpr std::uint32_t kBcOffset = 12;
inline constexpr std::uint32_t kOtadcOffset = 14;
inline constexpr std::uint32_t kGeoOffset = 16;
inline constexpr std::uint32_t kTdcOffset = 17;
inline constexpr std::uint32_t kVmmOffset = 18;
inline constexpr std::uint32_t kChannelOffset = 19;

inline constexpr std::uint16_t kAdcMask = 0x03FF;
inline constexpr std::uint16_t kOverThresholdBit = 0x8000;
inline constexpr std::uint32_t kChannelsPerVmm = 64;

/// The ADC of the readout at `block` (its OTADC without the over-threshold bit).
inline std::uint16_t adc(const std::uint8_t* block) noexcept {
  return static_cast<std::uint16_t>(ess::load_u16(block + kOtadcOffset) & kAdcMask);
}

/// One readout's fields, for generators and tests.
struct Readout {
  std::uint8_t fiber;
  std::uint8_t fen;
  std::uint16_t data_length;
  std::uint32_t time_high;
  std::uint32_t time_low;
  std::uint16_t bc;
  std::uint16_t otadc;
  std::uint8_t geo;
  std::uint8_t tdc;
  std::uint8_t vmm;
  std::uint8_t channel;
};

inline void write_readout(std::uint8_t* out, const Readout& r) noexcept {
  out[0] = r.fiber;
  out[1] = r.fen;
  ess::store_u16(out + 2, r.data_length);
  ess::store_u32(out + kTimeHighOffset, r.time_high);
  ess::store_u32(out + kTimeLowOffset, r.time_low);
  ess::store_u16(out + kBcOffset, r.bc);
  ess::store_u16(out + kOtadcOffset, r.otadc);
  out[kGeoOffset] = r.geo;
  out[kTdcOffset] = r.tdc;
  out[kVmmOffset] = r.vmm;
  out[kChannelOffset] = r.channel;
}

}  // namespace efu::vmm3a
