// Eight CAEN readouts at a time with AVX2 (every instrument): every check of the readout
// parser and an instrument's formula done on eight lanes at once, the outcome of each lane written
// out for the parser to count and hand on (readout_parser.h, parse_lanes). The scalar walk
// (parse_with) remains for a CPU without AVX2, for the blocks after the last whole eight, and as
// the rule the lanes are tested against (fast_path_test.cpp): the same events and the same counts,
// bit for bit.
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

/// Every lane's bit, in Out::good and Out::earlier.
inline constexpr std::uint32_t kAllLanes = (1U << kLanes) - 1;

/// Eight readouts' outcomes; pulse, TOF and pixel are meaningful for kOk lanes only, clamp
/// only from lanes whose kClamps (LoKI's) and source from those whose kSources (BIFROST's): the
/// others leave them unwritten. `good` and `earlier` sum the lanes up for the hand-off
/// (ReadoutParser::emit_lanes): when good is kAllLanes and earlier 0, the eight are events of the
/// packet's pulse, in readout order, and go on as one run.
struct Out {
  std::uint64_t pulse_ns[kLanes];
  std::uint32_t tof_ns[kLanes];
  std::uint32_t pixel[kLanes];
  std::uint32_t status[kLanes];
  std::uint32_t clamp[kLanes];   // Calibration::Clamp
  std::uint32_t source[kLanes];  // MapResult::source
  std::uint32_t good;            // bit i: status[i] is kOk
  std::uint32_t earlier;         // bit i: lane i is before the pulse (any TOF from the previous)
};

/// The limits a formula compares the ring (fibre / 2), FEN, group and the sum of amplitudes
/// with, clamped to 32 bits: a comparison of an 8-bit field or a 17-bit sum with
/// the clamped limit is the same as with the 64-bit one. A check a formula does not make has
/// the limit kNoLimit.
struct Limits {
  static constexpr std::int32_t kNoLimit = 0x7FFF'FFFF;
  std::int32_t max_ring = kNoLimit, max_fen = kNoLimit, max_group = kNoLimit;
  std::int32_t max_amplitude = kNoLimit;  // clamped to [−1, 2^31 − 1]
  std::int32_t threshold = 0;             // clamped to [0, 2^31 − 1]
};

// Each instrument's lanes: what its formula reads, by value (of()), whether a map's values are
// in the range the lanes handle (supports()), whether they write Out's clamp and source, and
// the function taking `runs` runs of eight readouts at blocks[0 .. runs·8·24) through the time
// rule and the formula, run r's outcomes into out[r] (it needs available() and supports()).
// A call takes many runs so that its set-up (each limit broadcast into a register) is paid
// once per call, not once per eight readouts.

/// MIRACLES' formula (PixelMap::MiraclesMap) as the lanes take it: the ring's and the sum's
/// limits and Resolution / 2 (≥ 1: a Resolution of 1 has no lanes).
struct MiraclesLanes {
  static constexpr bool kClamps = false, kSources = false;
  Limits limits;
  std::int32_t half;
  static bool supports(const PixelMap::MiraclesMap& map) noexcept { return map.half >= 1; }
  static MiraclesLanes of(const PixelMap::MiraclesMap& map) noexcept;
};

void miracles(const std::uint8_t* blocks, std::uint32_t runs, const TimeRule& time,
              const MiraclesLanes& map, Out* out) noexcept;

/// BIFROST's formula (PixelMap::BifrostMap) as the lanes take it: the limits and the
/// calibration's look-up.
struct BifrostLanes {
  static constexpr bool kClamps = false, kSources = true;
  Limits limits;
  std::uint32_t resolution;
  std::uint32_t groups;  // calibration groups
  Calibration::Lookup calibration;
  /// At least one calibration group (a rejected lane reads group 0's table).
  static bool supports(const PixelMap::BifrostMap& map) noexcept { return map.groups > 0; }
  static BifrostLanes of(const PixelMap::BifrostMap& map) noexcept;
};

/// Each event's source is its triplet (the calibration group).
void bifrost(const std::uint8_t* blocks, std::uint32_t runs, const TimeRule& time,
             const BifrostLanes& map, Out* out) noexcept;

/// CSPEC's formula (PixelMap::CspecMap) as the lanes take it: the limits (no MaxAmpl: CSPEC
/// does not check it), Resolution and Resolution / 24. Every Resolution the configuration
/// accepts (1 ..= 65536) keeps x and y below 2^31 and (Resolution − 1)·A below 2^32.
struct CspecLanes {
  static constexpr bool kClamps = false, kSources = false;
  Limits limits;
  std::int32_t resolution;
  std::int32_t x_step;  // Resolution / 24
  static bool supports(const PixelMap::CspecMap& map) noexcept {
    return map.resolution >= 1 && map.resolution <= 65536;
  }
  static CspecLanes of(const PixelMap::CspecMap& map) noexcept;
};

void cspec(const std::uint8_t* blocks, std::uint32_t runs, const TimeRule& time,
           const CspecLanes& map, Out* out) noexcept;

/// LoKI's formula (PixelMap::loki_prepare, Calibration::Lookup::unit_of, LokiFinish) as the
/// lanes take it: the tables and the last part by value.
struct LokiLanes {
  static constexpr bool kClamps = true, kSources = false;
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

void loki(const std::uint8_t* blocks, std::uint32_t runs, const TimeRule& time,
          const LokiLanes& map, Out* out) noexcept;

}  // namespace efu::caen::lanes
