#include "events.h"

#include <algorithm>

namespace efu::nmx {
namespace {
// build_clusters() with this gap puts every hit of a plane into one cluster.
constexpr std::uint32_t kNoGapLimit = 0xFFFF;
}  // namespace

void make_cluster(Hit* hits, std::uint32_t n, PlaneCluster& out) noexcept {
  out.hits = hits;
  out.n = n;
  if (n != 0) vmm3a::build_clusters(hits, n, kNoGapLimit, &out.c);
}

// Of the latest hits, lo the first and hi the last in coordinate order:
//   lo == hi: lo;  lo < (n - 1) - hi: lo;  lo > (n - 1) - hi: hi;  else the larger ADC, ties hi.
std::uint16_t utpc_coordinate(const Hit* hits, std::uint32_t n) noexcept {
  std::uint64_t latest = hits[0].time_ns;
  std::uint32_t lo = 0;
  std::uint32_t hi = 0;
  for (std::uint32_t i = 1; i < n; ++i) {
    if (hits[i].time_ns > latest) {
      latest = hits[i].time_ns;
      lo = hi = i;
    } else if (hits[i].time_ns == latest) {
      hi = i;
    }
  }
  if (lo == hi) return hits[lo].coordinate;
  const std::uint32_t from_end = n - 1 - hi;
  if (lo < from_end) return hits[lo].coordinate;
  if (lo > from_end) return hits[hi].coordinate;
  return hits[lo].adc > hits[hi].adc ? hits[lo].coordinate : hits[hi].coordinate;
}

SplitParts split_plane(const Hit* hits, std::uint32_t n) noexcept {
  SplitParts parts{0, 0};
  if (n == 0) return parts;
  parts.first = 1;
  for (std::uint32_t i = 1; i < n; ++i) {
    // Sorted by coordinate, so the difference is never negative.
    const bool gap =
        static_cast<std::uint32_t>(hits[i].coordinate - hits[i - 1].coordinate) > kSplitGap;
    if (gap && parts.second != 0) return SplitParts{0, 0};  // a third part: the plane is dropped
    if (gap || parts.second != 0) {
      ++parts.second;
    } else {
      ++parts.first;
    }
  }
  return parts;
}

bool adc_sums_match(std::uint64_t a, std::uint64_t b, float low, float high) noexcept {
  const auto da = static_cast<double>(a);
  const auto db = static_cast<double>(b);
  return da * static_cast<double>(low) <= db && da * static_cast<double>(high) >= db;
}

int split_pairing(std::uint64_t a1, std::uint64_t a2, std::uint64_t b1, std::uint64_t b2, float low,
                  float high) noexcept {
  const bool m11 = adc_sums_match(a1, b1, low, high);
  const bool m22 = adc_sums_match(a2, b2, low, high);
  const bool m12 = adc_sums_match(a1, b2, low, high);
  const bool m21 = adc_sums_match(a2, b1, low, high);
  if (m11 && m22 && !m12 && !m21) return 0;
  if (m12 && m21 && !m11 && !m22) return 1;
  return -1;
}

EventFormer::EventFormer(CounterRegistry& counters, const Config& config,
                         const EventSettings& settings, EventSink& events)
    : config_(config),
      settings_(settings),
      out_(events),
      groups_(counters, config.panels(),
              vmm3a::TimeGroupSettings{settings.max_time_gap_ns, settings.reorder_window_ns,
                                       settings.buffer_hits},
              *this),
      groups_counter_(counters.counter("events.groups")),
      formed_(counters.counter("events.formed")),
      no_match_x_(counters.counter("events.rejected.no_match_x")),
      no_match_y_(counters.counter("events.rejected.no_match_y")),
      span_too_large_{&counters.counter("events.rejected.x_span_too_large"),
                      &counters.counter("events.rejected.y_span_too_large")},
      span_too_small_{&counters.counter("events.rejected.x_span_too_small"),
                      &counters.counter("events.rejected.y_span_too_small")},
      time_span_too_large_{&counters.counter("events.rejected.x_time_span_too_large"),
                           &counters.counter("events.rejected.y_time_span_too_large")},
      bad_pixel_(counters.counter("events.rejected.pixel")),
      split_attempted_(counters.counter("events.split.attempted")),
      split_done_(counters.counter("events.split.done")),
      split_unmatched_(counters.counter("events.rejected.split_unmatched")) {
  for (auto& plane : plane_hits_) plane.resize(settings.buffer_hits);
}

void EventFormer::group(std::uint32_t panel, Hit* hits, std::uint32_t count) noexcept {
  (void)panel;  // the strip coordinates are instrument-wide already
  groups_counter_.add();
  const vmm3a::PlaneCounts n =
      vmm3a::split_planes(hits, count, plane_hits_[kX].data(), plane_hits_[kY].data());
  PlaneCluster planes[2];
  make_cluster(plane_hits_[kX].data(), n.n[kX], planes[kX]);
  make_cluster(plane_hits_[kY].data(), n.n[kY], planes[kY]);
  const EventParameters& p = settings_.parameters;
  if (p.split_multi_events &&
      (planes[kX].span() >= kSplitSpan || planes[kY].span() >= kSplitSpan)) {
    split(planes);
    return;
  }
  candidate(planes[kX], planes[kY]);
}

// The GapMatcher's splitAndStashEvent(): each plane in at most two parts, paired across the
// planes by ADC sums; exactly one pairing must hold (a1-b1 and a2-b2, or a1-b2 and a2-b1, the
// other two not), else the whole group is dropped, counted.
void EventFormer::split(PlaneCluster (&planes)[2]) noexcept {
  split_attempted_.add();
  PlaneCluster parts[2][2];
  for (unsigned plane = 0; plane < 2; ++plane) {
    const SplitParts s = split_plane(planes[plane].hits, planes[plane].n);
    make_cluster(planes[plane].hits, s.first, parts[plane][0]);
    make_cluster(planes[plane].hits + s.first, s.second, parts[plane][1]);
  }
  const int pairing =
      split_pairing(parts[kX][0].adc_sum(), parts[kX][1].adc_sum(), parts[kY][0].adc_sum(),
                    parts[kY][1].adc_sum(), settings_.parameters.split_coefficient_low,
                    settings_.parameters.split_coefficient_high);
  if (pairing < 0) {
    split_unmatched_.add();
    return;
  }
  const auto y_of_first = static_cast<unsigned>(pairing);
  unsigned formed = 0;
  for (unsigned a = 0; a < 2; ++a) {
    const PlaneCluster& y = parts[kY][a == 0 ? y_of_first : 1 - y_of_first];
    // A pair of empty parts holds no hit: not an event (the reference skips empty events).
    if (parts[kX][a].n == 0 && y.n == 0) continue;
    candidate(parts[kX][a], y);
    ++formed;
  }
  if (formed == 2) split_done_.add();
}

// The reference's per-plane cuts, in its order: span too large, too small, time span too long.
bool EventFormer::span_cuts(const PlaneCluster& cluster, unsigned plane) noexcept {
  const EventParameters& p = settings_.parameters;
  if (cluster.span() > p.max_span[plane]) {
    span_too_large_[plane]->add();
    return false;
  }
  if (cluster.span() < p.min_span[plane]) {
    span_too_small_[plane]->add();
    return false;
  }
  if (cluster.time_span() > p.max_time_span_ns) {
    time_span_too_large_[plane]->add();
    return false;
  }
  return true;
}

void EventFormer::candidate(const PlaneCluster& x, const PlaneCluster& y) noexcept {
  if (x.n == 0 || y.n == 0) {
    (x.n == 0 ? no_match_x_ : no_match_y_).add();
    return;
  }
  if (!span_cuts(x, kX) || !span_cuts(y, kY)) return;
  const std::uint32_t pixel =
      config_.pixel(utpc_coordinate(x.hits, x.n), utpc_coordinate(y.hits, y.n));
  if (pixel == 0) {
    bad_pixel_.add();
    return;
  }
  // The event time is the clusters' end (the reference's Event::timeEnd()); its TOF counts from
  // the pulse of the event's earliest hit. That hit's TOF is below 2^31 ns (the max-TOF check)
  // and the event's end at most 2 MaxTimeSpan + the time gap later (each plane passed the
  // time-span cut, at most 1 s, and one group chains them), so the TOF fits 32 bits.
  const std::uint64_t end = std::max(x.c.time_end, y.c.time_end);
  const std::uint64_t pulse = x.c.time_start <= y.c.time_start ? x.c.pulse_ns : y.c.pulse_ns;
  out_.add(pulse, static_cast<std::uint32_t>(end - pulse), pixel);
  formed_.add();
}

}  // namespace efu::nmx
