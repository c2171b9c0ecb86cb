// The 20-byte CBM readout block (docs/cbm.md "Readout"): layout, decoding and a writer for the
// generator and tests. The beam monitors (CBM, header type 0x10) and BEER (0x50) send the same
// block after the ESS header:
//
//   offset  0  FiberId  u8      offset 12  Type     u8   (1 EVENT_0D, 2 EVENT_2D, 3 IBM)
//   offset  1  FENId    u8      offset 13  Channel  u8
//   offset  2  DataLength u16   offset 14  ADC      u16
//   offset  4  TimeHigh u32     offset 16  EVENT_2D: XPos u16, YPos u16
//   offset  8  TimeLow  u32                IBM: NADC u24 (little-endian), MCASum u8
//
// All little-endian. The last four bytes are read raw (`extra`) and interpreted per type, since
// an EVENT_0D readout leaves them unused.
#pragma once

#include <cstdint>

#include "efu/ess/byte_reader.h"

namespace efu::cbm {

inline constexpr std::uint32_t kReadoutSize = 20;

/// The ESS header's detector type byte (the facility's DetectorType table).
inline constexpr std::uint8_t kCbmDetectorType = 0x10;
inline constexpr std::uint8_t kBeerDetectorType = 0x50;

/// The reference parser's limits: fibre and FEN numbers above these are not valid. The ring is
/// fiber / 2, so at most 11.
inline constexpr std::uint8_t kMaxFiber = 23;
inline constexpr std::uint8_t kMaxFen = 23;
inline constexpr std::uint8_t kMaxRing = kMaxFiber / 2;

/// Offsets inside the block.
inline constexpr std::uint32_t kTimeHighOffset = 4;
inline constexpr std::uint32_t kTimeLowOffset = 8;
inline constexpr std::uint32_t kTypeOffset = 12;
inline constexpr std::uint32_t kChannelOffset = 13;
inline constexpr std::uint32_t kAdcOffset = 14;
inline constexpr std::uint32_t kXPosOffset = 16;    // EVENT_2D
inline constexpr std::uint32_t kYPosOffset = 18;    // EVENT_2D
inline constexpr std::uint32_t kNadcOffset = 16;    // IBM: 24 bits
inline constexpr std::uint32_t kMcaSumOffset = 19;  // IBM

/// The Type byte. Values outside 1..3 are not a CBM type.
enum class MonitorType : std::uint8_t { kEvent0D = 1, kEvent2D = 2, kIbm = 3 };
inline constexpr std::uint8_t kMinType = 1;
inline constexpr std::uint8_t kMaxType = 3;

/// The largest NADC the 24-bit field holds.
inline constexpr std::uint32_t kMaxNadc = 0xFF'FFFF;

/// The fields of one block as they are on the wire; `extra` is the last four bytes raw.
struct CbmReadout {
  std::uint8_t fiber = 0;
  std::uint8_t fen = 0;
  std::uint16_t data_length = kReadoutSize;
  std::uint32_t time_high = 0;
  std::uint32_t time_low = 0;
  std::uint8_t type = 0;
  std::uint8_t channel = 0;
  std::uint16_t adc = 0;
  std::uint32_t extra = 0;

  /// EVENT_2D: the position (XPos in the low 16 bits, YPos in the high 16 bits of `extra`).
  std::uint16_t x() const noexcept { return static_cast<std::uint16_t>(extra & 0xFFFFU); }
  std::uint16_t y() const noexcept { return static_cast<std::uint16_t>(extra >> 16); }
  /// IBM: the ADC summed by the hardware (bytes 16..18) and how many readouts it sums (byte 19).
  std::uint32_t nadc() const noexcept { return extra & kMaxNadc; }
  std::uint8_t mca_sum() const noexcept { return static_cast<std::uint8_t>(extra >> 24); }

  void set_position(std::uint16_t xpos, std::uint16_t ypos) noexcept {
    extra = std::uint32_t{xpos} | (std::uint32_t{ypos} << 16);
  }
  /// `nadc` above 24 bits is stored as 0xFFFFFF, as the reference's generator saturates it.
  void set_ibm(std::uint32_t nadc, std::uint8_t mca_sum) noexcept {
    extra = (nadc > kMaxNadc ? kMaxNadc : nadc) | (std::uint32_t{mca_sum} << 24);
  }
};

inline CbmReadout read_readout(const std::uint8_t* in) noexcept {
  CbmReadout r;
  r.fiber = in[0];
  r.fen = in[1];
  r.data_length = ess::load_u16(in + 2);
  r.time_high = ess::load_u32(in + kTimeHighOffset);
  r.time_low = ess::load_u32(in + kTimeLowOffset);
  r.type = in[kTypeOffset];
  r.channel = in[kChannelOffset];
  r.adc = ess::load_u16(in + kAdcOffset);
  r.extra = ess::load_u32(in + kXPosOffset);
  return r;
}

inline void write_readout(std::uint8_t* out, const CbmReadout& r) noexcept {
  out[0] = r.fiber;
  out[1] = r.fen;
  ess::store_u16(out + 2, r.data_length);
  ess::store_u32(out + kTimeHighOffset, r.time_high);
  ess::store_u32(out + kTimeLowOffset, r.time_low);
  out[kTypeOffset] = r.type;
  out[kChannelOffset] = r.channel;
  ess::store_u16(out + kAdcOffset, r.adc);
  ess::store_u32(out + kXPosOffset, r.extra);
}

}  // namespace efu::cbm
