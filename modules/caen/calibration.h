// The charge-division calibration file, in the facility's format (docs/caen.md):
//
//   {"Calibration": {"instrument": "loki", "groups": G, "groupsize": N,
//     "Parameters": [{"groupindex": 0, "intervals": [[lo, hi], ... N],
//                     "polynomials": [[a, b, c, d], ... N]}, ... G]}}
//
// Per group (a tube, a triplet, a tube pair), `intervals` say which charge ratio belongs to
// which straw or tube of the group ("unit"); `polynomials` correct the position along a unit:
// corrected = pos - (a + b·pos + c·pos² + d·pos³), clamped to [0, 1].
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace efu {
class JsonDocument;
}

namespace efu::caen {

/// Interval endpoints closer than this count as overlapping (the facility's rule).
inline constexpr double kIntervalEpsilon = 0.00001;

struct UnitCalibration {
  double lo;  // the interval as written: lo may be above hi
  double hi;
  double min;  // the same, ordered
  double max;
  double a, b, c, d;
};

class Calibration {
 public:
  /// Throws ConfigError naming the file, the JSON path and what was expected. `instrument` must
  /// equal the file's `instrument`.
  static Calibration from_file(const std::string& path, std::string_view instrument);
  static Calibration from_text(std::string_view text, const std::string& origin,
                               std::string_view instrument);

  std::uint32_t groups() const noexcept { return groups_; }
  std::uint32_t group_size() const noexcept { return group_size_; }

  /// The unit whose interval holds `pos` (endpoints included; the first such unit), or -1.
  /// `group` must be < groups(). (Lookup::unit_of has the method.)
  int unit_of(std::uint32_t group, double pos) const noexcept;
  /// unit_of() by testing every interval of the group (Lookup::scan_units).
  int scan_units(std::uint32_t group, double pos) const noexcept;

  class Lookup;
  /// What unit_of() reads, as a value: a caller keeps it in registers over a packet, where the
  /// calibration's own members would be reloaded after every store the compiler cannot tell
  /// apart from them (an event written out).
  Lookup lookup() const noexcept;

  const UnitCalibration& unit(std::uint32_t group, std::uint32_t unit) const noexcept {
    return units_[group * group_size_ + unit];
  }

  enum class Clamp : std::uint8_t { kNone = 0, kLow = 1, kHigh = 2 };

  /// The polynomial correction of a position along a unit, clamped to [0, 1]:
  ///   corrected = pos − (a + b·pos + c·pos² + d·pos³), evaluated as a + pos·(b + pos·(c + pos·d))
  ///   clamp     = kLow if corrected < 0, kHigh if corrected > 1, else kNone
  /// The clamp is computed, not branched on (as branches it mispredicted where a calibration
  /// pushes many positions past an end). The selects below keep −0.0 and every other value
  /// exactly as the if/else form did.
  static double correct(const UnitCalibration& u, double pos, Clamp& clamp) noexcept {
    const double delta = u.a + pos * (u.b + pos * (u.c + pos * u.d));
    const double corrected = pos - delta;
    const bool low = corrected < 0.0;
    const bool high = corrected > 1.0;
    clamp =
        static_cast<Clamp>(static_cast<std::uint8_t>(low) | static_cast<std::uint8_t>(high) << 1);
    return low ? 0.0 : (high ? 1.0 : corrected);
  }
  double correct(std::uint32_t group, std::uint32_t unit, double pos, Clamp& clamp) const noexcept {
    return correct(units_[group * group_size_ + unit], pos, clamp);
  }

  /// Every unit, group after group (groups() × group_size()): for a caller that keeps the
  /// pointer and the group size in registers over many readouts (the LoKI readout parser).
  const UnitCalibration* units() const noexcept { return units_.data(); }

 private:
  static Calibration parse(const JsonDocument& doc, std::string_view instrument);

  std::uint32_t groups_ = 0;
  std::uint32_t group_size_ = 0;
  std::vector<UnitCalibration> units_;  // groups_ × group_size_
  // unit_of()'s table: per group, kBuckets buckets of up to two unit numbers.
  static constexpr std::uint32_t kBuckets = 64;
  static constexpr std::uint8_t kScanGroup = 0xFF;  // the bucket needs scan_units()
  struct Bucket {
    std::uint8_t first;   // a unit, the padding slot (none), or kScanGroup
    std::uint8_t second;  // a later unit, or the padding slot
  };
  void build_buckets();
  std::vector<Bucket> buckets_;  // groups_ × kBuckets
  // The same intervals' ordered ends, unit after unit, each group's padded to stride_ (its
  // size plus at least one, rounded up to even) with the empty interval [1, 0].
  std::uint32_t stride_ = 0;
  std::vector<double> min_;
  std::vector<double> max_;
};

/// Calibration::unit_of()'s table and intervals, by pointer and size (Calibration::lookup()).
class Calibration::Lookup {
 public:
  /// The unit whose interval holds `pos` (endpoints included; the first such unit), or -1.
  /// `group` must be < the calibration's groups().
  ///
  /// By a table rather than a test of every interval (which cost LoKI about 40 instructions a
  /// readout). Every interval lies in [0, 1] (the file's rule), so a `pos` outside it is in
  /// none. Inside, the group's table has kBuckets buckets: bucket k is the positions with
  ///   k = min(floor(pos · kBuckets), kBuckets − 1)
  /// (a product by a power of two is exact, so k is exactly that floor), holding the units
  /// whose intervals reach into [k / kBuckets, (k + 1) / kBuckets], in unit order. No other unit
  /// can hold such a `pos`, so testing the bucket's units in order gives the first unit that
  /// holds it, exactly as testing every unit would. A bucket lists up to two units (a boundary
  /// between two intervals); one that would need more is marked and falls back to testing the
  /// whole group (scan_units). An unused entry names the group's padding slot, the empty
  /// interval [1, 0], which holds nothing.
  int unit_of(std::uint32_t group, double pos) const noexcept {
    if (!(pos >= 0.0 && pos <= 1.0)) return -1;  // also a NaN
    return unit_of_inside(group, pos);
  }
  /// unit_of() for a `pos` known to be in [0, 1] (a ratio of non-negative amplitudes).
  int unit_of_inside(std::uint32_t group, double pos) const noexcept {
    const auto k = std::min(static_cast<std::uint32_t>(pos * kBuckets), kBuckets - 1);
    const Bucket b = buckets_[std::size_t{group} * kBuckets + k];
    if (b.first == kScanGroup) [[unlikely]]
      return scan_units(group, pos);
    const double* min = &min_[std::size_t{group} * stride_];
    const double* max = &max_[std::size_t{group} * stride_];
    const bool first = pos >= min[b.first] && pos <= max[b.first];
    const bool second = pos >= min[b.second] && pos <= max[b.second];
    return first ? b.first : (second ? b.second : -1);
  }

  /// unit_of() by testing every interval of the group: the hits collected as a bit mask, whose
  /// lowest set bit is the first unit that holds `pos` (no branch per unit). With SSE2 (every
  /// x86-64) two intervals per compare, over the group's padded ends.
  int scan_units(std::uint32_t group, double pos) const noexcept {
    const double* min = &min_[std::size_t{group} * stride_];
    const double* max = &max_[std::size_t{group} * stride_];
    std::uint64_t hits = 0;
    // The slots past the 64th are padding (a group has at most 64 units), which never hit: the
    // mask's 64 bits hold every unit.
    const std::uint32_t lanes = std::min(stride_, 64U);
#if defined(__SSE2__)
    // cmpge/cmple are the ordered compares: false for a NaN, as `pos >= min` is.
    const __m128d p = _mm_set1_pd(pos);
    for (std::uint32_t i = 0; i < lanes; i += 2) {
      const __m128d in = _mm_and_pd(_mm_cmpge_pd(p, _mm_loadu_pd(min + i)),
                                    _mm_cmple_pd(p, _mm_loadu_pd(max + i)));
      hits |= static_cast<std::uint64_t>(_mm_movemask_pd(in)) << i;
    }
#else
    for (std::uint32_t i = 0; i < lanes; ++i) {
      hits |= static_cast<std::uint64_t>((pos >= min[i]) & (pos <= max[i])) << i;
    }
#endif
    return hits == 0 ? -1 : std::countr_zero(hits);
  }

  /// The calibration of a group's unit (Calibration::unit()).
  const UnitCalibration& unit(std::uint32_t group, std::uint32_t unit) const noexcept {
    return units_[group * group_size_ + unit];
  }

  /// unit_of_inside()'s steps, for code that takes them for several readouts at once (the
  /// lanes, readout_lanes_avx2.cpp); unit_of_inside() is the rule they must give.
  ///   bucket(group, k): bucket k's .first and .second unit (.first kScan: scan_units());
  ///   ends(group, unit): offset of the unit's ordered interval ends in min() and max().
  static constexpr std::uint32_t kTableBuckets = Calibration::kBuckets;
  static constexpr std::uint8_t kScan = Calibration::kScanGroup;
  auto bucket(std::uint32_t group, std::uint32_t k) const noexcept {
    return buckets_[std::size_t{group} * kBuckets + k];
  }
  std::size_t ends(std::uint32_t group, std::uint32_t unit) const noexcept {
    return std::size_t{group} * stride_ + unit;
  }
  const double* min() const noexcept { return min_; }
  const double* max() const noexcept { return max_; }

 private:
  friend class Calibration;
  using Bucket = Calibration::Bucket;
  static constexpr std::uint32_t kBuckets = Calibration::kBuckets;
  static constexpr std::uint8_t kScanGroup = Calibration::kScanGroup;
  const Bucket* buckets_;
  const double* min_;
  const double* max_;
  std::uint32_t stride_;
  std::uint32_t group_size_;
  const UnitCalibration* units_;
};

inline Calibration::Lookup Calibration::lookup() const noexcept {
  Lookup l;
  l.buckets_ = buckets_.data();
  l.min_ = min_.data();
  l.max_ = max_.data();
  l.stride_ = stride_;
  l.group_size_ = group_size_;
  l.units_ = units_.data();
  return l;
}
inline int Calibration::unit_of(std::uint32_t group, double pos) const noexcept {
  return lookup().unit_of(group, pos);
}
inline int Calibration::scan_units(std::uint32_t group, double pos) const noexcept {
  return lookup().scan_units(group, pos);
}

/// True if two of the intervals overlap or touch (closer than kIntervalEpsilon).
bool intervals_overlap(std::vector<std::pair<double, double>> intervals);

}  // namespace efu::caen
