// Multi-Blade's events from its hits (docs/multiblade.md "Readouts in any order", "Clustering and
// events"), on the SDK's VMM3a pieces: the any-order time grouping per cassette
// (efu/vmm3a/time_groups.h: reorder window, hits.late, hits.reorder_buffer_full) hands each
// closed time group to group(), which splits it by plane, builds the wire and strip clusters by
// coordinate with the file's MaxGap (efu/vmm3a/clusters.h), matches each wire cluster with the
// strip cluster nearest in time, and applies Multi-Blade's cuts: the gap rule, the span limits
// and the pixel. All storage is allocated in the constructor; nothing after it allocates.
#pragma once

#include <cstdint>
#include <vector>

#include "efu/counters.h"
#include "efu/plugin.h"
#include "efu/vmm3a/clusters.h"
#include "efu/vmm3a/hit.h"
#include "efu/vmm3a/time_groups.h"
#include "geometry.h"

namespace efu::multiblade {

using vmm3a::Hit;

enum class PositionAlgorithm : std::uint8_t { kCenterOfMass, kMaxAdc };

struct ClusterSettings {
  std::uint64_t max_time_gap_ns = 500;
  std::uint64_t max_match_time_ns = 500;
  /// Missing channels allowed inside a cluster, per plane (the file's MaxGapWire, MaxGapStrip):
  /// neighbours up to max_gap + 1 channels apart join one cluster, and a cluster with more
  /// missing channels in all is rejected, as the facility's hasGap() rule.
  std::uint16_t max_gap_wire = 0;
  std::uint16_t max_gap_strip = 0;
  std::uint16_t max_wire_span = kWiresPerCassette;
  std::uint16_t max_strip_span = kStripsPerCassette;
  PositionAlgorithm algorithm = PositionAlgorithm::kCenterOfMass;
  std::uint64_t reorder_window_ns = 1'000'000;
  std::uint32_t buffer_hits = 8192;  // pending hits per cassette
};

class Clusterer {
 public:
  Clusterer(CounterRegistry& counters, const Geometry& geometry, const ClusterSettings& settings,
            EventSink& events);

  /// The time grouping's interface (time_groups.h), per packet and per readout.
  void begin_packet(std::uint8_t queue) noexcept { groups_.begin_packet(queue); }
  void add(std::uint32_t cassette, const Hit& hit) noexcept { groups_.add(cassette, hit); }
  void end_packet() noexcept { groups_.end_packet(); }
  void close(std::uint32_t cassette) noexcept { groups_.close(cassette); }
  void close_all() noexcept { groups_.close_all(); }
  bool pending(std::uint32_t cassette) const noexcept { return groups_.pending(cassette); }
  std::uint32_t units() const noexcept { return groups_.units(); }

  /// One closed time group of a cassette → its events (vmm3a::TimeGroups calls it).
  void group(std::uint32_t cassette, Hit* hits, std::uint32_t count) noexcept;

 private:
  void pair(const vmm3a::Cluster& wire, const vmm3a::Cluster& strip) noexcept;
  /// group() of one wire hit and one strip hit, without building clusters (clusterer.cpp).
  void pair_single(const Hit& wire, const Hit& strip) noexcept;
  std::uint16_t position(const vmm3a::Cluster& c) const noexcept;

  const Geometry& geometry_;
  ClusterSettings settings_;
  EventSink& events_;
  vmm3a::TimeGroups<Clusterer> groups_;
  std::vector<Hit> plane_hits_[2];
  std::vector<vmm3a::Cluster> clusters_[2];

  Counter& formed_;
  Counter& no_match_wire_;
  Counter& no_match_strip_;
  Counter& wire_span_too_large_;
  Counter& strip_span_too_large_;
  Counter& wire_gap_;
  Counter& strip_gap_;
  Counter& bad_pixel_;
};

}  // namespace efu::multiblade
