// The beam-monitor config, read from the facility's files unchanged (the reference's
// src/modules/cbm/configs/*.json and, for BEER, src/modules/beer/test/*.json; docs/cbm.md
// "Config"): which detector (CBM or BEER), the ring the monitors hang on, the time limits, and
// one Topology[] entry per monitor: its (FEN, Channel), its type, the source name it publishes
// under, its schema (ev44 or da00) and the per-type parameters.
//
// Every check the reference makes is made here, and a few more (ranges, misspelt keys, rules the
// reference's samples break); a bad file is one ConfigError naming the file, the JSON path and
// what was expected (exit 2).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cbm_readout.h"

namespace efu::cbm {

/// The config's "Detector": the beam monitors (any type, ev44 or da00) or BEER (EVENT_2D into
/// ev44 only, the facility's src/modules/beer/).
enum class Instrument : std::uint8_t { kCbm, kBeer };
const char* instrument_name(Instrument i) noexcept;
/// The ESS header type byte that instrument's packets carry.
std::uint8_t detector_type(Instrument i) noexcept;

/// An entry's "Schema" (case-insensitive in the file, as the reference reads it).
enum class Schema : std::uint8_t { kEv44, kDa00 };
const char* schema_name(Schema s) noexcept;
const char* type_name(MonitorType t) noexcept;

/// AggregationMode: 0 sums the AggregatedFrames pulses' histograms, 1 averages them.
enum class AggregationMode : std::uint8_t { kSum = 0, kAverage = 1 };

/// The reference's defaults.
inline constexpr std::uint64_t kDefaultMaxTofNs = 20ULL * 71'428'571;           // 20 pulses
inline constexpr std::uint64_t kDefaultMaxPulseTimeDiffNs = 5ULL * 71'428'571;  // 5 pulses
inline constexpr std::uint8_t kDefaultMonitorRing = 11;
inline constexpr std::uint8_t kDefaultMaxRing = 11;
/// The largest time of flight ev44 holds (its time_of_flight is an int32): a MaxTOFNS above it
/// works as this limit (docs/cbm.md "Differences").
inline constexpr std::uint64_t kMaxEv44TofNs = 0x7FFF'FFFF;
/// The largest BinCount accepted: 2^20 bins of int32 are a 4 MiB da00 message.
inline constexpr std::int32_t kMaxBinCount = 1 << 20;
/// AggregatedFrames is 8 bits in the reference (it casts the file's int to uint8_t).
inline constexpr std::uint32_t kMaxAggregatedFrames = 255;

/// One Topology[] entry: one monitor, one source.
struct Monitor {
  std::uint8_t fen = 0;
  std::uint8_t channel = 0;
  MonitorType type = MonitorType::kEvent0D;
  Schema schema = Schema::kEv44;
  std::string source;  // Source: the name its ev44 or da00 messages carry
  // EVENT_0D (ev44): the pixel of every event; EVENT_2D: added to the 2D pixel (0 by default).
  std::uint32_t pixel_offset = 0;
  // EVENT_2D: the grid; pixel = 1 + x + width * y + pixel_offset (x < width, y < height).
  std::uint16_t width = 0;
  std::uint16_t height = 0;
  // da00 histograms (EVENT_0D or IBM with Schema da00): MaxTofBin is the TOF range in ns,
  // split into BinCount bins; AggregatedFrames pulses per message, summed or averaged. IBM
  // entries must give MaxTofBin and BinCount also with ev44 (the reference requires them).
  std::int32_t max_tof_bin = 0;
  std::int32_t bin_count = 0;
  std::uint32_t aggregated_frames = 1;
  AggregationMode aggregation = AggregationMode::kSum;
};

struct CbmConfig {
  std::string origin;  // how errors name the file: "cbm config '<path>'"
  Instrument instrument = Instrument::kCbm;
  std::uint64_t max_pulse_time_diff_ns = kDefaultMaxPulseTimeDiffNs;  // MaxPulseTimeDiffNS
  std::uint64_t max_tof_ns = kDefaultMaxTofNs;      // MaxTOFNS as the file says it (64 bits)
  std::uint8_t monitor_ring = kDefaultMonitorRing;  // MonitorRing: the only ring accepted
  std::uint8_t max_ring = kDefaultMaxRing;          // MaxRing
  std::uint8_t max_fen_id = 0;                      // MaxFENId (required)
  bool normalize_ibm = true;                        // NormalizeIBMReadouts
  std::vector<Monitor> monitors;                    // Topology[], in file order

  /// The TOF limit applied to readouts: MaxTOFNS, at most kMaxEv44TofNs.
  std::uint64_t effective_max_tof_ns() const noexcept {
    return max_tof_ns < kMaxEv44TofNs ? max_tof_ns : kMaxEv44TofNs;
  }
  /// The index in `monitors` of (fen, channel), or -1.
  int find(std::uint8_t fen, std::uint8_t channel) const noexcept;
};

/// Throws ConfigError naming the file, the JSON path and what was expected.
CbmConfig load_config_file(const std::string& path);
/// `origin` names the text in errors (tests, fuzzing).
CbmConfig load_config_json(std::string_view text, const std::string& origin);

}  // namespace efu::cbm
