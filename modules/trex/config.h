// The TREX instrument config, read from the facility's files unchanged (trex.json, let.json;
// docs/trex.md "Instrument config"): which InstrumentGeometry (TREX or LET) numbers the channels,
// the pixel volume, the thresholds, the grid-span cut and the time gaps, each vessel's placement
// (Vessel_Config) and which (ring, FEN, hybrid) reads which vessel (Config[]).
//
// Every check the reference makes is made here, and a few more (ranges, misspelt keys); a bad
// file is one ConfigError naming the file, the JSON path and what was expected (exit 2).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace efu::trex {

/// How the channels are wired: the config's "InstrumentGeometry" (a string only in the file).
enum class InstrumentGeometry : std::uint8_t { kTrex, kLet };
const char* geometry_name(InstrumentGeometry g) noexcept;

/// The ESS header type byte of TREX (the facility's DetectorType table). LET has no entry of its
/// own there: its file says "Detector": "TREX" and the reference validates its packets as TREX.
inline constexpr std::uint8_t kDetectorType = 0x40;

/// One Vessel_Config entry.
struct Vessel {
  std::string id;          // its key in Vessel_Config ("0", "1", ...)
  std::uint8_t num_grids;  // NumGrids: only counted (reference_pixel_count())
  bool rotated;            // Rotation
  bool short_vessel;       // Short
  std::uint16_t x_offset;  // XOffset, in wire columns (16 wires each)
  std::uint16_t y_offset;  // YOffset, in grids
  std::uint16_t min_adc;   // MinADC, else the file's DefaultMinADC
};

/// One Config[] entry: a hybrid and the vessel it reads. Its index in Config[] is its table
/// index (vmm3a::HybridMap, the calibration's tables).
struct HybridEntry {
  std::uint8_t ring;
  std::uint8_t fen;
  std::uint8_t hybrid;
  std::uint16_t vessel;  // index into TrexConfig::vessels
  std::uint16_t unit;    // index into TrexConfig::units: the clustering unit of (ring, FEN)
  std::string hybrid_id;
};

/// A clustering unit: the hybrids of one (ring, FEN), as the reference builds its events per
/// (ring, FEN) (docs/trex.md "Events"). On TREX and LET that is one column of one vessel.
struct Unit {
  std::uint8_t ring;
  std::uint8_t fen;
};

/// A HybridId of 32 zeros stands for "no serial number recorded" (let.json uses it for all four
/// hybrids): it may repeat, and such a hybrid cannot be calibrated.
inline constexpr std::string_view kPlaceholderHybridId = "00000000000000000000000000000000";

struct TrexConfig {
  std::string origin;  // how errors name the file: "trex instrument config '<path>'"
  InstrumentGeometry geometry = InstrumentGeometry::kTrex;
  std::uint16_t size_x = 384;  // SizeX, SizeY, SizeZ: the pixel volume (the reference's defaults)
  std::uint16_t size_y = 140;
  std::uint16_t size_z = 16;
  std::uint16_t default_min_adc = 50;
  std::uint16_t max_grids_span = 3;  // MaxGridsSpan (or MaxGridsPerEvent)
  std::uint64_t max_matching_time_gap_ns = 500;
  std::uint64_t max_clustering_time_gap_ns = 500;
  std::uint64_t max_pulse_time_ns = 5 * 71'428'571ULL;  // MaxPulseTimeNS
  std::vector<Vessel> vessels;
  std::vector<HybridEntry> hybrids;
  std::vector<Unit> units;

  /// NumGrids × 2 columns × 6 × 16 wires summed over Vessel_Config: the reference's NumPixels.
  std::uint32_t reference_pixel_count() const noexcept;
};

/// Throws ConfigError naming the file, the JSON path and what was expected.
TrexConfig load_config_file(const std::string& path);
/// `origin` names the text in errors (tests, fuzzing).
TrexConfig load_config_json(std::string_view text, const std::string& origin);

}  // namespace efu::trex
