// Clusters of one plane and their matching across the two planes (docs/plugins.md "VMM3a
// detectors"). A plugin's time-group handler (time_groups.h) gets a group's hits; with these it
// splits them by plane, builds each plane's clusters by coordinate, and matches the two planes'
// clusters into events. What it then cuts (spans, gaps) and how it numbers pixels is its own.
//
// Inline throughout: a group is a handful of hits, and the handler runs once per group.
#pragma once

#include <algorithm>
#include <cstdint>

#include "efu/vmm3a/hit.h"

namespace efu::vmm3a {

/// One plane's cluster: hits[first, first + hits) of the coordinate-sorted array it was built
/// from, and what events need of them.
struct Cluster {
  std::uint64_t time_start;    // earliest hit
  std::uint64_t time_end;      // latest hit
  std::uint64_t pulse_ns;      // the earliest hit's pulse (of equal times, the smaller)
  std::uint64_t weighted_sum;  // sum(adc * coordinate)
  std::uint32_t adc_sum;
  std::uint32_t first;
  std::uint32_t hits;
  std::uint16_t min_coordinate;
  std::uint16_t max_coordinate;
  std::uint16_t max_adc_coordinate;  // of the largest ADC; ties keep the lowest coordinate
  std::uint16_t max_adc;
  bool matched;

  /// Channels from the lowest to the highest coordinate, both included.
  std::uint32_t span() const noexcept { return max_coordinate - min_coordinate + 1U; }
  /// Channels inside the span without a hit (a coordinate hit twice counts once in the span but
  /// twice in hits, so this may be negative).
  std::int64_t missing() const noexcept {
    return static_cast<std::int64_t>(span()) - static_cast<std::int64_t>(hits);
  }
};

/// Copies a group's hits into two arrays by plane (each with room for `count`); returns the
/// number on each.
struct PlaneCounts {
  std::uint32_t n[2];
};
inline PlaneCounts split_planes(const Hit* hits, std::uint32_t count, Hit* plane0,
                                Hit* plane1) noexcept {
  PlaneCounts c{{0, 0}};
  Hit* out[2] = {plane0, plane1};
  for (std::uint32_t i = 0; i < count; ++i) {
    const unsigned p = hits[i].plane & 1U;
    out[p][c.n[p]++] = hits[i];
  }
  return c;
}

/// Hits equal in coordinate and time may stay in either order: a cluster takes sums, the largest
/// ADC (a tie between equal ADCs is the same coordinate) and the earliest time (a tie takes the
/// smaller pulse), none of which depends on their order.
inline bool lower_coordinate(const Hit& a, const Hit& b) noexcept {
  if (a.coordinate != b.coordinate) return a.coordinate < b.coordinate;
  return a.time_ns < b.time_ns;
}

/// Sorts one plane's hits by coordinate: insertion for the few of a typical group (adaptive),
/// std::sort (in place, no allocation) beyond.
inline void sort_by_coordinate(Hit* hits, std::uint32_t count) noexcept {
  constexpr std::uint32_t kInsertionSortLimit = 24;
  if (count > kInsertionSortLimit) {
    std::sort(hits, hits + count, lower_coordinate);
    return;
  }
  for (std::uint32_t i = 1; i < count; ++i) {
    const Hit h = hits[i];
    std::uint32_t j = i;
    while (j > 0 && lower_coordinate(h, hits[j - 1])) {
      hits[j] = hits[j - 1];
      --j;
    }
    hits[j] = h;
  }
}

/// Sorts one plane's hits by coordinate and cuts them into clusters: a hit joins the cluster
/// before it when at most `max_gap` channels are missing between them (coordinate <= previous
/// maximum + max_gap + 1). `out` has room for `count` clusters; returns how many were built.
/// max_gap = 0xFFFF puts every hit of the plane into one cluster.
inline std::uint32_t build_clusters(Hit* hits, std::uint32_t count, std::uint32_t max_gap,
                                    Cluster* out) noexcept {
  sort_by_coordinate(hits, count);
  std::uint32_t clusters = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    const Hit& h = hits[i];
    if (clusters == 0 || h.coordinate > out[clusters - 1].max_coordinate + max_gap + 1U) {
      out[clusters++] = Cluster{h.time_ns,    h.time_ns,    h.pulse_ns,   0,     0,    i, 0,
                                h.coordinate, h.coordinate, h.coordinate, h.adc, false};
    }
    Cluster& c = out[clusters - 1];
    if (h.time_ns < c.time_start || (h.time_ns == c.time_start && h.pulse_ns < c.pulse_ns)) {
      c.time_start = h.time_ns;
      c.pulse_ns = h.pulse_ns;
    }
    c.time_end = std::max(c.time_end, h.time_ns);
    c.weighted_sum += std::uint64_t{h.adc} * h.coordinate;
    c.adc_sum += h.adc;
    ++c.hits;
    c.max_coordinate = h.coordinate;  // sorted, so the latest is the largest
    if (h.adc > c.max_adc) {          // ties keep the lowest coordinate
      c.max_adc = h.adc;
      c.max_adc_coordinate = h.coordinate;
    }
  }
  return clusters;
}

/// The ADC-weighted centre of a cluster, rounded half up, in integers:
///   (2 * sum(adc * x) + sum(adc)) / (2 * sum(adc))
/// as the facility rounds its floating-point centroid (std::round of a positive value). A
/// cluster whose ADCs are all 0 has no centre of mass: its largest-ADC coordinate (its lowest).
inline std::uint16_t center_of_mass(const Cluster& c) noexcept {
  if (c.adc_sum == 0) return c.max_adc_coordinate;
  return static_cast<std::uint16_t>((2 * c.weighted_sum + c.adc_sum) /
                                    (2 * std::uint64_t{c.adc_sum}));
}

/// Matches each plane-0 cluster, in order, with the unmatched plane-1 cluster nearest in start
/// time, if that is at most max_dt_ns away (of equal distances, the first). `on_pair(a, b)` gets
/// each matched pair, `on_unmatched(plane, cluster)` every cluster left alone (plane-0 ones as
/// they fail, then the plane-1 ones in order). Marks matched plane-1 clusters `matched`.
template <typename OnPair, typename OnUnmatched>
void match_nearest(const Cluster* a, std::uint32_t a_count, Cluster* b, std::uint32_t b_count,
                   std::uint64_t max_dt_ns, OnPair&& on_pair, OnUnmatched&& on_unmatched) {
  for (std::uint32_t i = 0; i < a_count; ++i) {
    std::uint32_t best = b_count;
    std::uint64_t best_dt = max_dt_ns + 1;
    for (std::uint32_t k = 0; k < b_count; ++k) {
      if (b[k].matched) continue;
      const std::uint64_t dt = a[i].time_start > b[k].time_start
                                   ? a[i].time_start - b[k].time_start
                                   : b[k].time_start - a[i].time_start;
      if (dt < best_dt) {
        best_dt = dt;
        best = k;
      }
    }
    if (best == b_count) {
      on_unmatched(0U, a[i]);
      continue;
    }
    b[best].matched = true;
    on_pair(a[i], b[best]);
  }
  for (std::uint32_t k = 0; k < b_count; ++k) {
    if (!b[k].matched) on_unmatched(1U, b[k]);
  }
}

}  // namespace efu::vmm3a
