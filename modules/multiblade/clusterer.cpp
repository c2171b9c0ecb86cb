#include "clusterer.h"

namespace efu::multiblade {

Clusterer::Clusterer(CounterRegistry& counters, const Geometry& geometry,
                     const ClusterSettings& settings, EventSink& events)
    : geometry_(geometry),
      settings_(settings),
      events_(events),
      groups_(counters, geometry.cassettes(),
              vmm3a::TimeGroupSettings{settings.max_time_gap_ns, settings.reorder_window_ns,
                                       settings.buffer_hits},
              *this),
      formed_(counters.counter("events.formed")),
      no_match_wire_(counters.counter("events.rejected.no_match_wire")),
      no_match_strip_(counters.counter("events.rejected.no_match_strip")),
      wire_span_too_large_(counters.counter("events.rejected.wire_span_too_large")),
      strip_span_too_large_(counters.counter("events.rejected.strip_span_too_large")),
      wire_gap_(counters.counter("events.rejected.wire_gap")),
      strip_gap_(counters.counter("events.rejected.strip_gap")),
      bad_pixel_(counters.counter("events.rejected.pixel")) {
  for (unsigned p = 0; p < 2; ++p) {
    plane_hits_[p].resize(settings.buffer_hits);
    clusters_[p].resize(settings.buffer_hits);
  }
}

std::uint16_t Clusterer::position(const vmm3a::Cluster& c) const noexcept {
  return settings_.algorithm == PositionAlgorithm::kMaxAdc ? c.max_adc_coordinate
                                                           : vmm3a::center_of_mass(c);
}

void Clusterer::group(std::uint32_t cassette, Hit* hits, std::uint32_t count) noexcept {
  (void)cassette;  // the coordinates are instrument-wide already
  // One wire hit and one strip hit: the commonest group where readouts come at random times
  // (every neutron a wire/strip pair). Formed directly, as the general path below would.
  if (count == 2 && (hits[0].plane & 1U) != (hits[1].plane & 1U)) {
    const bool wire_first = (hits[0].plane & 1U) == kWire;
    pair_single(hits[wire_first ? 0 : 1], hits[wire_first ? 1 : 0]);
    return;
  }
  const vmm3a::PlaneCounts n =
      vmm3a::split_planes(hits, count, plane_hits_[kWire].data(), plane_hits_[kStrip].data());
  vmm3a::Cluster* wires = clusters_[kWire].data();
  vmm3a::Cluster* strips = clusters_[kStrip].data();
  const std::uint32_t wire_count =
      vmm3a::build_clusters(plane_hits_[kWire].data(), n.n[kWire], settings_.max_gap_wire, wires);
  const std::uint32_t strip_count = vmm3a::build_clusters(plane_hits_[kStrip].data(), n.n[kStrip],
                                                          settings_.max_gap_strip, strips);
  vmm3a::match_nearest(
      wires, wire_count, strips, strip_count, settings_.max_match_time_ns,
      [this](const vmm3a::Cluster& w, const vmm3a::Cluster& s) { pair(w, s); },
      [this](unsigned plane, const vmm3a::Cluster&) {
        // A wire cluster without a strip lacks the strip, and the other way round.
        (plane == kWire ? no_match_strip_ : no_match_wire_).add();
      });
}

// The general path on one wire hit `w` and one strip hit `s`, step by step:
// - each plane is one one-hit cluster: its time and pulse are the hit's, its span is 1 and no
//   channel is missing (so the gap rule, missing() > MaxGap ≥ 0, cannot reject it);
// - match_nearest pairs them when |t_w − t_s| ≤ max_match_time_ns, else leaves both alone: the
//   wire cluster without a strip (no_match_strip), then the strip cluster (no_match_wire);
// - the position is the hit's coordinate either way: centre of mass (2·adc·x + adc) / (2·adc)
//   = x in integers, or x itself when adc is 0; max-ADC: x.
void Clusterer::pair_single(const Hit& w, const Hit& s) noexcept {
  const std::uint64_t dt = w.time_ns > s.time_ns ? w.time_ns - s.time_ns : s.time_ns - w.time_ns;
  if (dt > settings_.max_match_time_ns) {
    no_match_strip_.add();
    no_match_wire_.add();
    return;
  }
  if (settings_.max_wire_span < 1) {
    wire_span_too_large_.add();
    return;
  }
  if (settings_.max_strip_span < 1) {
    strip_span_too_large_.add();
    return;
  }
  const std::uint32_t pixel = geometry_.pixel(w.coordinate, s.coordinate);
  if (pixel == 0) {
    bad_pixel_.add();
    return;
  }
  const Hit& first = w.time_ns <= s.time_ns ? w : s;
  events_.add(first.pulse_ns, static_cast<std::uint32_t>(first.time_ns - first.pulse_ns), pixel);
  formed_.add();
}

void Clusterer::pair(const vmm3a::Cluster& wc, const vmm3a::Cluster& sc) noexcept {
  // The facility's gap rule: more channels missing inside the cluster than MaxGap allows.
  if (wc.missing() > settings_.max_gap_wire) {
    wire_gap_.add();
    return;
  }
  if (sc.missing() > settings_.max_gap_strip) {
    strip_gap_.add();
    return;
  }
  if (wc.span() > settings_.max_wire_span) {
    wire_span_too_large_.add();
    return;
  }
  if (sc.span() > settings_.max_strip_span) {
    strip_span_too_large_.add();
    return;
  }
  const std::uint32_t pixel = geometry_.pixel(position(wc), position(sc));
  if (pixel == 0) {
    bad_pixel_.add();
    return;
  }
  const vmm3a::Cluster& first = wc.time_start <= sc.time_start ? wc : sc;
  // TOF fits 32 bits: every hit passed the max-TOF check, which is below 2^31 ns.
  events_.add(first.pulse_ns, static_cast<std::uint32_t>(first.time_start - first.pulse_ns), pixel);
  formed_.add();
}

}  // namespace efu::multiblade
