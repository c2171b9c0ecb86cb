// NMX's events from its hits (docs/nmx.md "Events"), on the SDK's VMM3a pieces: the any-order
// time grouping per panel (efu/vmm3a/time_groups.h: reorder window, hits.late,
// hits.reorder_buffer_full) hands each closed time group to group(), which takes, per plane, all
// of the group's hits as that plane's one cluster (efu/vmm3a/clusters.h with no coordinate gap
// limit), optionally splits a multi-neutron group in two (the reference's GapMatcher with
// SplitMultiEvents), applies the span cuts and numbers the pixel from the uTPC position of each
// plane. All storage is allocated in the constructor; nothing after it allocates.
#pragma once

#include <cstdint>
#include <vector>

#include "config.h"
#include "efu/counters.h"
#include "efu/event_buffer.h"
#include "efu/vmm3a/clusters.h"
#include "efu/vmm3a/hit.h"
#include "efu/vmm3a/time_groups.h"

namespace efu::nmx {

using vmm3a::Hit;

struct EventSettings {
  EventParameters parameters;  // the file's (config.h)
  /// Hits of a panel closer in time than this join one time group: the reference chains a
  /// plane's hits by MaxClusteringTimeGap and then merges clusters by MaxMatchingTimeGap, so
  /// efu's group uses the larger of the two (docs/nmx.md "Time groups").
  std::uint64_t max_time_gap_ns = 500;
  std::uint64_t reorder_window_ns = 1'000'000;
  std::uint32_t buffer_hits = 8192;  // pending hits per panel
};

/// The GapMatcher's fixed split rules (GapMatcher.h): a group is split when a plane spans
/// kSplitSpan strips or more, and a plane's hits part where kSplitGap strips or more lie
/// between neighbours (coordinate difference > kSplitGap).
inline constexpr std::uint32_t kSplitSpan = 10;
inline constexpr std::uint32_t kSplitGap = 10;

/// One plane's cluster of an event candidate: hits[0..n) sorted by coordinate, and their sums
/// (meaningless when n == 0, an empty plane).
struct PlaneCluster {
  Hit* hits = nullptr;
  std::uint32_t n = 0;
  vmm3a::Cluster c{};

  /// Strips from the lowest to the highest, both included; 0 when empty (Cluster::coordSpan()).
  std::uint32_t span() const noexcept { return n == 0 ? 0 : c.span(); }
  /// end - start + 1 in ns (Cluster::timeSpan()).
  std::uint64_t time_span() const noexcept { return n == 0 ? 0 : c.time_end - c.time_start + 1; }
  std::uint64_t adc_sum() const noexcept { return n == 0 ? 0 : c.adc_sum; }
};

/// Makes `out` the cluster of hits[0..n) (n may be 0), sorting them by coordinate.
void make_cluster(Hit* hits, std::uint32_t n, PlaneCluster& out) noexcept;

/// The uTPC coordinate of a cluster whose hits are sorted by coordinate, as the reference's
/// Cluster::coordUtpc(false) of a cluster built hit by hit in that order. Of the hits with the
/// latest time, `lo` is the first and `hi` the last (in coordinate order); with one such hit it
/// is the position. Otherwise the one nearer its end of the cluster wins:
///   lo        if lo < (n - 1) - hi     (the latest hits reach the low edge)
///   hi        if lo > (n - 1) - hi     (they reach the high edge)
///   of the two, the larger ADC; equal ADCs: hi.
/// (distances counted in hits, not strips).
std::uint16_t utpc_coordinate(const Hit* hits, std::uint32_t n) noexcept;

/// The GapMatcher's splitCluster(): hits[0..n) sorted by coordinate into at most two parts,
/// starting a new part where the coordinate jumps by more than kSplitGap. A third part empties
/// both (the reference gives up on such a plane). Returns the parts' sizes: part 0 is
/// hits[0..first), part 1 is hits[first..first + second).
struct SplitParts {
  std::uint32_t first;
  std::uint32_t second;
};
SplitParts split_plane(const Hit* hits, std::uint32_t n) noexcept;

/// The GapMatcher's clustersMatch(a, b): a's ADC sum times the low and high coefficients
/// brackets b's: a * low <= b <= a * high, in double as the reference multiplies its float
/// coefficients with its double sums.
bool adc_sums_match(std::uint64_t a, std::uint64_t b, float low, float high) noexcept;

/// The GapMatcher's pairing of x parts (ADC sums a1, a2) with y parts (b1, b2): 0 for a1-b1
/// and a2-b2, 1 for a1-b2 and a2-b1, each when exactly that pairing's two matches hold and the
/// other two do not; -1 otherwise (the group is dropped).
int split_pairing(std::uint64_t a1, std::uint64_t a2, std::uint64_t b1, std::uint64_t b2, float low,
                  float high) noexcept;

class EventFormer {
 public:
  EventFormer(CounterRegistry& counters, const Config& config, const EventSettings& settings,
              EventSink& events);

  /// The time grouping's interface (time_groups.h), per packet and per readout.
  void begin_packet(std::uint8_t queue) noexcept { groups_.begin_packet(queue); }
  void add(std::uint32_t panel, const Hit& hit) noexcept { groups_.add(panel, hit); }
  void end_packet() noexcept { groups_.end_packet(); }
  void close(std::uint32_t panel) noexcept { groups_.close(panel); }
  void close_all() noexcept { groups_.close_all(); }
  bool pending(std::uint32_t panel) const noexcept { return groups_.pending(panel); }
  std::uint32_t units() const noexcept { return groups_.units(); }
  /// Hands the buffered events to the sink (before the pipeline's process/tick/flush returns).
  void flush_events() { out_.flush(); }

  /// One closed time group of a panel → its events (vmm3a::TimeGroups calls it).
  void group(std::uint32_t panel, Hit* hits, std::uint32_t count) noexcept;

 private:
  void split(PlaneCluster (&planes)[2]) noexcept;
  void candidate(const PlaneCluster& x, const PlaneCluster& y) noexcept;
  bool span_cuts(const PlaneCluster& cluster, unsigned plane) noexcept;

  const Config& config_;
  EventSettings settings_;
  EventBuffer out_;
  vmm3a::TimeGroups<EventFormer> groups_;
  std::vector<Hit> plane_hits_[2];

  Counter& groups_counter_;
  Counter& formed_;
  Counter& no_match_x_;
  Counter& no_match_y_;
  Counter* span_too_large_[2];  // by plane
  Counter* span_too_small_[2];
  Counter* time_span_too_large_[2];
  Counter& bad_pixel_;
  Counter& split_attempted_;
  Counter& split_done_;
  Counter& split_unmatched_;
};

}  // namespace efu::nmx
