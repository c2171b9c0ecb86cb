// The 16-byte CDT readout block of DREAM, MAGIC and HEIMDAL (docs/cdt.md): layout, decoding and
// a writer for generators and tests. Every CDT module type (boron-10 jalousie cassettes, read
// out by the same front end) sends this one format; what the counters mean is up to the module
// type's geometry (geometry.h).
#pragma once

#include <cstdint>

#include "efu/ess/byte_reader.h"

namespace efu::cdt {

/// The three instruments, each with its ESS header detector type byte as the value (the
/// reference's DetectorType.h).
enum class Instrument : std::uint8_t { kDream = 0x60, kMagic = 0x64, kHeimdal = 0x68 };

inline constexpr std::uint8_t type_byte(Instrument instrument) noexcept {
  return static_cast<std::uint8_t>(instrument);
}

inline constexpr std::uint32_t kReadoutSize = 16;

/// Offsets inside the block (little-endian, no alignment).
inline constexpr std::uint32_t kDataLengthOffset = 2;
inline constexpr std::uint32_t kTimeHighOffset = 4;
inline constexpr std::uint32_t kTimeLowOffset = 8;
inline constexpr std::uint32_t kOmOffset = 12;
inline constexpr std::uint32_t kUnitOffset = 13;
inline constexpr std::uint32_t kCathodeOffset = 14;
inline constexpr std::uint32_t kAnodeOffset = 15;

/// The fields of one block as they are on the wire.
struct CdtReadout {
  std::uint8_t fiber = 0;
  std::uint8_t fen = 0;
  std::uint16_t data_length = kReadoutSize;
  std::uint32_t time_high = 0;
  std::uint32_t time_low = 0;
  std::uint8_t om = 0;       // operating mode; no module type's pixel uses it
  std::uint8_t unit = 0;     // UnitId: SUMO id (endcaps), cuboid 0/1 (HR, SANS)
  std::uint8_t cathode = 0;  // strip side
  std::uint8_t anode = 0;    // wire side
  bool operator==(const CdtReadout&) const = default;
};

/// Reads the block at `in` (kReadoutSize bytes must be readable).
inline CdtReadout read_readout(const std::uint8_t* in) noexcept {
  CdtReadout r;
  r.fiber = in[0];
  r.fen = in[1];
  r.data_length = ess::load_u16(in + kDataLengthOffset);
  r.time_high = ess::load_u32(in + kTimeHighOffset);
  r.time_low = ess::load_u32(in + kTimeLowOffset);
  r.om = in[kOmOffset];
  r.unit = in[kUnitOffset];
  r.cathode = in[kCathodeOffset];
  r.anode = in[kAnodeOffset];
  return r;
}

inline void write_readout(std::uint8_t* out, const CdtReadout& r) noexcept {
  out[0] = r.fiber;
  out[1] = r.fen;
  ess::store_u16(out + kDataLengthOffset, r.data_length);
  ess::store_u32(out + kTimeHighOffset, r.time_high);
  ess::store_u32(out + kTimeLowOffset, r.time_low);
  out[kOmOffset] = r.om;
  out[kUnitOffset] = r.unit;
  out[kCathodeOffset] = r.cathode;
  out[kAnodeOffset] = r.anode;
}

}  // namespace efu::cdt
