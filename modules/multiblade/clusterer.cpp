#include "clusterer.h"

#include <algorithm>
#include <limits>

namespace efu::multiblade {
namespace {

constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint32_t kCompactAfter = 256;  // closed hits at the front of a cassette's buffer

// A packet brings a few hits per cassette, mostly in order: insertion sort is cheapest then;
// std::sort (in place, no allocation) bounds the cost of a large shuffled tail.
constexpr std::uint32_t kInsertionSortLimit = 24;

template <typename Less>
void sort_hits(Hit* hits, std::uint32_t count, Less less) noexcept {
  if (count > kInsertionSortLimit) {
    std::sort(hits, hits + count, less);
    return;
  }
  for (std::uint32_t i = 1; i < count; ++i) {
    const Hit h = hits[i];
    std::uint32_t j = i;
    while (j > 0 && less(h, hits[j - 1])) {
      hits[j] = hits[j - 1];
      --j;
    }
    hits[j] = h;
  }
}

// The pending buffer is ordered by time only: hits of equal time may sit in either order, which
// changes no group (groups are decided by times alone). Inside a group, clusters are built from
// hits sorted by coordinate, and nothing a cluster computes depends on the order of arrival.
bool earlier(const Hit& a, const Hit& b) noexcept { return a.time_ns < b.time_ns; }

// Hits equal in coordinate and time may stay in either order: a cluster takes sums, the largest
// ADC (a tie between equal ADCs is the same coordinate) and the earliest time (a tie takes the
// smaller pulse), none of which depends on their order.
bool lower_coordinate(const Hit& a, const Hit& b) noexcept {
  if (a.coordinate != b.coordinate) return a.coordinate < b.coordinate;
  return a.time_ns < b.time_ns;
}

}  // namespace

Clusterer::Clusterer(CounterRegistry& counters, const Geometry& geometry,
                     const ClusterSettings& settings, EventSink& events)
    : geometry_(geometry),
      settings_(settings),
      events_(events),
      buffers_(geometry.cassettes()),
      hits_(std::size_t{geometry.cassettes()} * (settings.buffer_hits + kSlicePad)),
      scratch_(settings.buffer_hits),
      radix_a_(settings.buffer_hits),
      radix_b_(settings.buffer_hits),
      dirty_(geometry.cassettes()),
      queue_of_(geometry.cassettes(), 0),
      formed_(counters.counter("events.formed")),
      no_match_wire_(counters.counter("events.rejected.no_match_wire")),
      no_match_strip_(counters.counter("events.rejected.no_match_strip")),
      wire_span_too_large_(counters.counter("events.rejected.wire_span_too_large")),
      strip_span_too_large_(counters.counter("events.rejected.strip_span_too_large")),
      wire_gap_(counters.counter("events.rejected.wire_gap")),
      strip_gap_(counters.counter("events.rejected.strip_gap")),
      bad_pixel_(counters.counter("events.rejected.pixel")),
      late_(counters.counter("hits.late")),
      buffer_full_(counters.counter("hits.reorder_buffer_full")) {
  for (unsigned p = 0; p < 2; ++p) {
    plane_hits_[p].resize(settings.buffer_hits);
    clusters_[p].resize(settings.buffer_hits);
  }
}

void Clusterer::make_room(std::uint32_t cassette) noexcept {
  Buffer& b = buffers_[cassette];
  if (b.head != 0) {  // slide the pending hits to the front
    Hit* hits = hits_of(cassette);
    std::copy(hits + b.head, hits + b.end, hits);
    b.sorted_end -= b.head;
    b.end -= b.head;
    b.head = 0;
  } else {
    // The window holds more hits than the buffer: close everything pending now (possibly
    // splitting a group), counted, rather than lose a hit.
    buffer_full_.add(b.end);
    sort_in(cassette);
    close_before(cassette, kNever);
  }
}

// A packet brings a few hits per cassette. Sorting them by insertion costs a mispredicted branch
// per hit when they arrive shuffled; ranking them instead (each hit's place = how many are
// earlier) is branch-free, vectorises over 32-bit relative times, and costs the same for any
// order. Larger tails, or times too far apart for 32 bits, take std::sort.
constexpr std::uint32_t kRankSortLimit = 32;

void Clusterer::sort_tail(Hit* tail, std::uint32_t n) noexcept {
  if (n < 2) return;
  std::uint32_t descents = 0;
  for (std::uint32_t i = 1; i < n; ++i) {
    descents += tail[i].time_ns < tail[i - 1].time_ns ? 1U : 0U;
  }
  if (descents == 0) return;
  if (descents * 4 <= n) {
    // Nearly in order: insertion is adaptive, it mispredicts only at the few descents.
    for (std::uint32_t i = 1; i < n; ++i) {
      const Hit h = tail[i];
      std::uint32_t j = i;
      while (j > 0 && h.time_ns < tail[j - 1].time_ns) {
        tail[j] = tail[j - 1];
        --j;
      }
      tail[j] = h;
    }
    return;
  }
  std::uint64_t lo = tail[0].time_ns, hi = lo;
  for (std::uint32_t i = 1; i < n; ++i) {
    lo = std::min(lo, tail[i].time_ns);
    hi = std::max(hi, tail[i].time_ns);
  }
  if (hi - lo > 0xFFFF'FFFFU) {  // not from one packet's pulse window: never on a sane stream
    std::sort(tail, tail + n, earlier);
    return;
  }
  if (n > kRankSortLimit) {
    radix_sort(tail, n, lo);
    return;
  }
  std::int32_t keys[kRankSortLimit];
  for (std::uint32_t i = 0; i < n; ++i) keys[i] = static_cast<std::int32_t>(tail[i].time_ns - lo);
  Hit* out = scratch_.data();
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::int32_t k = keys[i];
    std::int32_t rank = 0;
    for (std::uint32_t j = 0; j < n; ++j) rank += keys[j] < k ? 1 : 0;
    for (std::uint32_t j = 0; j < i; ++j) rank += keys[j] == k ? 1 : 0;  // ties keep arrival order
    out[rank] = tail[i];
  }
  std::copy(out, out + n, tail);
}

// Larger shuffled tails (a queue that carries only a few cassettes gives each of them a hundred
// hits or more per packet): LSD radix sort of (32-bit relative time, index) by bytes, skipping
// bytes that all keys share; branch-free like the rank sort, linear in n.
void Clusterer::radix_sort(Hit* tail, std::uint32_t n, std::uint64_t lo) noexcept {
  std::uint64_t* a = radix_a_.data();
  std::uint64_t* b = radix_b_.data();
  std::uint32_t counts[4][256] = {};
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint64_t key = (tail[i].time_ns - lo) << 32 | i;
    a[i] = key;
    for (unsigned d = 0; d < 4; ++d) ++counts[d][(key >> (32 + 8 * d)) & 0xFF];
  }
  for (unsigned d = 0; d < 4; ++d) {
    const unsigned shift = 32 + 8 * d;
    if (counts[d][(a[0] >> shift) & 0xFF] == n) continue;  // every key has this byte
    std::uint32_t offset = 0;
    for (std::uint32_t& c : counts[d]) {
      const std::uint32_t here = c;
      c = offset;
      offset += here;
    }
    for (std::uint32_t i = 0; i < n; ++i) b[counts[d][(a[i] >> shift) & 0xFF]++] = a[i];
    std::swap(a, b);
  }
  Hit* out = scratch_.data();
  for (std::uint32_t i = 0; i < n; ++i) out[i] = tail[a[i] & 0xFFFF'FFFFU];
  std::copy(out, out + n, tail);
}

void Clusterer::sort_in(std::uint32_t cassette) noexcept {
  Buffer& b = buffers_[cassette];
  Hit* hits = hits_of(cassette);
  const std::uint32_t tail = b.end - b.sorted_end;
  if (tail == 0) return;
  sort_tail(hits + b.sorted_end, tail);
  if (b.sorted_end != b.head && earlier(hits[b.sorted_end], hits[b.sorted_end - 1])) {
    // Merge only the part of the sorted hits that is later than the tail's earliest.
    Hit* from = std::upper_bound(hits + b.head, hits + b.sorted_end, hits[b.sorted_end], earlier);
    const auto moved = static_cast<std::uint32_t>(hits + b.sorted_end - from);
    std::copy(from, hits + b.sorted_end, scratch_.data());
    // Writing forward never overtakes the tail still to be read: out = from + i + j while the
    // tail's next unread hit is at sorted_end + j and i <= moved.
    const Hit* a = scratch_.data();
    const Hit* a_end = a + moved;
    const Hit* t = hits + b.sorted_end;
    const Hit* t_end = hits + b.end;
    Hit* out = from;
    while (a != a_end && t != t_end) *out++ = earlier(*t, *a) ? *t++ : *a++;
    while (a != a_end) *out++ = *a++;
  }
  b.sorted_end = b.end;
}

void Clusterer::close_before(std::uint32_t cassette, std::uint64_t horizon) noexcept {
  Buffer& b = buffers_[cassette];
  Hit* hits = hits_of(cassette);
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
    form_events(cassette, hits + b.head, j - b.head);
    b.head = j;
  }
  if (b.head == b.end) {
    b.head = b.sorted_end = b.end = 0;
  } else if (b.head >= kCompactAfter && b.head >= b.end - b.head) {
    // Slide the few pending hits back to the front, so each cassette keeps writing into the same
    // few cache lines instead of walking its whole buffer (cheap: fewer hits than were closed).
    std::copy(hits + b.head, hits + b.end, hits);
    b.sorted_end -= b.head;
    b.end -= b.head;
    b.head = 0;
  }
}

void Clusterer::end_packet() noexcept {
  std::uint64_t& latest = latest_ns_[queue_];
  if (packet_latest_ns_ > latest) latest = packet_latest_ns_;
  packet_latest_ns_ = 0;
  const std::uint64_t horizon =
      latest > settings_.reorder_window_ns ? latest - settings_.reorder_window_ns : 0;
  for (std::uint32_t i = 0; i < dirty_count_; ++i) {
    const std::uint32_t c = dirty_[i];
    buffers_[c].dirty = false;
    sort_in(c);
  }
  dirty_count_ = 0;
  // Every cassette of this queue, not only those in this packet: the horizon moved for all.
  for (std::uint32_t c = 0; c < buffers_.size(); ++c) {
    const Buffer& b = buffers_[c];
    if (queue_of_[c] == queue_ && b.head != b.sorted_end &&
        hits_of(c)[b.head].time_ns + settings_.max_time_gap_ns < horizon) {
      close_before(c, horizon);
    }
  }
}

void Clusterer::close(std::uint32_t cassette) noexcept {
  sort_in(cassette);
  close_before(cassette, kNever);
}

void Clusterer::close_all() noexcept {
  for (std::uint32_t c = 0; c < buffers_.size(); ++c) close(c);
}

std::uint32_t Clusterer::build_clusters(Hit* hits, std::uint32_t count, std::uint16_t max_gap,
                                        Cluster* out) const noexcept {
  sort_hits(hits, count, lower_coordinate);
  std::uint32_t clusters = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    const Hit& h = hits[i];
    if (clusters == 0 || h.coordinate > out[clusters - 1].max_coordinate + max_gap + 1U) {
      out[clusters++] = Cluster{h.time_ns,    h.pulse_ns,   0,     0,    0, h.coordinate,
                                h.coordinate, h.coordinate, h.adc, false};
    }
    Cluster& c = out[clusters - 1];
    if (h.time_ns < c.time_ns || (h.time_ns == c.time_ns && h.pulse_ns < c.pulse_ns)) {
      c.time_ns = h.time_ns;
      c.pulse_ns = h.pulse_ns;
    }
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

std::uint16_t Clusterer::position(const Cluster& c) const noexcept {
  if (settings_.algorithm == PositionAlgorithm::kMaxAdc || c.adc_sum == 0) {
    return c.max_adc_coordinate;
  }
  // Centroid rounded half up, in integers: (2 * sum(adc * x) + sum(adc)) / (2 * sum(adc)); the
  // facility rounds its floating-point centroid the same way (std::round, positive values).
  return static_cast<std::uint16_t>((2 * c.weighted_sum + c.adc_sum) /
                                    (2 * std::uint64_t{c.adc_sum}));
}

void Clusterer::form_events(std::uint32_t cassette, Hit* hits, std::uint32_t count) noexcept {
  (void)cassette;
  std::uint32_t plane_count[2] = {0, 0};
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto p = static_cast<unsigned>(hits[i].plane);
    plane_hits_[p][plane_count[p]++] = hits[i];
  }

  Cluster* wires = clusters_[0].data();
  Cluster* strips = clusters_[1].data();
  const std::uint32_t wire_count =
      build_clusters(plane_hits_[0].data(), plane_count[0], settings_.max_gap_wire, wires);
  const std::uint32_t strip_count =
      build_clusters(plane_hits_[1].data(), plane_count[1], settings_.max_gap_strip, strips);

  for (std::uint32_t w = 0; w < wire_count; ++w) {
    const Cluster& wc = wires[w];
    std::uint32_t best = strip_count;
    std::uint64_t best_dt = settings_.max_match_time_ns + 1;
    for (std::uint32_t s = 0; s < strip_count; ++s) {
      if (strips[s].matched) continue;
      const std::uint64_t dt = wc.time_ns > strips[s].time_ns ? wc.time_ns - strips[s].time_ns
                                                              : strips[s].time_ns - wc.time_ns;
      if (dt < best_dt) {
        best_dt = dt;
        best = s;
      }
    }
    if (best == strip_count) {
      no_match_strip_.add();
      continue;
    }
    Cluster& sc = strips[best];
    sc.matched = true;
    const std::uint32_t wire_span = wc.max_coordinate - wc.min_coordinate + 1U;
    const std::uint32_t strip_span = sc.max_coordinate - sc.min_coordinate + 1U;
    // The facility's gap rule: more channels missing inside the cluster than MaxGap allows.
    if (wc.hits + settings_.max_gap_wire < wire_span) {
      wire_gap_.add();
      continue;
    }
    if (sc.hits + settings_.max_gap_strip < strip_span) {
      strip_gap_.add();
      continue;
    }
    if (wire_span > settings_.max_wire_span) {
      wire_span_too_large_.add();
      continue;
    }
    if (strip_span > settings_.max_strip_span) {
      strip_span_too_large_.add();
      continue;
    }
    const std::uint32_t pixel = geometry_.pixel(position(wc), position(sc));
    if (pixel == 0) {
      bad_pixel_.add();
      continue;
    }
    const Cluster& first = wc.time_ns <= sc.time_ns ? wc : sc;
    // TOF fits 32 bits: every hit passed the max-TOF check, which is below 2^31 ns.
    events_.add(first.pulse_ns, static_cast<std::uint32_t>(first.time_ns - first.pulse_ns), pixel);
    formed_.add();
  }
  for (std::uint32_t s = 0; s < strip_count; ++s) {
    if (!strips[s].matched) no_match_wire_.add();
  }
}

}  // namespace efu::multiblade
