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

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
  /// `group` must be < groups().
  int unit_of(std::uint32_t group, double pos) const noexcept {
    const UnitCalibration* u = &units_[group * group_size_];
    for (std::uint32_t i = 0; i < group_size_; ++i) {
      if (pos >= u[i].min && pos <= u[i].max) return static_cast<int>(i);
    }
    return -1;
  }

  const UnitCalibration& unit(std::uint32_t group, std::uint32_t unit) const noexcept {
    return units_[group * group_size_ + unit];
  }

  enum class Clamp : std::uint8_t { kNone, kLow, kHigh };

  /// The polynomial correction of a position along a unit, clamped to [0, 1].
  double correct(std::uint32_t group, std::uint32_t unit, double pos, Clamp& clamp) const noexcept {
    const UnitCalibration& u = units_[group * group_size_ + unit];
    const double delta = u.a + pos * (u.b + pos * (u.c + pos * u.d));
    double corrected = pos - delta;
    clamp = Clamp::kNone;
    if (corrected < 0.0) {
      clamp = Clamp::kLow;
      corrected = 0.0;
    }
    if (corrected > 1.0) {
      clamp = Clamp::kHigh;
      corrected = 1.0;
    }
    return corrected;
  }

 private:
  static Calibration parse(const JsonDocument& doc, std::string_view instrument);

  std::uint32_t groups_ = 0;
  std::uint32_t group_size_ = 0;
  std::vector<UnitCalibration> units_;  // groups_ × group_size_
};

/// True if two of the intervals overlap or touch (closer than kIntervalEpsilon).
bool intervals_overlap(std::vector<std::pair<double, double>> intervals);

}  // namespace efu::caen
