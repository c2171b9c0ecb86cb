// The 20-byte VMM3a readout block (docs/architecture.md §5.2): layout and a writer for
// generators/tests.
#pragma once

#include <cstdint>

#include "efu/ess/byte_reader.h"

namespace efu::multiblade {

inline constexpr std::uint32_t kReadoutSize = 20;
inline constexpr std::uint16_t kAdcMask = 0x03FF;
inline constexpr std::uint16_t kOverThresholdBit = 0x8000;

struct Vmm3Readout {
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

inline void write_readout(std::uint8_t* out, const Vmm3Readout& r) noexcept {
  out[0] = r.fiber;
  out[1] = r.fen;
  ess::store_u16(out + 2, r.data_length);
  ess::store_u32(out + 4, r.time_high);
  ess::store_u32(out + 8, r.time_low);
  ess::store_u16(out + 12, r.bc);
  ess::store_u16(out + 14, r.otadc);
  out[16] = r.geo;
  out[17] = r.tdc;
  out[18] = r.vmm;
  out[19] = r.channel;
}

}  // namespace efu::multiblade
