#include "geometry.h"

#include <algorithm>
#include <stdexcept>

#include "pixel_map.h"

namespace efu::cdt {
namespace {

constexpr std::uint32_t end_of(ModuleType type) {
  return geometry(type).offset + geometry(type).grid.pixel_count();
}

// The ICD offsets tile each instrument's pixel space: every type starts where the previous ends.
static_assert(geometry(ModuleType::kFwEndCap).offset == 0);
static_assert(geometry(ModuleType::kBwEndCap).offset == end_of(ModuleType::kFwEndCap));
static_assert(geometry(ModuleType::kDreamMantle).offset == end_of(ModuleType::kBwEndCap));
static_assert(geometry(ModuleType::kSans).offset == end_of(ModuleType::kDreamMantle));
static_assert(geometry(ModuleType::kHr).offset == end_of(ModuleType::kSans));
static_assert(geometry(ModuleType::kFrDetector).offset == 0);
static_assert(geometry(ModuleType::kPaDetector).offset == end_of(ModuleType::kFrDetector));
static_assert(geometry(ModuleType::kHeimdalMantle).offset == 0);

// The config's Index/Index2 bounds keep every formula inside its grid (geometry.h):
// endcap sectors fill the grid's width, 5 MU × 6 cassettes × 2 counters fill a mantle wire's 60
// rows, 12 MU × 12 columns fill HEIMDAL's 144, 8 PA sectors × 32 columns fill 256.
static_assert(geometry(ModuleType::kBwEndCap).grid.nx ==
              kSumoSectorColumns * (info(ModuleType::kBwEndCap).index_max + 1U));
static_assert(geometry(ModuleType::kFwEndCap).grid.nx ==
              kSumoSectorColumns * (info(ModuleType::kFwEndCap).index_max + 1U));
static_assert(kMantleUnitRows * (info(ModuleType::kDreamMantle).index_max + 1U) ==
              kMantleRowsPerWire);
static_assert(2U * (info(ModuleType::kDreamMantle).index2_max + 1U) == kMantleUnitRows);
static_assert(geometry(ModuleType::kHeimdalMantle).grid.nx ==
              12U * (info(ModuleType::kHeimdalMantle).index_max + 1U));
static_assert(geometry(ModuleType::kPaDetector).grid.nx ==
              32U * (info(ModuleType::kPaDetector).index_max + 1U));
static_assert(kHrCuboids.size() == info(ModuleType::kHr).index_max + 1U);
static_assert(kSansCuboids.size() == info(ModuleType::kSans).index_max + 1U);

}  // namespace

std::uint32_t pixel_count(Instrument instrument) noexcept {
  std::uint32_t count = 0;
  for (std::size_t i = 0; i < kModuleTypes; ++i) {
    if (kModuleTypeInfo[i].instrument != instrument) continue;
    const std::uint32_t end = end_of(static_cast<ModuleType>(i));
    count = end > count ? end : count;
  }
  return count;
}

// --- PixelMap (pixel_map.h) ------------------------------------------------------------
// Kept here, beside the formulas it tabulates, so the plugin's core library needs no new file.
namespace {

// The packed sums are exact while every coordinate sum stays within ±32767 (pixel_map.h); the
// largest grids are 616 columns wide and 3584 rows high (geometry.h), so every term and corner
// is far below 32767 / 3, which keeps a sum of three within ±32767. Checked per term.
constexpr std::int32_t kLaneLimit = 0x7FFF / 3;

std::int32_t checked_lane(std::int32_t v) {
  if (v > kLaneLimit || v < -kLaneLimit) throw std::logic_error("PixelMap: term out of range");
  return v;
}

PixelMap::Term difference(Coords a, Coords origin) {
  return PixelMap::pack(checked_lane(a.x - origin.x), checked_lane(a.y - origin.y));
}

}  // namespace

PixelMap::PixelMap(const ModuleTable& modules) {
  for (std::uint32_t slot = 0; slot < modules.size(); ++slot) build(slot, modules[slot]);
}

std::uint16_t PixelMap::add_terms(const TermTable& table) {
  for (std::uint32_t n = 0; n < term_tables_; ++n) {
    const auto at = static_cast<std::ptrdiff_t>(n * table.size());
    if (std::equal(table.begin(), table.end(), terms_.begin() + at)) {
      return static_cast<std::uint16_t>(at);
    }
  }
  // The tables depend on the SUMO, the mantle width, the rotation or the type alone, so no
  // ModuleTable needs more (the file comment); this guards the reasoning.
  if (term_tables_ == kMaxTermTables) throw std::logic_error("PixelMap: too many term tables");
  const auto at = static_cast<std::ptrdiff_t>(term_tables_++ * table.size());
  std::copy(table.begin(), table.end(), terms_.begin() + at);
  return static_cast<std::uint16_t>(at);
}

// The terms: anode terms at cathode 0, cathode terms at anode 0, both relative to coords(0, 0)
// (pixel_map.h explains why their sum is exact). The y window is the grid's whole height in
// every type, so only x has a corner: base = 1 + offset + xlo.
template <typename Coordinates>
PixelMap::Plan PixelMap::plan(ModuleType type, Window w, Coordinates coords) {
  const ModuleGeometry& g = geometry(type);
  const Coords origin = coords(0, 0);
  TermTable t{};
  for (std::uint32_t v = 0; v < kTermsPerSide; ++v) {
    const auto b = static_cast<std::uint8_t>(v);
    t[v] = difference(coords(b, 0), origin);
    t[kTermsPerSide + v] = difference(coords(0, b), origin);
  }
  return Plan{pack(checked_lane(origin.x - w.xlo), checked_lane(origin.y)),
              1U + g.offset + static_cast<std::uint32_t>(w.xlo),
              add_terms(t),
              static_cast<std::uint16_t>(w.xspan),
              static_cast<std::uint16_t>(g.grid.ny),
              static_cast<std::uint16_t>(g.grid.nx),
              w.fail,
              false};
}

void PixelMap::build(std::uint32_t slot, const Module& m) {
  Plan* plans = &plans_[slot * kPlansPerSlot];
  if (!m.configured) return;  // the default plans: kUnconfigured for every UnitId
  if (!indices_in_range(m)) return same_for_every_unit(plans, Plan{.fail = PixelStatus::kIndex});
  const Window grid{0, geometry(m.type).grid.nx, PixelStatus::kPixel};
  switch (m.type) {
    case ModuleType::kBwEndCap:
    case ModuleType::kFwEndCap:
      unit_plans_only(plans);
      for (std::uint8_t sumo = kMinSumo; sumo <= kMaxSumo; ++sumo) {
        // cassette in 0..n−1 ⇔ x − (x at cassette 0, counter 0) in 0..2n−1
        const Window w{sumo_x(m.index, sumo, 0, 0), 2U * kSumoShapes[sumo - kMinSumo].cassettes,
                       PixelStatus::kCassette};
        plans[sumo] = plan(m.type, w, [&](std::uint8_t a, std::uint8_t c) {
          return sumo_coords(m.index, sumo, a, c);
        });
      }
      return;
    case ModuleType::kHr:
    case ModuleType::kSans:
      unit_plans_only(plans);
      build_cuboid(plans[0], m.type, m.index);
      build_cuboid(plans[1], m.type, m.index2);
      return;
    case ModuleType::kPaDetector:
      return same_for_every_unit(
          plans, plan(m.type, Window{pa_x(m.index, 0, 0), 2U * kPaCassettes, PixelStatus::kCassette},
                      [&](std::uint8_t a, std::uint8_t c) { return pa_coords(m.index, a, c); }));
    case ModuleType::kDreamMantle:
    case ModuleType::kFrDetector: {
      const std::uint32_t strips = geometry(m.type).grid.nx;
      return same_for_every_unit(plans, plan(m.type, grid, [&](std::uint8_t a, std::uint8_t c) {
                                   return mantle_coords(strips, m, a, c);
                                 }));
    }
    case ModuleType::kHeimdalMantle:
      return same_for_every_unit(plans, plan(m.type, grid, [&](std::uint8_t a, std::uint8_t c) {
                                   return heimdal_coords(m, a, c);
                                 }));
    case ModuleType::kCount:
      break;
  }
}

/// A type that ignores UnitId (or a pair that rejects everything): one plan for every UnitId.
void PixelMap::same_for_every_unit(Plan* plans, Plan p) {
  p.any_unit = true;
  std::fill(plans, plans + kPlansPerSlot, p);
}

/// A type with UnitIds of its own (SUMO, cuboid): kUnit unless the caller fills a plan in.
void PixelMap::unit_plans_only(Plan* plans) {
  std::fill(plans, plans + kPlansPerSlot, Plan{.fail = PixelStatus::kUnit, .any_unit = false});
}

/// UnitId 0 or 1 of a cuboid FEN: the cuboid `index` (kIndex when there is none, as the
/// facility's hr.json leaves some FENs with one cuboid).
void PixelMap::build_cuboid(Plan& p, ModuleType type, std::uint8_t index) {
  const std::span<const CuboidPlace> cuboids =
      type == ModuleType::kHr ? std::span<const CuboidPlace>(kHrCuboids) : kSansCuboids;
  if (index >= cuboids.size()) {
    p = Plan{.fail = PixelStatus::kIndex, .any_unit = false};
    return;
  }
  const CuboidPlace& place = cuboids[index];
  p = plan(type, Window{0, geometry(type).grid.nx, PixelStatus::kPixel},
           [&](std::uint8_t a, std::uint8_t c) { return cuboid_coords(place, a, c); });
}

}  // namespace efu::cdt
