// Time groups of a detector's hits, whatever order the readouts arrive in (docs/plugins.md "VMM3a
// detectors"; docs/multiblade.md "Readouts in any order").
//
// VMM3a readout is not time ordered: readouts of different VMMs, hybrids and FENs interleave
// inside a packet and across packets. Each unit (a plugin's cassette, panel or vessel: the hits
// that cluster together) keeps a time-sorted buffer of pending hits. After each packet
// (end_packet()) the hits it brought are sorted and merged in (hit_sort.h), and the time groups
// (hits chained by at most max_time_gap_ns) that can no longer grow are handed to the plugin's
// handler, sorted by time:
//
//   void Handler::group(std::uint32_t unit, vmm3a::Hit* hits, std::uint32_t count) noexcept;
//
// (the handler may reorder hits[0..count); it forms the events). A group is final once its latest
// hit plus the gap is earlier than the horizon: the latest hit time seen on the unit's output
// queue minus the reorder window. The horizon is per queue because a queue is one stream from one
// ring (its own sequence numbers); different queues' packets interleave with no time relation,
// and a unit is on one ring, so on one queue. A hit that arrives further behind than the window
// is counted as hits.late and still used: it forms a group with whatever is pending near its time
// (often the other hits of its own packet). A unit whose buffer fills up has everything pending
// closed at once (possibly splitting a group), counted as hits.reorder_buffer_full, rather than
// lose a hit. All storage is allocated in the constructor; nothing after it allocates.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "efu/counters.h"
#include "efu/vmm3a/hit.h"
#include "efu/vmm3a/hit_sort.h"

namespace efu::vmm3a {

struct TimeGroupSettings {
  std::uint64_t max_time_gap_ns = 500;
  std::uint64_t reorder_window_ns = 1'000'000;
  std::uint32_t buffer_hits = 8192;  // pending hits per unit
};

template <typename Handler>
class TimeGroups {
 public:
  static constexpr std::uint32_t kQueues = 12;  // ESS output queues

  TimeGroups(CounterRegistry& counters, std::uint32_t units, const TimeGroupSettings& settings,
             Handler& handler)
      : settings_(settings),
        handler_(handler),
        buffers_(units),
        hits_(std::size_t{units} * (settings.buffer_hits + kSlicePad)),
        sorter_(settings.buffer_hits),
        dirty_(units),
        queue_of_(units, 0),
        late_(counters.counter("hits.late")),
        buffer_full_(counters.counter("hits.reorder_buffer_full")) {}

  std::uint32_t units() const noexcept { return static_cast<std::uint32_t>(buffers_.size()); }

  /// Starts a packet of output queue `queue` (< 12, checked by the header parser).
  void begin_packet(std::uint8_t queue) noexcept { queue_ = queue; }

  /// Adds a hit of the packet in hand. The packet's hits are only grouped at end_packet(), so
  /// their order inside the packet cannot matter. Inline: it runs once per readout.
  void add(std::uint32_t unit, const Hit& hit) noexcept {
    // Later than the window: groups it might have joined may be closed already. Still used.
    if (hit.time_ns + settings_.reorder_window_ns < latest_ns_[queue_]) late_.add();
    if (hit.time_ns > packet_latest_ns_) packet_latest_ns_ = hit.time_ns;
    Buffer& b = buffers_[unit];
    if (b.end == settings_.buffer_hits) make_room(unit);
    hits_of(unit)[b.end++] = hit;
    queue_of_[unit] = queue_;
    if (!b.dirty) {
      b.dirty = true;
      dirty_[dirty_count_++] = unit;
    }
  }

  /// Sorts in this packet's hits and closes every group that the reorder window lets close.
  void end_packet() noexcept {
    std::uint64_t& latest = latest_ns_[queue_];
    if (packet_latest_ns_ > latest) latest = packet_latest_ns_;
    packet_latest_ns_ = 0;
    const std::uint64_t horizon =
        latest > settings_.reorder_window_ns ? latest - settings_.reorder_window_ns : 0;
    for (std::uint32_t i = 0; i < dirty_count_; ++i) {
      const std::uint32_t u = dirty_[i];
      buffers_[u].dirty = false;
      sort_in(u);
    }
    dirty_count_ = 0;
    // Every unit of this queue, not only those in this packet: the horizon moved for all.
    for (std::uint32_t u = 0; u < buffers_.size(); ++u) {
      const Buffer& b = buffers_[u];
      if (queue_of_[u] == queue_ && b.head != b.sorted_end &&
          hits_of(u)[b.head].time_ns + settings_.max_time_gap_ns < horizon) {
        close_before(u, horizon);
      }
    }
  }

  /// Closes every pending group of one unit (a timeout) or of all of them (stop).
  void close(std::uint32_t unit) noexcept {
    sort_in(unit);
    close_before(unit, kNever);
  }
  void close_all() noexcept {
    for (std::uint32_t u = 0; u < buffers_.size(); ++u) close(u);
  }
  bool pending(std::uint32_t unit) const noexcept {
    return buffers_[unit].end != buffers_[unit].head;
  }

 private:
  static constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();
  static constexpr std::uint32_t kCompactAfter = 256;  // closed hits at the front of a buffer
  // Unit slices are buffer_hits + 8 hits apart: with a power-of-two buffer the slices would start
  // on the same L1 cache sets, and a packet's hits, spread over all units, would evict each
  // other. 8 hits (192 B, 3 cache lines) spread the slices' starts over the sets.
  static constexpr std::uint32_t kSlicePad = 8;

  struct Buffer {
    std::uint32_t head = 0;        // first pending hit
    std::uint32_t sorted_end = 0;  // [head, sorted_end) is sorted by time
    std::uint32_t end = 0;         // [sorted_end, end): this packet's hits, not yet sorted
    bool dirty = false;
  };

  Hit* hits_of(std::uint32_t unit) noexcept {
    return &hits_[std::size_t{unit} * (settings_.buffer_hits + kSlicePad)];
  }
  const Hit* hits_of(std::uint32_t unit) const noexcept {
    return &hits_[std::size_t{unit} * (settings_.buffer_hits + kSlicePad)];
  }

  void slide_to_front(std::uint32_t unit) noexcept {
    Buffer& b = buffers_[unit];
    Hit* hits = hits_of(unit);
    std::copy(hits + b.head, hits + b.end, hits);
    b.sorted_end -= b.head;
    b.end -= b.head;
    b.head = 0;
  }

  void make_room(std::uint32_t unit) noexcept {
    if (buffers_[unit].head != 0) {
      slide_to_front(unit);
      return;
    }
    // The window holds more hits than the buffer: close everything pending now, counted.
    buffer_full_.add(buffers_[unit].end);
    sort_in(unit);
    close_before(unit, kNever);
  }

  void sort_in(std::uint32_t unit) noexcept {
    Buffer& b = buffers_[unit];
    if (b.end == b.sorted_end) return;
    Hit* hits = hits_of(unit);
    sorter_.sort(hits + b.sorted_end, b.end - b.sorted_end);
    sorter_.merge(hits + b.head, b.sorted_end - b.head, b.end - b.head);
    b.sorted_end = b.end;
  }

  /// Hands over every group whose latest hit + gap is before `horizon`.
  void close_before(std::uint32_t unit, std::uint64_t horizon) noexcept {
    Buffer& b = buffers_[unit];
    Hit* hits = hits_of(unit);
    while (b.head != b.sorted_end) {
      std::uint32_t j = b.head + 1;
      std::uint64_t group_end = hits[b.head].time_ns;
      while (j != b.sorted_end && hits[j].time_ns <= group_end + settings_.max_time_gap_ns) {
        group_end = hits[j].time_ns;
        ++j;
      }
      // A hit still to come within the window is not earlier than the horizon, so it can neither
      // join this group nor bridge it to the next one.
      if (horizon != kNever && group_end + settings_.max_time_gap_ns >= horizon) break;
      handler_.group(unit, hits + b.head, j - b.head);
      b.head = j;
    }
    if (b.head == b.end) {
      b.head = b.sorted_end = b.end = 0;
    } else if (b.head >= kCompactAfter && b.head >= b.end - b.head) {
      // Slide the few pending hits back to the front, so each unit keeps writing into the same
      // few cache lines instead of walking its whole buffer (cheap: fewer hits than were closed).
      slide_to_front(unit);
    }
  }

  TimeGroupSettings settings_;
  Handler& handler_;
  std::vector<Buffer> buffers_;
  std::vector<Hit> hits_;  // one slice of buffer_hits per unit (hits_of())
  HitSorter sorter_;
  std::vector<std::uint32_t> dirty_;
  std::uint32_t dirty_count_ = 0;
  std::vector<std::uint8_t> queue_of_;     // per unit: the queue its latest hit came on
  std::uint64_t latest_ns_[kQueues] = {};  // per queue: latest hit time, up to the last packet
  std::uint64_t packet_latest_ns_ = 0;     // latest hit time of the packet in hand
  std::uint8_t queue_ = 0;
  Counter& late_;
  Counter& buffer_full_;
};

}  // namespace efu::vmm3a
