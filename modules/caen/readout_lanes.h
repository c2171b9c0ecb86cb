// Eight CAEN readouts at a time with AVX2 (LoKI, BIFROST, MIRACLES): every check of the readout
// parser and an instrument's formula done on eight lanes at once, the outcome of each lane written out for
// the parser to count and hand on (readout_parser.h, parse_lanes). The scalar walk (parse_with)
// remains for a CPU without AVX2, for the blocks after the last whole eight, and as the rule the
// lanes are tested against (fast_path_test.cpp): the same events and the same counts, bit for
// bit.
//
// Only the functions in readout_lanes_avx2.cpp are compiled for AVX2 (gnu::target), and only
// called after available() said yes; nothing inline is shared with the rest of the program, so
// no AVX2 instruction can leak into code a CPU without it runs.
#pragma once

#include <cstdint>

#include "caen_readout.h"
#include "efu/ess/ess_time.h"
#include "pixel_map.h"

namespace efu::caen::lanes {

inline constexpr std::uint32_t kLanes = 8;

/// Whether this CPU runs the lanes (AVX2).
bool available() noexcept;

/// A lane's outcome: kOk (an event), kBadLength (the block's data_length is not 24: the block
/// walker's readouts.errors.length), or kFirstError + the ReadoutError that rejected it.
enum LaneStatus : std::uint32_t { kOk = 0, kBadLength = 1, kFirstError = 2 };

/// What every instrument checks first (ReadoutParser::timed) and the packet's pulses.
struct TimeRule {
  std::uint64_t pulse_ns;
  std::uint64_t prev_pulse_ns;
  std::uint64_t max_tof_ns;
  std::int64_t readout_delay_ns;
};

/// Eight readouts' outcomes; pulse, TOF, pixel, clamp and source are meaningful for kOk lanes
/// only, clamp for LoKI's lanes and source for BIFROST's.
struct Out {
  std::uint64_t pulse_ns[kLanes];
  std::uint32_t tof_ns[kLanes];
  std::uint32_t pixel[kLanes];
  std::uint32_t status[kLanes];
  std::uint32_t clamp[kLanes];   // Calibration::Clamp
  std::uint32_t source[kLanes];  // MapResult::source
};

/// MIRACLES' formula (PixelMap::MiraclesMap) as the lanes take it. supports() says whether a
/// map's values are in the range the lanes handle (Resolution ≥ 2; the limits clamped to 32
/// bits keep every comparison a 17-bit sum can make).
struct MiraclesLanes {
  std::int32_t max_ring;
  std::int32_t half;           // Resolution / 2, ≥ 1
  std::int32_t max_amplitude;  // clamped to [−1, 2^31 − 1]
  std::int32_t threshold;      // clamped to [0, 2^31 − 1]
  static bool supports(const PixelMap::MiraclesMap& map) noexcept { return map.half >= 1; }
  static MiraclesLanes of(const PixelMap::MiraclesMap& map) noexcept;
};

/// The eight readouts at blocks[0 .. 8·24) through the time rule and MIRACLES' formula.
/// Needs available() and MiraclesLanes::supports().
void miracles(const std::uint8_t* blocks, const TimeRule& time, const MiraclesLanes& map,
              Out& out) noexcept;

/// BIFROST's formula (PixelMap::BifrostMap) as the lanes take it: the limits clamped to 32 bits
/// (the same comparisons with a 17-bit sum) and the calibration's look-up.
struct BifrostLanes {
  std::int32_t max_ring, max_fen, max_group;
  std::uint32_t resolution;
  std::uint32_t groups;  // calibration groups
  std::int32_t max_amplitude;
  std::int32_t threshold;
  Calibration::Lookup calibration;
  /// At least one calibration group (a rejected lane reads group 0's table).
  static bool supports(const PixelMap::BifrostMap& map) noexcept { return map.groups > 0; }
  static BifrostLanes of(const PixelMap::BifrostMap& map) noexcept;
};

/// The eight readouts at blocks[0 .. 8·24) through the time rule and BIFROST's formula, each
/// event's source its triplet. Needs available() and BifrostLanes::supports().
void bifrost(const std::uint8_t* blocks, const TimeRule& time, const BifrostLanes& map,
             Out& out) noexcept;

/// LoKI's formula (PixelMap::loki_prepare, Calibration::Lookup::unit_of, LokiFinish) as the
/// lanes take it: the tables and the last part by value.
struct LokiLanes {
  PixelMap::LokiTables tables;
  std::int32_t threshold;  // clamped to 32 bits: the same comparisons with a 19-bit sum
  Calibration::Lookup units;
  PixelMap::LokiFinish finish;
  /// LoKI with at least one calibration group (a rejected lane reads group 0's table).
  static bool supports(const PixelMap& map) noexcept {
    return map.instrument() == Instrument::kLoki && map.loki_tables().calibration_groups > 0;
  }
  static LokiLanes of(const PixelMap& map) noexcept;
};

/// The eight readouts at blocks[0 .. 8·24) through the time rule and LoKI's formula. Needs
/// available() and LokiLanes::supports().
void loki(const std::uint8_t* blocks, const TimeRule& time, const LokiLanes& map,
          Out& out) noexcept;

}  // namespace efu::caen::lanes
