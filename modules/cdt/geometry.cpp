#include "geometry.h"

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

}  // namespace efu::cdt
