#include "calibration.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "efu/json_config.h"

namespace efu::caen {
namespace {

constexpr std::uint32_t kMaxGroups = 1'000'000;
constexpr std::uint32_t kMaxGroupSize = 64;

std::pair<double, double> read_interval(const JsonNode& node) {
  const std::vector<JsonNode> ends = node.elements(2, 2);
  return {ends[0].as_double(0.0, 1.0), ends[1].as_double(0.0, 1.0)};
}

}  // namespace

bool intervals_overlap(std::vector<std::pair<double, double>> intervals) {
  for (auto& [lo, hi] : intervals) {
    if (hi < lo) std::swap(lo, hi);
  }
  std::sort(intervals.begin(), intervals.end());
  for (std::size_t i = 1; i < intervals.size(); ++i) {
    if (intervals[i - 1].second - intervals[i].first > -kIntervalEpsilon) return true;
  }
  return false;
}

Calibration Calibration::parse(const JsonDocument& doc, std::string_view instrument) {
  const JsonNode cal = doc.root().at("Calibration");
  const JsonNode name = cal.at("instrument");
  if (name.as_string() != instrument) {
    name.fail("'" + name.as_string() + "' is not the configured instrument; expected '" +
              std::string(instrument) + "'");
  }
  Calibration c;
  c.groups_ = static_cast<std::uint32_t>(cal.get_int("groups", 1, kMaxGroups));
  c.group_size_ = static_cast<std::uint32_t>(cal.get_int("groupsize", 1, kMaxGroupSize));
  const JsonNode parameters = cal.at("Parameters");
  const std::vector<JsonNode> groups = parameters.elements();
  if (groups.size() != c.groups_) {
    parameters.fail(std::to_string(groups.size()) + " entries; expected " +
                    std::to_string(c.groups_) + " (groups)");
  }
  c.units_.reserve(std::size_t{c.groups_} * c.group_size_);
  for (std::uint32_t g = 0; g < c.groups_; ++g) {
    const JsonNode& group = groups[g];
    group.at("groupindex").as_int(g, g);  // entries are in group order, numbered from 0
    const JsonNode intervals_node = group.at("intervals");
    const std::vector<JsonNode> intervals = intervals_node.elements(c.group_size_, c.group_size_);
    const std::vector<JsonNode> polynomials =
        group.at("polynomials").elements(c.group_size_, c.group_size_);
    std::vector<std::pair<double, double>> pairs;
    for (std::uint32_t u = 0; u < c.group_size_; ++u) {
      const auto [lo, hi] = read_interval(intervals[u]);
      pairs.emplace_back(lo, hi);
      const std::vector<JsonNode> k = polynomials[u].elements(4, 4);
      constexpr double kHuge = 1e6;  // finite; anything a real fit gives
      c.units_.push_back(
          UnitCalibration{lo, hi, std::min(lo, hi), std::max(lo, hi), k[0].as_double(-kHuge, kHuge),
                          k[1].as_double(-kHuge, kHuge), k[2].as_double(-kHuge, kHuge),
                          k[3].as_double(-kHuge, kHuge)});
    }
    if (intervals_overlap(pairs)) {
      intervals_node.fail("intervals overlap; expected disjoint intervals at least " +
                          std::to_string(kIntervalEpsilon) + " apart");
    }
  }
  c.stride_ = (c.group_size_ + 2) / 2 * 2;  // at least one padding slot (kMaxGroupSize < 0xFF)
  c.min_.assign(std::size_t{c.groups_} * c.stride_, 1.0);  // padding: the empty interval [1, 0]
  c.max_.assign(std::size_t{c.groups_} * c.stride_, 0.0);
  for (std::uint32_t g = 0; g < c.groups_; ++g) {
    for (std::uint32_t u = 0; u < c.group_size_; ++u) {
      c.min_[std::size_t{g} * c.stride_ + u] = c.units_[std::size_t{g} * c.group_size_ + u].min;
      c.max_[std::size_t{g} * c.stride_ + u] = c.units_[std::size_t{g} * c.group_size_ + u].max;
    }
  }
  c.build_buckets();
  return c;
}

void Calibration::build_buckets() {
  const auto none = static_cast<std::uint8_t>(group_size_);  // the first padding slot
  buckets_.assign(std::size_t{groups_} * kBuckets, Bucket{none, none});
  for (std::uint32_t g = 0; g < groups_; ++g) {
    for (std::uint32_t k = 0; k < kBuckets; ++k) {
      // The bucket's positions, both ends included (a superset of [lo, hi) is still exact: its
      // units are tested, not assumed).
      const double lo = static_cast<double>(k) / kBuckets;
      const double hi = static_cast<double>(k + 1) / kBuckets;
      Bucket& b = buckets_[std::size_t{g} * kBuckets + k];
      std::uint32_t listed = 0;
      for (std::uint32_t u = 0; u < group_size_; ++u) {
        const UnitCalibration& unit = units_[std::size_t{g} * group_size_ + u];
        if (unit.min > hi || unit.max < lo) continue;
        ++listed;
        if (listed == 1) b.first = static_cast<std::uint8_t>(u);
        if (listed == 2) b.second = static_cast<std::uint8_t>(u);
      }
      if (listed > 2) b = Bucket{kScanGroup, none};
    }
  }
}

Calibration Calibration::from_file(const std::string& path, std::string_view instrument) {
  return parse(JsonDocument::from_file(path, "caen calibration"), instrument);
}

Calibration Calibration::from_text(std::string_view text, const std::string& origin,
                                   std::string_view instrument) {
  return parse(JsonDocument::from_text(text, "caen calibration", origin), instrument);
}

}  // namespace efu::caen
