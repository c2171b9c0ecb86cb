// The 24-byte CAEN readout block (docs/architecture.md §5.2b): layout, decoding and a writer for
// generators and tests. The amplitudes are two's complement for LoKI and plain unsigned for the
// other instruments, so they are decoded per instrument (Amplitudes::signed_values).
#pragma once

#include <cstdint>

#include "efu/ess/byte_reader.h"

namespace efu::caen {

inline constexpr std::uint32_t kReadoutSize = 24;
/// The reference firmware's limits: fibre and FEN numbers above these are not valid.
inline constexpr std::uint8_t kMaxFiber = 23;
inline constexpr std::uint8_t kMaxFen = 23;

/// Offsets inside the block.
inline constexpr std::uint32_t kTimeHighOffset = 4;
inline constexpr std::uint32_t kTimeLowOffset = 8;
inline constexpr std::uint32_t kFlagsOffset = 12;
inline constexpr std::uint32_t kGroupOffset = 13;
inline constexpr std::uint32_t kAmplitudeOffset = 16;  // a, b, c, d: 16 bits each

/// The fields of one block as they are on the wire; the amplitudes as raw 16-bit words.
struct CaenReadout {
  std::uint8_t fiber = 0;
  std::uint8_t fen = 0;
  std::uint16_t data_length = kReadoutSize;
  std::uint32_t time_high = 0;
  std::uint32_t time_low = 0;
  std::uint8_t flags_om = 0;
  std::uint8_t group = 0;
  std::uint16_t unused = 0;
  std::uint16_t a = 0;
  std::uint16_t b = 0;
  std::uint16_t c = 0;
  std::uint16_t d = 0;
};

inline CaenReadout read_readout(const std::uint8_t* in) noexcept {
  CaenReadout r;
  r.fiber = in[0];
  r.fen = in[1];
  r.data_length = ess::load_u16(in + 2);
  r.time_high = ess::load_u32(in + kTimeHighOffset);
  r.time_low = ess::load_u32(in + kTimeLowOffset);
  r.flags_om = in[kFlagsOffset];
  r.group = in[kGroupOffset];
  r.unused = ess::load_u16(in + 14);
  r.a = ess::load_u16(in + kAmplitudeOffset);
  r.b = ess::load_u16(in + kAmplitudeOffset + 2);
  r.c = ess::load_u16(in + kAmplitudeOffset + 4);
  r.d = ess::load_u16(in + kAmplitudeOffset + 6);
  return r;
}

inline void write_readout(std::uint8_t* out, const CaenReadout& r) noexcept {
  out[0] = r.fiber;
  out[1] = r.fen;
  ess::store_u16(out + 2, r.data_length);
  ess::store_u32(out + kTimeHighOffset, r.time_high);
  ess::store_u32(out + kTimeLowOffset, r.time_low);
  out[kFlagsOffset] = r.flags_om;
  out[kGroupOffset] = r.group;
  ess::store_u16(out + 14, r.unused);
  ess::store_u16(out + kAmplitudeOffset, r.a);
  ess::store_u16(out + kAmplitudeOffset + 2, r.b);
  ess::store_u16(out + kAmplitudeOffset + 4, r.c);
  ess::store_u16(out + kAmplitudeOffset + 6, r.d);
}

/// The four amplitudes as the instrument's electronics mean them.
struct Amplitudes {
  std::int32_t a, b, c, d;
};

inline Amplitudes amplitudes(const CaenReadout& r, bool signed_values) noexcept {
  if (signed_values) {
    return {static_cast<std::int16_t>(r.a), static_cast<std::int16_t>(r.b),
            static_cast<std::int16_t>(r.c), static_cast<std::int16_t>(r.d)};
  }
  return {r.a, r.b, r.c, r.d};
}

}  // namespace efu::caen
