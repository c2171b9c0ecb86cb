// Clustering and event formation per cassette (docs/multiblade.md "Clustering").
//
// Hits of one cassette are gathered into a time group while each new hit is within
// max_time_gap_ns of the latest hit in the group; the first hit beyond the gap closes the group.
// Groups therefore span packet boundaries. A closed group is split per plane into clusters of
// channels no more than max_coordinate_gap apart, and wire clusters are matched to strip
// clusters whose times differ by at most max_match_time_ns. All storage is allocated in the
// constructor; add() and flush() never allocate.
#pragma once

#include <cstdint>
#include <vector>

#include "efu/counters.h"
#include "efu/plugin.h"
#include "geometry.h"
#include "hit.h"

namespace efu::multiblade {

enum class PositionAlgorithm : std::uint8_t { kCenterOfMass, kMaxAdc };

struct ClusterSettings {
  std::uint64_t max_time_gap_ns = 500;
  std::uint16_t max_coordinate_gap = 1;  // 1: only directly adjacent channels join a cluster
  std::uint64_t max_match_time_ns = 500;
  std::uint16_t max_wire_span = 8;
  std::uint16_t max_strip_span = 16;
  PositionAlgorithm algorithm = PositionAlgorithm::kCenterOfMass;
  std::uint32_t group_capacity = 256;  // hits per cassette time group; more are counted, dropped
};

class Clusterer {
 public:
  Clusterer(CounterRegistry& counters, const Geometry& geometry, const ClusterSettings& settings,
            EventSink& events);

  void add(std::uint32_t cassette, const Hit& hit) noexcept;
  /// Closes the open group of one cassette (timeout) or of all of them (stop).
  void close(std::uint32_t cassette) noexcept;
  void close_all() noexcept;
  bool pending(std::uint32_t cassette) const noexcept { return groups_[cassette].size != 0; }

 private:
  struct Group {
    std::uint64_t min_time;
    std::uint64_t max_time;
    std::uint32_t size;
  };
  struct Cluster {
    std::uint64_t time_ns;   // earliest hit
    std::uint64_t pulse_ns;  // that hit's pulse
    std::uint64_t weighted_sum;
    std::uint32_t adc_sum;
    std::uint16_t min_coordinate;
    std::uint16_t max_coordinate;
    std::uint16_t max_adc_coordinate;
    std::uint16_t max_adc;
    bool matched;
  };

  void form_events(std::uint32_t cassette, Group& group) noexcept;
  std::uint32_t build_clusters(Hit* hits, std::uint32_t count, Cluster* out) const noexcept;
  std::uint16_t position(const Cluster& c) const noexcept;

  const Geometry& geometry_;
  ClusterSettings settings_;
  EventSink& events_;
  std::vector<Group> groups_;
  std::vector<Hit> hits_;  // groups_.size() * group_capacity, one slice per cassette
  std::vector<Hit> plane_hits_[2];
  std::vector<Cluster> clusters_[2];

  Counter& formed_;
  Counter& no_match_wire_;
  Counter& no_match_strip_;
  Counter& wire_span_too_large_;
  Counter& strip_span_too_large_;
  Counter& buffer_full_;
  Counter& out_of_order_;
};

}  // namespace efu::multiblade
