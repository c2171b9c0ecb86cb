// From one CAEN readout to a pixel id, per instrument, exactly as the facility numbers pixels
// (docs/caen.md has every formula with a worked example). Which straw or tube was hit comes
// from the amplitude pattern, the position along it from charge division; the calibration
// picks the unit by its intervals and, for LoKI, corrects the position.
//
// map() is the hot path: no allocation, no lock; a rejected readout returns the reason, which
// the readout parser counts.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "caen_readout.h"
#include "calibration.h"
#include "config.h"
#include "efu/ess/logical_geometry.h"

namespace efu::caen {

/// Why a readout has no pixel: readouts.errors.<name> (kOk: it has one).
enum class MapStatus : std::uint8_t {
  kOk,
  kRing,              // ring (fibre / 2) above MaxRing, or a LoKI ring not in Config[]
  kFen,               // FEN above MaxFEN, or beyond the LoKI ring's FENs
  kGroup,             // group above MaxGroup (LoKI: above 7, the groups of one FEN)
  kAmplitudeZero,     // the amplitudes sum to 0: no charge division
  kAmplitudeLow,      // the sum is below the --amplitude-threshold
  kAmplitudeHigh,     // the sum is above MaxAmpl
  kPosition,          // charge ratio outside [0, 1]
  kCalibrationGroup,  // no calibration entry for this group
  kOutsideInterval,   // the ratio is in none of the group's unit intervals
  kPixel,             // the position falls outside the instrument's pixel grid
};

/// std::round for a value in [0, 2^31): half away from zero, without the libm call (GCC does
/// not inline round(); it was an eighth of LoKI's pipeline time in caen_bench).
///   i = trunc(v); f = v − i (exact: v and i share their exponent range, Sterbenz);
///   round(v) = i + (f ≥ 0.5)
/// Bit-identical to std::round on that range (tests/caen/pixel_map_test.cpp checks the edges).
inline std::uint32_t round_non_negative(double v) noexcept {
  const auto i = static_cast<std::uint32_t>(v);
  return i + (v - static_cast<double>(i) >= 0.5 ? 1U : 0U);
}

struct MapResult {
  MapStatus status;
  Calibration::Clamp clamp;  // LoKI: the calibrated position was clamped to [0, 1]
  std::uint16_t source;      // the event's ev44 source (source_count()): BIFROST's triplet, else 0
  std::uint32_t pixel;
};

// The instruments' fixed logical geometries (the reference's ESSGeometry sizes).
inline constexpr ess::LogicalGeometry kBifrostGrid{900, 15};
inline constexpr ess::LogicalGeometry kCspecGrid{900, 180};
inline constexpr ess::LogicalGeometry kMiraclesGrid{48, 128};
inline constexpr std::uint32_t kBifrostTripletsPerRing = 15;
inline constexpr std::uint32_t kBifrostTubesPerTriplet = 3;
inline constexpr std::uint32_t kBifrostTubePixels = 100;
inline constexpr std::uint32_t kBifrostArcTripletsPerRing = 3;  // a ring: 3 triplets of each arc
inline constexpr std::uint32_t kCspecGroupsPerRing = 24;
inline constexpr std::uint32_t kMiraclesRingXOffset = 24;  // rings 1 and 3

// --- Sources -------------------------------------------------------------------------------
// BIFROST publishes one ev44 source per tube triplet, as the facility's file writer expects
// (the reference's BifrostGeometry serialisers): source index = ring·15 + group (the
// calibration group), 15·(MaxRing + 1) of them. A ring reads 3 triplets of each of the 5 arcs,
// so the name follows from the index i as
//   ring = i / 15, t = i % 15;  arc = t / 3,  triplet = t % 3 + 3·ring
//   name = "arc={arc};triplet={triplet}"
// e.g. ring 1, group 7 → i = 22 → "arc=2;triplet=4". (Only groups 0..14 reach a pixel: group 15
// would be y ≥ 15, outside the 15-row grid, so every event's index is below the count.)
// The other instruments publish every event under the host's own source (--source): one source,
// index 0.

/// Whether the instrument publishes several sources (BIFROST) rather than the host's own.
inline bool has_own_sources(Instrument instrument) noexcept {
  return instrument == Instrument::kBifrost;
}
/// The number of ev44 sources: 15·(MaxRing + 1) for BIFROST, else 1 (the host's).
std::uint32_t source_count(const CaenConfig& config) noexcept;
/// The name of BIFROST's source `index` ("arc={a};triplet={t}").
std::string bifrost_source_name(std::uint32_t index);

class PixelMap {
 public:
  /// Checks that config and calibration fit together; throws ConfigError naming both files.
  PixelMap(const CaenConfig& config, const Calibration& calibration,
           std::int64_t amplitude_threshold);

  Instrument instrument() const noexcept { return config_.instrument; }
  std::uint32_t pixel_count() const noexcept { return pixel_count_; }

  MapResult map(const CaenReadout& r) const noexcept {
    switch (config_.instrument) {
      case Instrument::kLoki:
        return map_loki(r);
      case Instrument::kBifrost:
        return map_bifrost(r);
      case Instrument::kCspec:
        return map_cspec(r);
      case Instrument::kMiracles:
        return map_miracles(r);
    }
    return fail(MapStatus::kRing);
  }

  /// The instrument's formula alone (map() picks one per readout; the readout parser picks one
  /// per packet). Each is for its own instrument's config only.
  MapResult map_loki(const CaenReadout& r) const noexcept;
  /// map_loki() in three parts (see the LoKI formulas below): loki_prepare() the checks and
  /// integer sums; loki_unit() the straw of the ratio straw / sum, by the group's intervals (-1:
  /// none); loki_finish() the correction of pos = position / sum and the pixel.
  struct LokiPartial {
    std::int32_t position;  // A + B
    std::int32_t straw;     // B + D
    std::int32_t sum;       // A + B + C + D, not 0
    std::uint32_t group;    // the calibration group
    std::uint32_t row;      // y without the straw
  };
  MapStatus loki_prepare(const CaenReadout& r, LokiPartial& p) const noexcept;
  int loki_unit(std::uint32_t group, double straw) const noexcept {
    return calibration_.unit_of(group, straw);
  }
  /// loki_unit()'s look-up as a value (Calibration::lookup()), for a caller's registers.
  Calibration::Lookup unit_lookup() const noexcept { return calibration_.lookup(); }
  /// The last part, as a value that holds what it reads of the map and the calibration: a
  /// caller keeps it in registers over a batch, where the map's own members would be reloaded
  /// after every store the compiler cannot tell apart from them (an event written out).
  struct LokiFinish {
    const UnitCalibration* units;
    std::uint32_t group_size;
    double x_scale;  // Resolution − 1
    ess::LogicalGeometry grid;
    MapResult operator()(std::uint32_t group, std::uint32_t row, int unit,
                         double pos) const noexcept;
  };
  LokiFinish loki_finish() const noexcept;
  MapResult map_bifrost(const CaenReadout& r) const noexcept { return bifrost()(r); }
  MapResult map_cspec(const CaenReadout& r) const noexcept { return cspec()(r); }
  MapResult map_miracles(const CaenReadout& r) const noexcept { return miracles()(r); }

  // LoKI, per (ring, FEN, local group): the global group and the straw row of its unit 0, or
  // why the readout has none (loki_prepare). 12 · 24 · 8 slots of 8 bytes.
  struct LokiSlot {
    std::uint32_t group;  // the global group, or kLokiNoRing / kLokiNoFen
    std::uint32_t row;
  };
  static constexpr std::uint32_t kLokiNoFen = 0xFFFF'FFFEU;
  static constexpr std::uint32_t kLokiNoRing = 0xFFFF'FFFFU;
  static constexpr std::size_t loki_slot_index(std::uint32_t ring, std::uint32_t fen,
                                               std::uint32_t group) noexcept {
    return (std::size_t{ring} * (kMaxFen + 1U) + fen) * kLokiGroupsPerFen + group;
  }
  /// What LoKI's formula reads besides LokiFinish, for its lanes (readout_lanes.h): the slot
  /// table (loki_slot_index(ring, FEN, group % 8) for ring ≤ 11 and FEN ≤ 23), the number of
  /// calibration groups and the threshold.
  struct LokiTables {
    const LokiSlot* slots;
    std::uint32_t calibration_groups;
    std::int64_t threshold;
  };
  LokiTables loki_tables() const noexcept {
    return LokiTables{loki_slots_.data(), calibration_.groups(), threshold_};
  }

  /// The other instruments' formulas as values, like LokiFinish: each holds what its formula
  /// reads of the map (limits, resolution, the calibration's Lookup), so that the readout parser
  /// keeps them in registers over a packet.
  struct SumLimits {
    std::int64_t max_amplitude;
    std::int64_t threshold;
    /// The sum checks every instrument shares; kOk when the sum may be divided by.
    MapStatus check(std::int64_t sum, bool check_high) const noexcept {
      if (sum == 0) return MapStatus::kAmplitudeZero;
      if (check_high && sum > max_amplitude) return MapStatus::kAmplitudeHigh;
      if (sum < threshold) return MapStatus::kAmplitudeLow;
      return MapStatus::kOk;
    }
  };
  struct BifrostMap {
    std::uint32_t max_ring, max_fen, max_group, resolution, groups;
    SumLimits limits;
    Calibration::Lookup calibration;
    MapResult operator()(const CaenReadout& r) const noexcept;
  };
  struct CspecMap {
    std::uint32_t max_ring, max_fen, max_group, resolution;
    SumLimits limits;
    MapResult operator()(const CaenReadout& r) const noexcept;
  };
  struct MiraclesMap {
    std::uint32_t max_ring;
    int half;  // Resolution / 2
    SumLimits limits;
    MapResult operator()(const CaenReadout& r) const noexcept;
  };
  BifrostMap bifrost() const noexcept {
    return BifrostMap{config_.max_ring,     config_.max_fen,       config_.max_group,
                      config_.resolution,   calibration_.groups(), limits(),
                      calibration_.lookup()};
  }
  CspecMap cspec() const noexcept {
    return CspecMap{config_.max_ring, config_.max_fen, config_.max_group, config_.resolution,
                    limits()};
  }
  MiraclesMap miracles() const noexcept {
    return MiraclesMap{config_.max_ring, static_cast<int>(config_.resolution / 2), limits()};
  }

 private:
  static constexpr MapResult fail(MapStatus s) noexcept {
    return MapResult{s, Calibration::Clamp::kNone, 0, 0};
  }
  static constexpr MapResult ok(std::uint32_t pixel,
                                Calibration::Clamp clamp = Calibration::Clamp::kNone,
                                std::uint16_t source = 0) noexcept {
    return pixel == 0 ? fail(MapStatus::kPixel) : MapResult{MapStatus::kOk, clamp, source, pixel};
  }

  SumLimits limits() const noexcept { return SumLimits{config_.max_amplitude, threshold_}; }
  MapStatus check_sum(std::int64_t sum, bool check_high) const noexcept {
    return limits().check(sum, check_high);
  }

  CaenConfig config_;
  Calibration calibration_;
  std::int64_t threshold_;
  std::uint32_t pixel_count_ = 0;
  ess::LogicalGeometry loki_grid_{1, 1};
  std::vector<LokiSlot> loki_slots_;
};

// --- LoKI ---------------------------------------------------------------------------------
// ring = fibre / 2; per ring, its bank's YOffset and GroupsN and the ring's FENOffset:
//   global group = YOffset/7 + (group%4)·GroupsN + (FENOffset+FEN)·2 + group/4
//   straw ratio  = (B + D) / (A + B + C + D) → unit (straw 0..6) by the group's intervals
//   position     = (A + B) / (A + B + C + D), corrected by the unit's polynomial
//   x = round(position · (Resolution − 1))
//   y = YOffset + (group%4)·GroupsN·7 + (FENOffset+FEN)·14 + (group/4)·7 + unit
//   pixel = 1 + x + Resolution · y, on a Resolution × (total groups · 7) grid
//
// In three parts, so that the readout parser can do each for a whole batch of readouts before
// the next (short, independent steps the CPU overlaps, where one readout after the other waited
// on each division's result, then on the straw, then on the cubic): loki_prepare() everything
// up to the divisions, loki_unit() the straw, loki_finish() the rest. map_loki() is the three
// back to back.
//
// The position check needs no division: with sum ≠ 0 and n = A + B, the double n / sum is in
// [0, 1] exactly when n lies between 0 and sum (both ends included). Both are integers below
// 2^18 in magnitude, held exactly; the division is correctly rounded and 0 and 1 are doubles, so
// a quotient in [0, 1] stays there; one outside it is at least 1/sum ≥ 2^-18 away, far more than
// the rounding can move it.
//
// The group and row depend on (ring, FEN, local group) alone, so the constructor works them out
// for every such triple into loki_slots_, and a readout looks its slot up, with the same checks
// in the same order: an unconfigured ring, then a FEN beyond the ring's, then a local group
// above 7 (the slot of group % 8 says the first two, whichever the group), then the sums, the
// position and last the calibration group (the slot holds the global group; one past the
// calibration's is rejected there).
inline MapStatus PixelMap::loki_prepare(const CaenReadout& r, LokiPartial& p) const noexcept {
  // fibre <= 23 and FEN <= 23 were checked (the readout parser's first checks): in the table.
  const LokiSlot slot =
      loki_slots_[loki_slot_index(r.fiber / 2U, r.fen, r.group % kLokiGroupsPerFen)];
  if (slot.group >= kLokiNoFen) [[unlikely]]
    return slot.group == kLokiNoRing ? MapStatus::kRing : MapStatus::kFen;
  if (r.group >= kLokiGroupsPerFen) return MapStatus::kGroup;
  const Amplitudes amp = amplitudes(r, true);
  const std::int32_t sum = amp.a + amp.b + amp.c + amp.d;  // 4 × 16 bits: no overflow
  if (const MapStatus s = check_sum(sum, false); s != MapStatus::kOk) return s;
  const std::int32_t position = amp.a + amp.b;
  const bool inside =
      sum > 0 ? (position >= 0 && position <= sum) : (position <= 0 && position >= sum);
  if (!inside) return MapStatus::kPosition;
  if (slot.group >= calibration_.groups()) return MapStatus::kCalibrationGroup;
  p.position = position;
  p.straw = amp.b + amp.d;
  p.sum = sum;
  p.group = slot.group;
  p.row = slot.row;
  return MapStatus::kOk;
}

inline MapResult PixelMap::LokiFinish::operator()(std::uint32_t group, std::uint32_t row, int unit,
                                                  double pos) const noexcept {
  if (unit < 0) return fail(MapStatus::kOutsideInterval);
  Calibration::Clamp clamp;
  const double corrected = Calibration::correct(
      units[group * group_size + static_cast<std::uint32_t>(unit)], pos, clamp);
  // corrected is in [0, 1] (clamped), so x is in [0, Resolution − 1].
  const auto x = static_cast<std::uint16_t>(round_non_negative(corrected * x_scale));
  return ok(grid.pixel(x, row + static_cast<std::uint32_t>(unit)), clamp);
}

inline PixelMap::LokiFinish PixelMap::loki_finish() const noexcept {
  return LokiFinish{calibration_.units(), calibration_.group_size(),
                    static_cast<double>(config_.resolution - 1), loki_grid_};
}

[[gnu::always_inline]] inline MapResult PixelMap::map_loki(const CaenReadout& r) const noexcept {
  // loki_prepare() relies on the readout parser's fibre and FEN checks; map() may be handed any.
  if (r.fiber > kMaxFiber) return fail(MapStatus::kRing);
  if (r.fen > kMaxFen) return fail(MapStatus::kFen);
  LokiPartial p;
  if (const MapStatus s = loki_prepare(r, p); s != MapStatus::kOk) return fail(s);
  const double straw = static_cast<double>(p.straw) / static_cast<double>(p.sum);
  return loki_finish()(p.group, p.row, loki_unit(p.group, straw),
                       static_cast<double>(p.position) / static_cast<double>(p.sum));
}

// --- BIFROST ------------------------------------------------------------------------------
// ring = fibre / 2, group = the triplet (0..14 in a ring); calibration group = ring·15 + group
//   ratio = A / (A + B) → unit (tube 0..2) by the group's intervals [lo, hi]
//   x = ring·Resolution + (group%3)·100 + trunc((ratio − lo) / (hi − lo) · 99)
//   y = (group/3)·3 + unit
//   pixel = 1 + x + 900·y on the 900 × 15 grid
//   source = ring·15 + group (the calibration group: its triplet)
// The amplitudes are unsigned here and their sum is not 0, so 0 ≤ A ≤ A + B and the correctly
// rounded ratio is in [0, 1]: the position check (readouts.errors.position) cannot fail for
// BIFROST, and the unit is looked up without a range check (unit_of_inside).
[[gnu::always_inline]] inline MapResult PixelMap::BifrostMap::operator()(
    const CaenReadout& r) const noexcept {
  const std::uint32_t ring = r.fiber / 2U;
  if (ring > max_ring) return fail(MapStatus::kRing);
  if (r.fen > max_fen) return fail(MapStatus::kFen);
  if (r.group > max_group) return fail(MapStatus::kGroup);
  const Amplitudes amp = amplitudes(r, false);
  const std::int64_t sum = std::int64_t{amp.a} + amp.b;
  if (const MapStatus s = limits.check(sum, true); s != MapStatus::kOk) return fail(s);
  const double ratio = static_cast<double>(amp.a) / static_cast<double>(sum);
  const std::uint32_t group = ring * kBifrostTripletsPerRing + r.group;
  if (group >= groups) return fail(MapStatus::kCalibrationGroup);
  const int unit = calibration.unit_of_inside(group, ratio);
  if (unit < 0) return fail(MapStatus::kOutsideInterval);
  const UnitCalibration& u = calibration.unit(group, static_cast<std::uint32_t>(unit));
  const double width = u.hi - u.lo;
  const double along = width == 0.0 ? 0.0 : (ratio - u.lo) / width;  // [0, 1]
  const auto x_local = static_cast<std::uint32_t>(along * (kBifrostTubePixels - 1));
  const std::uint32_t x =
      ring * resolution + (r.group % kBifrostTubesPerTriplet) * kBifrostTubePixels + x_local;
  const std::uint32_t y = (r.group / kBifrostTubesPerTriplet) * kBifrostTubesPerTriplet +
                          static_cast<std::uint32_t>(unit);
  // group < 15·(MaxRing + 1) ≤ 180 here: it fits the 16-bit source.
  return ok(kBifrostGrid.pixel(x, y), Calibration::Clamp::kNone, static_cast<std::uint16_t>(group));
}

// --- CSPEC --------------------------------------------------------------------------------
// ring = fibre / 2
//   x = ring·Resolution + (group%24)·(Resolution/24)
//   y = ((Resolution − 1)·A) / (A + B)   (integer division)
//   pixel = 1 + x + 900·y on the 900 × 180 grid
[[gnu::always_inline]] inline MapResult PixelMap::CspecMap::operator()(
    const CaenReadout& r) const noexcept {
  const std::uint32_t ring = r.fiber / 2U;
  if (ring > max_ring) return fail(MapStatus::kRing);
  if (r.fen > max_fen) return fail(MapStatus::kFen);
  if (r.group > max_group) return fail(MapStatus::kGroup);
  const Amplitudes amp = amplitudes(r, false);
  const std::int64_t sum = std::int64_t{amp.a} + amp.b;
  if (const MapStatus s = limits.check(sum, false); s != MapStatus::kOk) return fail(s);
  const std::uint32_t x =
      ring * resolution + (r.group % kCspecGroupsPerRing) * (resolution / kCspecGroupsPerRing);
  const auto y = static_cast<std::uint32_t>((std::int64_t{resolution} - 1) * amp.a / sum);
  return ok(kCspecGrid.pixel(x, y));
}

// --- MIRACLES -----------------------------------------------------------------------------
// ring = fibre / 2; a group is a pair of tubes, A or B, whichever amplitude is larger (A on a
// tie); h = Resolution/2 − 1, p = A / (A + B) in single precision:
//   x = 2·group + (24 if ring is 1 or 3) + (0 for tube A, 1 for tube B)
//   y = (Resolution/2 if ring is 2 or 3) + (tube A: round(h − (p − 0.5)·2·h); tube B: trunc(p·2·h))
//   pixel = 1 + x + 48·y on the 48 × 128 grid
// Tube A's rounding: A ≥ B ≥ 0, so p is in [0.5, 1] (a correctly rounded quotient and its
// conversion to float keep the order of 0.5 ≤ A/(A+B) ≤ 1), (p − 0.5)·2 is in [0, 1] exactly
// and the value rounded is in [0, h] when h ≥ 0: round_non_negative, the same as std::round
// there without the libm call. (h is −1 only for a Resolution below 2; std::round then.)
[[gnu::always_inline]] inline MapResult PixelMap::MiraclesMap::operator()(
    const CaenReadout& r) const noexcept {
  const std::uint32_t ring = r.fiber / 2U;
  if (ring > max_ring) return fail(MapStatus::kRing);
  const Amplitudes amp = amplitudes(r, false);
  const std::int64_t sum = std::int64_t{amp.a} + amp.b;
  if (const MapStatus s = limits.check(sum, true); s != MapStatus::kOk) return fail(s);
  const bool tube_b = amp.a < amp.b;
  const std::uint32_t x =
      2U * r.group + ((ring == 1 || ring == 3) ? kMiraclesRingXOffset : 0U) + (tube_b ? 1U : 0U);
  // The facility computes this in float (then mixed with double): keep the same precision so
  // the rounding edges fall on the same amplitudes.
  const auto p = static_cast<float>(1.0 * amp.a / static_cast<double>(sum));
  const int h = half - 1;
  int along = 0;
  if (!tube_b) {
    const double v = h - (p - 0.5) * 2 * h;
    along = v >= 0.0 ? static_cast<int>(round_non_negative(v)) : static_cast<int>(std::round(v));
  } else {
    along = static_cast<int>(p * 2 * h);
  }
  const int y = ((ring == 2 || ring == 3) ? half : 0) + along;
  if (y < 0) return fail(MapStatus::kPixel);
  return ok(kMiraclesGrid.pixel(x, static_cast<std::uint32_t>(y)));
}

}  // namespace efu::caen
