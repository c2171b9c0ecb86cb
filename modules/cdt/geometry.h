// From one CDT readout to the instrument's pixel id, per module type, as the facility numbers
// pixels (docs/cdt.md has every formula, the offsets and a worked example for each). The
// configured (ring, FEN) entry says which module type reads out there and its Index/Index2; the
// readout's UnitId, anode and cathode say where in the module the neutron was seen. OM is not
// used by any module type.
//
// Each module type's formula gives a pixel on its own ESS logical grid (1 + x + nx·y,
// efu/ess/logical_geometry.h); the instrument's pixel is that plus the type's fixed offset.
// Five functions cover the eight types: the two endcaps share the SUMO formula, the DREAM mantle
// and MAGIC's FR detector the mantle formula, HR and SANS the cuboid formula; what differs is
// data (the grid, the cuboid table), in the tables below. No virtual calls, no allocation, no
// exceptions; a rejected readout returns why, for its counter. These formulas are the
// definition: the hot path runs them through pixel_map.h, which tabulates them once.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "cdt_readout.h"
#include "config.h"
#include "efu/ess/logical_geometry.h"

namespace efu::cdt {

/// Why a readout has no pixel, or kOk. The rejections come first, so they index
/// kPixelErrorNames and a CounterGroup<PixelStatus, kPixelErrors> directly; the plugin counts
/// each under its own name.
enum class PixelStatus : std::uint8_t {
  kRing,          // ring (fibre / 2) above 11
  kFen,           // FEN above 11
  kUnconfigured,  // no Config[] entry for this (ring, FEN)
  kUnit,          // UnitId not a SUMO (3..6) on an endcap, not 0 or 1 on a cuboid FEN
  kCassette,      // the cassette from anode and cathode is not in the SUMO or PA detector
  kIndex,         // the configured Index/Index2 is outside the module type (or no cuboid)
  kPixel,         // the coordinates fall outside the module type's grid
  kOk             // a pixel
};
inline constexpr std::size_t kPixelErrors = static_cast<std::size_t>(PixelStatus::kOk);
inline constexpr std::array<const char*, kPixelErrors> kPixelErrorNames{
    "ring", "fen", "unconfigured", "unit", "cassette", "index", "pixel"};

struct PixelResult {
  PixelStatus status;
  std::uint32_t pixel;  // 0 unless status is kOk
  bool operator==(const PixelResult&) const = default;
};

inline constexpr PixelResult reject(PixelStatus s) noexcept { return PixelResult{s, 0}; }

/// A pixel of `grid` for (x, y), or kPixel when (x, y) is outside it.
inline constexpr PixelResult grid_pixel(const ess::LogicalGeometry& grid, std::int32_t x,
                                        std::int32_t y) noexcept {
  if (x < 0 || y < 0) return reject(PixelStatus::kPixel);
  const std::uint32_t p = grid.pixel(static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y));
  return p == 0 ? reject(PixelStatus::kPixel) : PixelResult{PixelStatus::kOk, p};
}

/// A module type's (x, y) on its grid before any check: what the formulas below compute. Every
/// formula is a sum of an anode term, a cathode term and a constant of the module (and UnitId);
/// pixel_map.h tabulates the two terms once so the hot path adds them instead of re-deriving them.
struct Coords {
  std::int32_t x;
  std::int32_t y;
  bool operator==(const Coords&) const = default;
};

/// Each module type's grid and its offset in the instrument's pixel space (the reference's
/// getPixelOffset(), from the instruments' ICDs). Within an instrument the types tile the space
/// without gaps: DREAM FwEndCap, BwEndCap, DreamMantle, SANS, HR; MAGIC FR, PA; HEIMDAL mantle
/// (geometry.cpp checks this at compile time).
struct ModuleGeometry {
  ess::LogicalGeometry grid;
  std::uint32_t offset;
};
inline constexpr std::array<ModuleGeometry, kModuleTypes> kModuleGeometry{{
    {{616, 256}, 71'680},      // BwEndCap: 11 sectors × 56 columns, 16 strips × 16 wires
    {{280, 256}, 0},           // FwEndCap: 5 sectors × 56 columns
    {{256, 1920}, 229'376},    // DreamMantle: 256 strips, 32 wires × 60 rows
    {{112, 3584}, 1'122'304},  // HR: 7 × 7 cuboids of 16 × 16, 32 strips deep
    {{112, 3584}, 720'896},    // SANS: as HR
    {{256, 512}, 245'760},     // PADetector: 8 sectors × 32 columns, 32 strips × 16 wires
    {{128, 1920}, 0},          // FRDetector: the DREAM mantle with 128 strips
    {{144, 2048}, 0},          // HeimdalMantle: 12 MU × 12 columns, 64 strips × 32 wires
}};

inline constexpr const ModuleGeometry& geometry(ModuleType type) noexcept {
  return kModuleGeometry[static_cast<std::size_t>(type)];
}

/// The size of the instrument's pixel space: the largest offset + pixel count of its types.
std::uint32_t pixel_count(Instrument instrument) noexcept;

// --- SUMO endcaps (BwEndCap, FwEndCap) ----------------------------------------------------
// sector = Index; sumo = UnitId, 3..6; A = anode, C = cathode. Per SUMO (table below):
//   cassette = 2·(C / cdiv) + sign·(A / 32) + bias, in 0 .. cassettes − 1
//     sumo 6: 2·(C/16) − A/32     (10 cassettes, first column 0)
//     sumo 5: 2·(C/16) + A/32     ( 8 cassettes, first column 20)
//     sumo 4: 2·(C/16) + A/32 − 1 ( 6 cassettes, first column 36)
//     sumo 3: 2·(C/32) + A/32     ( 4 cassettes, first column 48)
//   counter = (A / 16) mod 2, wire = A mod 16, strip = C mod 16
//   x = 56·sector + first column + 2·cassette + counter
//   y = 16·strip + wire
//   local pixel = 1 + x + nx·y, nx = 56·sectors (BwEndCap 616, FwEndCap 280), ny = 256
struct SumoShape {
  std::uint8_t cathode_div;
  std::int8_t anode_sign;
  std::int8_t bias;
  std::uint8_t cassettes;
  std::uint8_t first_column;
};
inline constexpr std::uint8_t kMinSumo = 3;
inline constexpr std::uint8_t kMaxSumo = 6;
inline constexpr std::uint32_t kSumoSectorColumns = 56;
inline constexpr std::array<SumoShape, 4> kSumoShapes{{
    {32, 1, 0, 4, 48},   // sumo 3
    {16, 1, -1, 6, 36},  // sumo 4
    {16, 1, 0, 8, 20},   // sumo 5
    {16, -1, 0, 10, 0},  // sumo 6
}};

/// The cassette formula above, unchecked (may be negative or too large). sumo in 3..6.
inline constexpr std::int32_t sumo_cassette(std::uint8_t sumo, std::uint8_t anode,
                                            std::uint8_t cathode) noexcept {
  const SumoShape& s = kSumoShapes[sumo - kMinSumo];
  return 2 * (cathode / s.cathode_div) + s.anode_sign * (anode / 32) + s.bias;
}
inline constexpr std::int32_t sumo_x(std::uint32_t sector, std::uint8_t sumo, std::int32_t cassette,
                                     std::uint32_t counter) noexcept {
  return static_cast<std::int32_t>(kSumoSectorColumns * sector +
                                   kSumoShapes[sumo - kMinSumo].first_column + counter) +
         2 * cassette;
}
inline constexpr std::int32_t sumo_y(std::uint32_t wire, std::uint32_t strip) noexcept {
  return static_cast<std::int32_t>(16 * strip + wire);
}

/// (x, y) of SUMO `sumo` (3..6) in sector `sector`; the cassette unchecked.
inline constexpr Coords sumo_coords(std::uint32_t sector, std::uint8_t sumo, std::uint8_t anode,
                                    std::uint8_t cathode) noexcept {
  return Coords{sumo_x(sector, sumo, sumo_cassette(sumo, anode, cathode), (anode / 16U) % 2U),
                sumo_y(anode % 16U, cathode % 16U)};
}

inline constexpr PixelResult sumo_pixel(const ess::LogicalGeometry& grid, const Module& m,
                                        const CdtReadout& r) noexcept {
  if (r.unit < kMinSumo || r.unit > kMaxSumo) return reject(PixelStatus::kUnit);
  const std::int32_t cassette = sumo_cassette(r.unit, r.anode, r.cathode);
  if (cassette < 0 || cassette >= kSumoShapes[r.unit - kMinSumo].cassettes) {
    return reject(PixelStatus::kCassette);
  }
  const Coords c = sumo_coords(m.index, r.unit, r.anode, r.cathode);
  return grid_pixel(grid, c.x, c.y);
}

// --- Mantles: DreamMantle (256 strips) and MAGIC's FRDetector (128 strips) ----------------
// mu = Index (mounting unit, 0..4), cassette = Index2 (0..5); A = anode, C = cathode:
//   counter = (A / 32) mod 2, wire = A mod 32, strip = C mod strips
//   x = strip
//   y = 60·wire + 12·mu + 2·cassette + counter      (5 MU × 6 cassettes × 2 counters = 60)
//   local pixel = 1 + x + strips·y, grid strips × 1920
inline constexpr std::uint32_t kMantleRowsPerWire = 60;
inline constexpr std::uint32_t kMantleUnitRows = 12;

/// `strips` is the grid's nx.
inline constexpr Coords mantle_coords(std::uint32_t strips, const Module& m, std::uint8_t anode,
                                      std::uint8_t cathode) noexcept {
  const std::uint32_t counter = (anode / 32U) % 2U;
  const std::uint32_t wire = anode % 32U;
  const std::uint32_t strip = cathode % strips;
  const std::uint32_t y =
      kMantleRowsPerWire * wire + kMantleUnitRows * m.index + 2U * m.index2 + counter;
  return Coords{static_cast<std::int32_t>(strip), static_cast<std::int32_t>(y)};
}

inline constexpr PixelResult mantle_pixel(const ess::LogicalGeometry& grid, const Module& m,
                                          const CdtReadout& r) noexcept {
  const Coords c = mantle_coords(grid.nx, m, r.anode, r.cathode);
  return grid_pixel(grid, c.x, c.y);
}

// --- Cuboids: HR and SANS -----------------------------------------------------------------
// index = Index for UnitId 0, Index2 for UnitId 1; the cuboid's place (col, row) and rotation
// come from the type's table. A = anode, C = cathode:
//   cassette = A / 32 + 2·(C / 32), counter = (A / 16) mod 2, wire = A mod 16, strip = C mod 32
//   unrotated, in the 16 × 16 face: u = 2·cassette + counter, v = 15 − wire
//   rotated clockwise by rotation·90° (kRotations):
//     0: (u, v)   1: (15 − v, u)   2: (15 − u, 15 − v)   3: (v, 15 − u)
//   x = 16·col + u',  y = 112·strip + 16·row + v'
//   local pixel = 1 + x + 112·y, grid 112 × 3584 (7 × 7 faces, 32 strips deep)
struct CuboidPlace {
  std::uint8_t col;
  std::uint8_t row;
  std::uint8_t rotation;  // clockwise quarter turns
};

/// The rotations as data: u' = a + au·u + av·v, v' = b + bu·u + bv·v.
struct Rotation {
  std::int8_t a, au, av, b, bu, bv;
};
// clang-format off
inline constexpr std::array<Rotation, 4> kRotations{{
    { 0,  1,  0,  0,  0,  1},  // 0°:   ( u,      v)
    {15,  0, -1,  0,  1,  0},  // 90°:  (15 − v,  u)
    {15, -1,  0, 15,  0, -1},  // 180°: (15 − u, 15 − v)
    { 0,  0,  1, 15, -1,  0},  // 270°: ( v,     15 − u)
}};
// clang-format on

// clang-format off
// The cuboids' places on the 7 × 7 grid of faces, row by row in index order (the reference's
// OffsetsHR/RotateHR and OffsetsSANS/RotateSANS, with x = 16·col, y = 16·row); blank where
// there is no cuboid. HR has none in column 3 from row 3 down, where SANS has three more.
inline constexpr std::array<CuboidPlace, 33> kHrCuboids{{
    {2, 0, 0}, {3, 0, 1}, {4, 0, 1},
    {1, 1, 0}, {2, 1, 0}, {3, 1, 1}, {4, 1, 1}, {5, 1, 1},
    {0, 2, 0}, {1, 2, 0}, {2, 2, 0}, {3, 2, 1}, {4, 2, 1}, {5, 2, 1}, {6, 2, 1},
    {0, 3, 0}, {1, 3, 0}, {2, 3, 0},            {4, 3, 2}, {5, 3, 2}, {6, 3, 2},
    {0, 4, 3}, {1, 4, 3}, {2, 4, 3},            {4, 4, 2}, {5, 4, 2}, {6, 4, 2},
               {1, 5, 3}, {2, 5, 3},            {4, 5, 2}, {5, 5, 2},
                          {2, 6, 3},            {4, 6, 2},
}};
inline constexpr std::array<CuboidPlace, 36> kSansCuboids{{
    {2, 0, 0}, {3, 0, 1}, {4, 0, 1},
    {1, 1, 0}, {2, 1, 0}, {3, 1, 1}, {4, 1, 1}, {5, 1, 1},
    {0, 2, 0}, {1, 2, 0}, {2, 2, 0}, {3, 2, 1}, {4, 2, 1}, {5, 2, 1}, {6, 2, 1},
    {0, 3, 0}, {1, 3, 0}, {2, 3, 0},            {4, 3, 2}, {5, 3, 2}, {6, 3, 2},
    {0, 4, 3}, {1, 4, 3}, {2, 4, 3}, {3, 4, 3}, {4, 4, 2}, {5, 4, 2}, {6, 4, 2},
               {1, 5, 3}, {2, 5, 3}, {3, 5, 3}, {4, 5, 2}, {5, 5, 2},
                          {2, 6, 3}, {3, 6, 3}, {4, 6, 2},
}};
// clang-format on
inline constexpr std::uint32_t kCuboidSide = 16;
inline constexpr std::uint32_t kCuboidStripRows = 7 * kCuboidSide;  // 112

/// (u, v) turned by `rotation` quarter turns clockwise in the 16 × 16 face.
inline constexpr void rotate(std::uint8_t rotation, std::int32_t& u, std::int32_t& v) noexcept {
  const Rotation& t = kRotations[rotation % 4U];
  const std::int32_t ru = t.a + t.au * u + t.av * v;
  v = t.b + t.bu * u + t.bv * v;
  u = ru;
}

/// (x, y) of a readout on the cuboid at `place` (may fall outside the grid).
inline constexpr Coords cuboid_coords(const CuboidPlace& place, std::uint8_t anode,
                                      std::uint8_t cathode) noexcept {
  const std::int32_t cassette = anode / 32 + 2 * (cathode / 32);
  std::int32_t u = 2 * cassette + (anode / 16) % 2;
  std::int32_t v = 15 - anode % 16;
  rotate(place.rotation, u, v);
  const auto strip = static_cast<std::int32_t>(cathode % 32U);
  return Coords{static_cast<std::int32_t>(kCuboidSide * place.col) + u,
                static_cast<std::int32_t>(kCuboidStripRows) * strip +
                    static_cast<std::int32_t>(kCuboidSide * place.row) + v};
}

inline constexpr PixelResult cuboid_pixel(const ess::LogicalGeometry& grid,
                                          std::span<const CuboidPlace> cuboids, const Module& m,
                                          const CdtReadout& r) noexcept {
  if (r.unit > 1) return reject(PixelStatus::kUnit);
  const std::uint8_t index = r.unit == 0 ? m.index : m.index2;
  if (index >= cuboids.size()) return reject(PixelStatus::kIndex);
  const Coords c = cuboid_coords(cuboids[index], r.anode, r.cathode);
  return grid_pixel(grid, c.x, c.y);
}

// --- MAGIC PADetector ---------------------------------------------------------------------
// sector = Index (0..7); A = anode, C = cathode:
//   cassette = A / 32 + 4·(C / 64), in 0..15
//   counter = (A / 16) mod 2, wire = A mod 16, strip = C mod 32
//   x = 32·sector + 2·cassette + counter
//   y = 16·strip + wire
//   local pixel = 1 + x + 256·y, grid 256 × 512
inline constexpr std::int32_t kPaCassettes = 16;
inline constexpr std::int32_t pa_x(std::uint32_t sector, std::int32_t cassette,
                                   std::uint32_t counter) noexcept {
  return static_cast<std::int32_t>(32 * sector + counter) + 2 * cassette;
}
inline constexpr std::int32_t pa_y(std::uint32_t wire, std::uint32_t strip) noexcept {
  return static_cast<std::int32_t>(16 * strip + wire);
}

inline constexpr std::int32_t pa_cassette(std::uint8_t anode, std::uint8_t cathode) noexcept {
  return anode / 32 + 4 * (cathode / 64);
}
/// (x, y) in sector `sector`; the cassette unchecked.
inline constexpr Coords pa_coords(std::uint32_t sector, std::uint8_t anode,
                                  std::uint8_t cathode) noexcept {
  return Coords{pa_x(sector, pa_cassette(anode, cathode), (anode / 16U) % 2U),
                pa_y(anode % 16U, cathode % 32U)};
}

inline constexpr PixelResult pa_pixel(const ess::LogicalGeometry& grid, const Module& m,
                                      const CdtReadout& r) noexcept {
  if (pa_cassette(r.anode, r.cathode) >= kPaCassettes) return reject(PixelStatus::kCassette);
  const Coords c = pa_coords(m.index, r.anode, r.cathode);
  return grid_pixel(grid, c.x, c.y);
}

// --- HEIMDAL mantle -----------------------------------------------------------------------
// mu = Index (0..11), cassette = Index2 (0..5); A = anode, C = cathode:
//   counter = (A / 32) mod 2, wire = A mod 32, strip = C mod 64
//   x = 12·mu + 2·cassette + counter
//   y = strip + 64·wire
//   local pixel = 1 + x + 144·y, grid 144 × 2048
inline constexpr Coords heimdal_coords(const Module& m, std::uint8_t anode,
                                       std::uint8_t cathode) noexcept {
  const std::uint32_t x = 12U * m.index + 2U * m.index2 + (anode / 32U) % 2U;
  const std::uint32_t y = cathode % 64U + 64U * (anode % 32U);
  return Coords{static_cast<std::int32_t>(x), static_cast<std::int32_t>(y)};
}

inline constexpr PixelResult heimdal_pixel(const ess::LogicalGeometry& grid, const Module& m,
                                           const CdtReadout& r) noexcept {
  const Coords c = heimdal_coords(m, r.anode, r.cathode);
  return grid_pixel(grid, c.x, c.y);
}

// --- Dispatch ---------------------------------------------------------------------------
/// The module type's local pixel (on its own grid). An Index/Index2 outside the type's range
/// (only possible in a table not read by CdtConfig) is kIndex, never a neighbour's pixel.
inline constexpr bool indices_in_range(const Module& m) noexcept {
  if (m.type >= ModuleType::kCount) return false;
  const ModuleTypeInfo& t = info(m.type);
  const bool index2_ok =
      m.index2 <= t.index2_max || (t.index2_may_be_absent && m.index2 == kNoCuboid);
  return m.index <= t.index_max && index2_ok;
}

inline constexpr PixelResult local_pixel(const Module& m, const CdtReadout& r) noexcept {
  if (!indices_in_range(m)) return reject(PixelStatus::kIndex);
  const ess::LogicalGeometry& grid = geometry(m.type).grid;
  switch (m.type) {
    case ModuleType::kBwEndCap:
    case ModuleType::kFwEndCap:
      return sumo_pixel(grid, m, r);
    case ModuleType::kDreamMantle:
    case ModuleType::kFrDetector:
      return mantle_pixel(grid, m, r);
    case ModuleType::kHr:
      return cuboid_pixel(grid, kHrCuboids, m, r);
    case ModuleType::kSans:
      return cuboid_pixel(grid, kSansCuboids, m, r);
    case ModuleType::kPaDetector:
      return pa_pixel(grid, m, r);
    case ModuleType::kHeimdalMantle:
      return heimdal_pixel(grid, m, r);
    case ModuleType::kCount:
      break;
  }
  return reject(PixelStatus::kIndex);
}

/// The instrument's pixel for a readout on module `m`: local pixel + the type's offset.
inline constexpr PixelResult module_pixel(const Module& m, const CdtReadout& r) noexcept {
  const PixelResult local = local_pixel(m, r);
  if (local.status != PixelStatus::kOk) return local;
  return PixelResult{PixelStatus::kOk, local.pixel + geometry(m.type).offset};
}

/// The instrument's pixel for a readout: ring = fibre / 2 and FEN pick the module.
inline constexpr PixelResult pixel(const ModuleTable& modules, const CdtReadout& r) noexcept {
  const std::uint32_t ring = r.fiber / 2U;
  if (ring >= kRings) return reject(PixelStatus::kRing);
  if (r.fen >= kFens) return reject(PixelStatus::kFen);
  const Module& m = modules[ring * kFens + r.fen];
  if (!m.configured) return reject(PixelStatus::kUnconfigured);
  return module_pixel(m, r);
}

}  // namespace efu::cdt
