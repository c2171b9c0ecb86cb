#include "clusterer.h"

namespace efu::multiblade {
namespace {

// Groups are a handful of hits, mostly already in order: insertion sort beats std::sort here.
void sort_by_coordinate(Hit* hits, std::uint32_t count) noexcept {
  for (std::uint32_t i = 1; i < count; ++i) {
    const Hit h = hits[i];
    std::uint32_t j = i;
    while (j > 0 && hits[j - 1].coordinate > h.coordinate) {
      hits[j] = hits[j - 1];
      --j;
    }
    hits[j] = h;
  }
}

}  // namespace

Clusterer::Clusterer(CounterRegistry& counters, const Geometry& geometry,
                     const ClusterSettings& settings, EventSink& events)
    : geometry_(geometry),
      settings_(settings),
      events_(events),
      groups_(geometry.cassettes(), Group{0, 0, 0}),
      hits_(std::size_t{geometry.cassettes()} * settings.group_capacity),
      formed_(counters.counter("events.formed")),
      no_match_wire_(counters.counter("events.rejected.no_match_wire")),
      no_match_strip_(counters.counter("events.rejected.no_match_strip")),
      wire_span_too_large_(counters.counter("events.rejected.wire_span_too_large")),
      strip_span_too_large_(counters.counter("events.rejected.strip_span_too_large")),
      buffer_full_(counters.counter("hits.dropped.buffer_full")),
      out_of_order_(counters.counter("hits.dropped.out_of_order")) {
  for (unsigned p = 0; p < 2; ++p) {
    plane_hits_[p].resize(settings.group_capacity);
    clusters_[p].resize(settings.group_capacity);
  }
}

void Clusterer::add(std::uint32_t cassette, const Hit& hit) noexcept {
  Group& g = groups_[cassette];
  if (g.size != 0) {
    if (hit.time_ns > g.max_time + settings_.max_time_gap_ns) {
      form_events(cassette, g);
    } else if (hit.time_ns + settings_.max_time_gap_ns < g.min_time) {
      // Belongs to a group that is already closed; adding it here would corrupt this one.
      out_of_order_.add();
      return;
    } else if (g.size == settings_.group_capacity) {
      // Not added, so max_time stays put and the group still closes at the next gap.
      buffer_full_.add();
      return;
    }
  }
  if (g.size == 0) {
    g.min_time = hit.time_ns;
    g.max_time = hit.time_ns;
  } else {
    if (hit.time_ns < g.min_time) g.min_time = hit.time_ns;
    if (hit.time_ns > g.max_time) g.max_time = hit.time_ns;
  }
  hits_[std::size_t{cassette} * settings_.group_capacity + g.size++] = hit;
}

void Clusterer::close(std::uint32_t cassette) noexcept {
  Group& g = groups_[cassette];
  if (g.size != 0) form_events(cassette, g);
}

void Clusterer::close_all() noexcept {
  for (std::uint32_t c = 0; c < groups_.size(); ++c) close(c);
}

std::uint32_t Clusterer::build_clusters(Hit* hits, std::uint32_t count,
                                        Cluster* out) const noexcept {
  sort_by_coordinate(hits, count);
  std::uint32_t clusters = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    const Hit& h = hits[i];
    if (clusters == 0 ||
        h.coordinate > out[clusters - 1].max_coordinate + settings_.max_coordinate_gap) {
      out[clusters++] = Cluster{h.time_ns,    h.pulse_ns,   0,     0,    h.coordinate,
                                h.coordinate, h.coordinate, h.adc, false};
    }
    Cluster& c = out[clusters - 1];
    if (h.time_ns < c.time_ns) {
      c.time_ns = h.time_ns;
      c.pulse_ns = h.pulse_ns;
    }
    c.weighted_sum += std::uint64_t{h.adc} * h.coordinate;
    c.adc_sum += h.adc;
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
  // Centroid rounded half up, in integers: (2 * sum(adc * x) + sum(adc)) / (2 * sum(adc)).
  return static_cast<std::uint16_t>((2 * c.weighted_sum + c.adc_sum) /
                                    (2 * std::uint64_t{c.adc_sum}));
}

void Clusterer::form_events(std::uint32_t cassette, Group& group) noexcept {
  const Hit* hits = &hits_[std::size_t{cassette} * settings_.group_capacity];
  std::uint32_t plane_count[2] = {0, 0};
  for (std::uint32_t i = 0; i < group.size; ++i) {
    const auto p = static_cast<unsigned>(hits[i].plane);
    plane_hits_[p][plane_count[p]++] = hits[i];
  }
  group.size = 0;

  Cluster* wires = clusters_[0].data();
  Cluster* strips = clusters_[1].data();
  const std::uint32_t wire_count = build_clusters(plane_hits_[0].data(), plane_count[0], wires);
  const std::uint32_t strip_count = build_clusters(plane_hits_[1].data(), plane_count[1], strips);

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
    if (wc.max_coordinate - wc.min_coordinate + 1 > settings_.max_wire_span) {
      wire_span_too_large_.add();
      continue;
    }
    if (sc.max_coordinate - sc.min_coordinate + 1 > settings_.max_strip_span) {
      strip_span_too_large_.add();
      continue;
    }
    const Cluster& first = wc.time_ns <= sc.time_ns ? wc : sc;
    // TOF fits 32 bits: every hit passed the max-TOF check, which is below 2^31 ns.
    events_.add(first.pulse_ns, static_cast<std::uint32_t>(first.time_ns - first.pulse_ns),
                geometry_.pixel(cassette, position(sc), position(wc)));
    formed_.add();
  }
  for (std::uint32_t s = 0; s < strip_count; ++s) {
    if (!strips[s].matched) no_match_wire_.add();
  }
}

}  // namespace efu::multiblade
