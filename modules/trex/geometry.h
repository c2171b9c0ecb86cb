// From a VMM3a readout of a TREX or LET vessel to its coordinates, and from an event's
// coordinates to the pixel, as the facility numbers them (the reference's TREXGeometry,
// LETGeometry and ESSGeometry::pixel3D; docs/trex.md "Channels and pixels" has a worked example
// for each case). A vessel is two columns of 6 × 16 wires and a stack of grids:
//   - wires give one combined coordinate xz = 16·x + z (x across the columns, z in depth),
//     clustered as one axis, as the reference does;
//   - grids give y.
// hybrid = VMM / 2 and asic = VMM & 1 (efu/vmm3a/hybrid_map.h). Which hybrid reads wires, and
// which channels are in use, is the InstrumentGeometry's. All arithmetic on coordinates is on 16
// bits, wrapping, as the reference's uint16_t: a rotated vessel's y is YOffset − y mod 2^16, and
// a coordinate that wraps lands outside the pixel volume, where the event is rejected.
//
// These functions are the definition; ChannelMap tabulates them once per configured hybrid so
// the hot path is one table load.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config.h"
#include "efu/vmm3a/hit.h"
#include "efu/vmm3a/hybrid_map.h"
#include "efu/vmm3a/readout.h"

namespace efu::trex {

/// The planes as the SDK's hits number them (vmm3a::Hit::plane).
enum Plane : std::uint8_t { kWire = 0, kGrid = 1 };

inline constexpr std::uint32_t kDepth = 16;       // wires per row, along z
inline constexpr std::uint32_t kColumnWidth = 6;  // rows of wires per column, along x
inline constexpr std::uint32_t kColumnWires = kDepth * kColumnWidth;  // 96
inline constexpr std::uint32_t kVesselRows = 2 * kColumnWidth;        // 12 x positions

// --- Wires -----------------------------------------------------------------------------------

/// The hybrid that reads the wires: TREX hybrid 0, LET hybrid 1 (isWire()); every other hybrid
/// reads grids.
constexpr std::uint32_t wire_hybrid(InstrumentGeometry g) noexcept {
  return g == InstrumentGeometry::kLet ? 1 : 0;
}

/// LET swaps the channels of each even/odd pair before anything else:
///   channel' = channel + 1 if even, channel − 1 if odd  (= channel XOR 1)
constexpr std::uint32_t let_wire_channel(std::uint32_t channel) noexcept { return channel ^ 1U; }

/// The wire channels in use: asic 0 channels 32..63, asic 1 channels 0..63.
constexpr bool wire_channel_valid(std::uint32_t asic, std::uint32_t channel) noexcept {
  return asic == 0 ? channel >= 32 && channel <= 63 : channel <= 63;
}

/// The wire's number in its column (0..95), from the ICD:
///   w = 64·asic + channel − 32
constexpr std::uint32_t column_wire(std::uint32_t asic, std::uint32_t channel) noexcept {
  return 64 * asic + channel - 32;
}

/// The vessel's second column (the one 96 wires over): TREX odd FENs, LET even rings.
///   TREX: column = FEN mod 2;  LET: column = 1 − ring mod 2
constexpr std::uint32_t column_of(InstrumentGeometry g, std::uint32_t ring,
                                  std::uint32_t fen) noexcept {
  return g == InstrumentGeometry::kLet ? 1U - ring % 2U : fen % 2U;
}

/// A rotated vessel mirrors x across the vessel (12 positions); z stays:
///   w' = 16·(11 − w / 16) + w mod 16
constexpr std::uint32_t rotate_wire(std::uint32_t w) noexcept {
  return kDepth * (kVesselRows - 1 - w / kDepth) + w % kDepth;
}

/// xz of a wire (before the mod 2^16 of the reference's uint16_t):
///   w = column_wire + 96·column; rotated: w = rotate_wire(w); xz = w + 16·XOffset
constexpr std::uint32_t wire_xz(std::uint32_t asic, std::uint32_t channel, std::uint32_t column,
                                bool rotated, std::uint32_t x_offset) noexcept {
  std::uint32_t w = column_wire(asic, channel) + kColumnWires * column;
  if (rotated) w = rotate_wire(w);
  return (w + kDepth * x_offset) & 0xFFFFU;
}

/// An event's x and z from its wire centre xz: x = xz / 16, z = xz mod 16.
constexpr std::uint32_t x_of(std::uint32_t xz) noexcept { return xz / kDepth; }
constexpr std::uint32_t z_of(std::uint32_t xz) noexcept { return xz % kDepth; }

// --- Grids -----------------------------------------------------------------------------------

/// The grid channels of a full-length vessel: hybrid 1 asic 0 channels 58..63, hybrid 1 asic 1
/// all, hybrid 2 asic 0 all, hybrid 2 asic 1 channels 0..5 (140 grids).
constexpr bool full_grid_valid(std::uint32_t hybrid, std::uint32_t asic,
                               std::uint32_t channel) noexcept {
  if (hybrid == 1) return asic == 1 || channel >= 58;
  if (hybrid == 2) return asic == 0 || channel <= 5;
  return false;
}

/// The grid channels of a short vessel: asic 0 channels 0..50 of hybrid 1 (TREX) or 0 (LET).
constexpr bool short_grid_valid(InstrumentGeometry g, std::uint32_t hybrid, std::uint32_t asic,
                                std::uint32_t channel) noexcept {
  const std::uint32_t grid_hybrid = g == InstrumentGeometry::kLet ? 0 : 1;
  return hybrid == grid_hybrid && asic == 0 && channel <= 50;
}

/// A full-length vessel's grid, from the ICD (0..139):
///   y = 64·(2·hybrid + asic − 2) + channel − 58
constexpr std::uint32_t full_grid(std::uint32_t hybrid, std::uint32_t asic,
                                  std::uint32_t channel) noexcept {
  return 64 * (2 * hybrid + asic - 2) + channel - 58;
}

/// A short vessel's grid: y = channel (0..50).
constexpr std::uint32_t short_grid(std::uint32_t channel) noexcept { return channel; }

/// y of a grid, on 16 bits as the reference's uint16_t:
///   y = (rotated ? −grid : grid) + YOffset  mod 2^16
constexpr std::uint32_t grid_y(std::uint32_t grid, bool rotated, std::uint32_t y_offset) noexcept {
  return ((rotated ? 0U - grid : grid) + y_offset) & 0xFFFFU;
}

// --- Pixels ----------------------------------------------------------------------------------

/// The pixel volume (SizeX × SizeY × SizeZ) numbered as the reference's ESSGeometry::pixel3D:
///   pixel = 1 + x + SizeX·y + SizeX·SizeY·z, or 0 when x, y or z is outside the volume
struct PixelVolume {
  std::uint32_t nx;
  std::uint32_t ny;
  std::uint32_t nz;

  constexpr std::uint32_t pixel(std::uint32_t x, std::uint32_t y, std::uint32_t z) const noexcept {
    if (x >= nx || y >= ny || z >= nz) return 0;
    return 1 + x + nx * y + nx * ny * z;
  }
};

/// The pixel of an event whose wire centre is xz and grid centre y.
constexpr std::uint32_t event_pixel(const PixelVolume& v, std::uint32_t xz,
                                    std::uint32_t y) noexcept {
  return v.pixel(x_of(xz), y, z_of(xz));
}

// --- One channel -----------------------------------------------------------------------------

/// A channel's place: its plane and coordinate (xz or y), or no place (valid false).
struct ChannelPlace {
  bool valid;
  Plane plane;
  std::uint16_t coordinate;
};

/// The place of channel `channel` of asic `asic` of the hybrid `h` of `config` (the reference's
/// isWire() → xAndzCoord(), else yCoord(); a channel they call invalid has no place).
ChannelPlace channel_place(const TrexConfig& config, const HybridEntry& h, std::uint32_t asic,
                           std::uint32_t channel) noexcept;

// --- The readout parser's map ----------------------------------------------------------------

using vmm3a::ChannelMapping;
using vmm3a::MapStatus;

/// The channel map of a config for vmm3a::ReadoutParser: unit = the (ring, FEN) of the hybrid
/// (TrexConfig::units), plane and coordinate from channel_place(), threshold = the vessel's
/// MinADC, vmm_index = the hybrid's Config[] index * 2 + asic.
class ChannelMap {
 public:
  explicit ChannelMap(const TrexConfig& config);

  std::uint32_t units() const noexcept { return units_; }
  const PixelVolume& volume() const noexcept { return volume_; }

  MapStatus map(std::uint8_t fiber, std::uint8_t fen, std::uint8_t vmm, std::uint8_t channel,
                ChannelMapping& out) const noexcept {
    std::uint32_t index = 0;
    const vmm3a::HybridStatus found = hybrids_.find(fiber, fen, vmm, index);
    if (found != vmm3a::HybridStatus::kOk) return static_cast<MapStatus>(found);
    const std::uint32_t row = vmm3a::vmm_index(index, vmm);
    const PerVmm& v = per_vmm_[row];
    // Channels above 63 exist on no VMM; the test comes first, so the shift stays below 64.
    if (channel >= vmm3a::kChannelsPerVmm || ((v.used >> channel) & 1U) == 0) {
      return MapStatus::kChannel;
    }
    out.unit = v.unit;
    out.threshold = v.threshold;
    out.vmm_index = static_cast<std::uint16_t>(row);
    out.coordinate = coordinates_[row * vmm3a::kChannelsPerVmm + channel];
    out.plane = v.plane;
    return MapStatus::kOk;
  }

  /// One start-up warning naming the vessels with channels whose x (xz / 16) or y lie outside
  /// SizeX or SizeY, whose events are then all rejected as events.rejected.pixel; "" if none.
  static std::string outside_volume_warning(const TrexConfig& config);

 private:
  // Per VMM (vmm_index): which channels have a place, and what every readout of it shares. The
  // coordinates are a separate table of 16-bit entries (every value is a coordinate, 65535
  // included), half the size of one that also held the plane and a "no place" mark.
  struct PerVmm {
    std::uint64_t used;  // bit c: channel c has a place
    std::uint16_t unit;
    std::uint16_t threshold;
    std::uint8_t plane;
  };

  vmm3a::HybridMap hybrids_;
  std::vector<PerVmm> per_vmm_;
  std::vector<std::uint16_t> coordinates_;  // [vmm_index][channel]
  std::uint32_t units_;
  PixelVolume volume_;
};

}  // namespace efu::trex
