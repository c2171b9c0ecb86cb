// The instrument file of a CDT detector in the facility's format (docs/cdt.md): `Detector`
// (DREAM, MAGIC or HEIMDAL), `MaxPulseTimeDiffNS`, and `Config[]` of
// {Ring, FEN, Type, Index, Index2}, one entry per (ring, FEN) pair, read once at start-up into
// a table the geometry indexes by (ring, FEN). Every bad value is a ConfigError naming the file,
// the JSON path and what was expected.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "cdt_readout.h"

namespace efu::cdt {

/// "DREAM", "MAGIC", "HEIMDAL": the `Detector` value.
const char* instrument_name(Instrument instrument) noexcept;

/// The CDT module types. Each belongs to one instrument (the reference's MagicGeometry and
/// HeimdalGeometry give every other type no pixel offset, so no pixel).
enum class ModuleType : std::uint8_t {
  kBwEndCap,       // DREAM backward endcap (SUMO), Index = sector
  kFwEndCap,       // DREAM forward endcap (SUMO), Index = sector
  kDreamMantle,    // DREAM mantle, Index = mounting unit, Index2 = cassette
  kHr,             // DREAM high-resolution cuboids, Index/Index2 = cuboid of UnitId 0/1
  kSans,           // DREAM SANS cuboids, Index/Index2 = cuboid of UnitId 0/1
  kPaDetector,     // MAGIC PA detector, Index = sector
  kFrDetector,     // MAGIC FR detector (the DREAM mantle with 128 strips), Index = MU, Index2 =
                   // cassette
  kHeimdalMantle,  // HEIMDAL mantle, Index = mounting unit, Index2 = cassette
  kCount
};
inline constexpr std::size_t kModuleTypes = static_cast<std::size_t>(ModuleType::kCount);

/// What the instrument file may say about each module type: its `Type` name (spelt as the
/// reference spells it), its instrument and the ranges of Index and Index2 that fit its
/// geometry (geometry.h explains each bound). A cuboid's Index2 may also be kNoCuboid: no second
/// cuboid on that FEN (the facility's hr.json does this).
struct ModuleTypeInfo {
  const char* name;
  Instrument instrument;
  std::uint8_t index_max;
  std::uint8_t index2_max;
  bool index2_may_be_absent;
};
inline constexpr std::uint8_t kNoCuboid = 255;
inline constexpr std::array<ModuleTypeInfo, kModuleTypes> kModuleTypeInfo{{
    {"BwEndCap", Instrument::kDream, 10, 255, false},       // 11 sectors; Index2 (SUMO pair) unused
    {"FwEndCap", Instrument::kDream, 4, 255, false},        // 5 sectors; Index2 unused
    {"DreamMantle", Instrument::kDream, 4, 5, false},       // 5 mounting units of 6 cassettes
    {"HR", Instrument::kDream, 32, 32, true},               // 33 cuboids
    {"SANS", Instrument::kDream, 35, 35, true},             // 36 cuboids
    {"PADetector", Instrument::kMagic, 7, 255, false},      // 8 sectors; Index2 unused
    {"FRDetector", Instrument::kMagic, 4, 5, false},        // as the DREAM mantle
    {"HeimdalMantle", Instrument::kHeimdal, 11, 5, false},  // 12 mounting units of 6 cassettes
}};

inline constexpr const ModuleTypeInfo& info(ModuleType type) noexcept {
  return kModuleTypeInfo[static_cast<std::size_t>(type)];
}

/// What one (ring, FEN) pair reads out. 4 bytes, so the whole table is 576 bytes.
struct Module {
  bool configured = false;
  ModuleType type = ModuleType::kBwEndCap;
  std::uint8_t index = 0;   // Index: sector, mounting unit or cuboid (0 when absent)
  std::uint8_t index2 = 0;  // Index2: cassette or second cuboid (0 when absent)
};

inline constexpr std::uint32_t kRings = 12;  // logical rings 0..11 (fibre / 2)
inline constexpr std::uint32_t kFens = 12;   // FENs 0..11 per ring
using ModuleTable = std::array<Module, kRings * kFens>;

struct CdtConfig {
  Instrument instrument = Instrument::kDream;
  std::string path;
  /// MaxPulseTimeDiffNS; the reference's default, 5 pulse periods.
  std::uint64_t max_pulse_time_diff_ns = 5ULL * 71'428'571;
  ModuleTable modules{};
  std::uint32_t configured = 0;  // entries in Config[]

  const Module& module(std::uint32_t ring, std::uint32_t fen) const noexcept {
    return modules[ring * kFens + fen];
  }

  /// Throws ConfigError naming the file, the JSON path and what was expected.
  static CdtConfig from_file(const std::string& path);
  static CdtConfig from_text(std::string_view text, const std::string& origin);
};

}  // namespace efu::cdt
