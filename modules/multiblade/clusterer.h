// Clustering and event formation per cassette, independent of the order in which readouts arrive
// (docs/multiblade.md "Readouts in any order", "Clustering and events").
//
// VMM3a readout is not time ordered: readouts of different VMMs, hybrids and FENs interleave
// inside a packet and across packets. Each cassette therefore keeps a time-sorted buffer of pending
// hits. After each packet (end_packet()) the hits it brought are sorted and merged in, and the
// time groups (hits chained by at most max_time_gap_ns) that can no longer grow are closed: a
// group is final once its latest hit plus the gap is earlier than the horizon, the latest hit time
// seen on the cassette's output queue minus the reorder window. The horizon is per queue because
// a queue is one stream from one ring (its own sequence numbers); different queues' packets
// interleave with no time relation, and every cassette is on one ring, so on one queue. A hit that
// arrives further behind than the window is counted as hits.late and still used: it forms a group
// with whatever is pending near its time (often the other hits of its own packet). All storage is
// allocated in the constructor; add(), end_packet() and close() never allocate.
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
  static constexpr std::uint32_t kQueues = 12;  // ESS output queues

  Clusterer(CounterRegistry& counters, const Geometry& geometry, const ClusterSettings& settings,
            EventSink& events);

  /// Starts a packet of output queue `queue` (< 12, checked by the header parser).
  void begin_packet(std::uint8_t queue) noexcept { queue_ = queue; }
  /// Adds a hit of the packet in hand. The packet's hits are only grouped at end_packet(), so
  /// their order inside the packet cannot matter. Inline: it runs once per readout.
  void add(std::uint32_t cassette, const Hit& hit) noexcept {
    // Later than the window: groups it might have joined may be closed already. Still used.
    if (hit.time_ns + settings_.reorder_window_ns < latest_ns_[queue_]) late_.add();
    if (hit.time_ns > packet_latest_ns_) packet_latest_ns_ = hit.time_ns;
    Buffer& b = buffers_[cassette];
    if (b.end == settings_.buffer_hits) make_room(cassette);
    hits_of(cassette)[b.end++] = hit;
    queue_of_[cassette] = queue_;
    if (!b.dirty) {
      b.dirty = true;
      dirty_[dirty_count_++] = cassette;
    }
  }
  /// Sorts in this packet's hits and closes every group that the reorder window lets close.
  void end_packet() noexcept;
  /// Closes every pending group of one cassette (timeout) or of all of them (stop).
  void close(std::uint32_t cassette) noexcept;
  void close_all() noexcept;
  bool pending(std::uint32_t cassette) const noexcept {
    return buffers_[cassette].end != buffers_[cassette].head;
  }

 private:
  struct Buffer {
    std::uint32_t head = 0;        // first pending hit
    std::uint32_t sorted_end = 0;  // [head, sorted_end) is sorted by time
    std::uint32_t end = 0;         // [sorted_end, end): this packet's hits, not yet sorted
    bool dirty = false;
  };
  struct Cluster {
    std::uint64_t time_ns;   // earliest hit
    std::uint64_t pulse_ns;  // that hit's pulse
    std::uint64_t weighted_sum;
    std::uint32_t adc_sum;
    std::uint32_t hits;
    std::uint16_t min_coordinate;
    std::uint16_t max_coordinate;
    std::uint16_t max_adc_coordinate;
    std::uint16_t max_adc;
    bool matched;
  };

  // Cassette slices are buffer_hits + 8 hits apart: with a power-of-two buffer the slices would
  // start on the same L1 cache sets, and a packet's hits, spread over all cassettes, would evict
  // each other. 8 hits (192 B, 3 cache lines) spread the slices' starts over the sets.
  static constexpr std::uint32_t kSlicePad = 8;
  Hit* hits_of(std::uint32_t cassette) noexcept {
    return &hits_[std::size_t{cassette} * (settings_.buffer_hits + kSlicePad)];
  }
  void make_room(std::uint32_t cassette) noexcept;
  void sort_tail(Hit* tail, std::uint32_t n) noexcept;
  void radix_sort(Hit* tail, std::uint32_t n, std::uint64_t lo) noexcept;
  void sort_in(std::uint32_t cassette) noexcept;
  /// Forms the events of every group whose latest hit + gap is before `horizon`.
  void close_before(std::uint32_t cassette, std::uint64_t horizon) noexcept;
  void form_events(std::uint32_t cassette, Hit* hits, std::uint32_t count) noexcept;
  std::uint32_t build_clusters(Hit* hits, std::uint32_t count, std::uint16_t max_gap,
                               Cluster* out) const noexcept;
  std::uint16_t position(const Cluster& c) const noexcept;

  const Geometry& geometry_;
  ClusterSettings settings_;
  EventSink& events_;
  std::vector<Buffer> buffers_;
  std::vector<Hit> hits_;               // one slice of buffer_hits per cassette (hits_of())
  std::vector<Hit> scratch_;            // merge and sort space, buffer_hits
  std::vector<std::uint64_t> radix_a_;  // radix sort keys, buffer_hits each
  std::vector<std::uint64_t> radix_b_;
  std::vector<std::uint32_t> dirty_;
  std::uint32_t dirty_count_ = 0;
  std::vector<Hit> plane_hits_[2];
  std::vector<Cluster> clusters_[2];
  std::vector<std::uint8_t> queue_of_;     // per cassette: the queue its latest hit came on
  std::uint64_t latest_ns_[kQueues] = {};  // per queue: latest hit time, up to the last packet
  std::uint64_t packet_latest_ns_ = 0;     // latest hit time of the packet in hand
  std::uint8_t queue_ = 0;

  Counter& formed_;
  Counter& no_match_wire_;
  Counter& no_match_strip_;
  Counter& wire_span_too_large_;
  Counter& strip_span_too_large_;
  Counter& wire_gap_;
  Counter& strip_gap_;
  Counter& bad_pixel_;
  Counter& late_;
  Counter& buffer_full_;
};

}  // namespace efu::multiblade
