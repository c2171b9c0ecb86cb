// efu-nmx-gen: simulated NMX neutrons as ESS VMM3a readout over UDP, with a ground-truth file
// that an end-to-end test checks efu's events against (docs/nmx.md, "Generator (efu-nmx-gen)").
//
// Each neutron is a particle track in a GEM panel: it converts at one strip of each plane, and
// its charge reaches a run of adjacent strips of X and of Y, the conversion strip last. The
// facility's uTPC position (the strip of the latest hit, with the reference's tie rule) then has
// something to find, and the event time is the latest hit. With --split-fraction, pairs of
// neutrons arrive together on one panel, apart in both planes, with charges that tell them
// apart: the multi-events that SplitMultiEvents must split.
//
// The ground truth does not come from the plugin's code. The generator reads the same
// facility file (nmx.json and its variants) with its own reader, works out which fibre, FEN, VMM
// and channel carry each strip by inverting the facility's strip formula itself, and computes
// the pixel with its own copy of the facility's rules (uTPC, split, pixel2D). A mistake on either
// side shows up as a wrong pixel in the end-to-end test.
//
// What every ESS generator shares (options, pulses, sending, header faults, the summary) is in
// common/include/efu/gen/; this file is the NMX part.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "efu/errors.h"
#include "efu/ess/ess_time.h"
#include "efu/ess/packet_assembler.h"
#include "efu/gen/ess_stream.h"
#include "efu/gen/faults.h"
#include "efu/gen/generator_options.h"
#include "efu/gen/random.h"
#include "efu/gen/result_files.h"
#include "efu/json_config.h"
#include "efu/vmm3a/readout.h"

namespace efu::nmx_gen {
namespace {

using gen::kFirstTofNs;

constexpr const char* kProgram = "efu-nmx-gen";
constexpr std::uint8_t kNmxType = 0x44;   // the facility's ESS type byte for NMX
constexpr std::uint8_t kTrexType = 0x40;  // what a kType fault writes instead
constexpr gen::Fault kFaults[] = {
    gen::Fault::kCookie,  gen::Fault::kTruncated, gen::Fault::kVersion, gen::Fault::kType,
    gen::Fault::kCorrupt, gen::Fault::kEmpty,     gen::Fault::kOversize};

// --- The facility file -------------------------------------------------------------------
// The keys and defaults of the reference's nmx::Config (src/modules/nmx/geometry/Config.*):
// every scalar is optional with the reference's default; Config[] entries default Plane,
// Offset, ReversedChannels and Panel to 0/false, and Ring to 0 (mininmx.json has none).
// MaxTimeSpan (500 ns) and the split's minimum gap and span (10) are not in the facility's files:
// they are the reference's constants (NMXInstrument, GapMatcher; efu reads a MaxTimeSpan).
constexpr std::int64_t kMaxTimeSpanNs = 500;
constexpr std::int64_t kMaxTrackNs = 400;  // 35 ticks: the longest track add_track() draws
constexpr std::uint32_t kSplitSpan = 10;   // GapMatcher maximum_coord_span_: split at >= 10
constexpr std::uint32_t kSplitGap = 10;    // GapMatcher minimum_coord_gap_: a gap is > 10

struct HybridEntry {
  std::uint32_t ring, fen, hybrid, plane, offset, panel;
  bool reversed;
};

struct NmxFile {
  std::string name;  // "nmx config '<path>'": how errors name the file
  std::uint32_t size_x = 1280, size_y = 1280, panels = 4;
  std::array<std::uint32_t, 2> max_span{10, 10}, min_span{1, 1};
  std::uint32_t min_adc = 50;
  std::uint64_t matching_gap_ns = 500, clustering_gap_ns = 500;
  bool split = false;
  double coefficient_low = 0.8, coefficient_high = 1.2;
  std::vector<HybridEntry> hybrids;
};

NmxFile read_nmx_file(const std::string& path) {
  const JsonDocument doc = JsonDocument::from_file(path, "nmx config");
  const JsonNode root = doc.root();
  NmxFile f;
  f.name = doc.name();
  auto u16 = [&](const char* key, std::uint32_t fallback) {
    return static_cast<std::uint32_t>(root.get_int_or(key, fallback, 0, 65535));
  };
  f.size_x = u16("SizeX", 1280);
  f.size_y = u16("SizeY", 1280);
  f.panels = static_cast<std::uint32_t>(root.get_int_or("NumPanels", 4, 1, 255));
  f.max_span = {u16("MaxSpanX", 10), u16("MaxSpanY", 10)};
  f.min_span = {u16("MinSpanX", 1), u16("MinSpanY", 1)};
  f.min_adc = u16("DefaultMinADC", 50);
  f.matching_gap_ns = u16("MaxMatchingTimeGap", 500);
  f.clustering_gap_ns = u16("MaxClusteringTimeGap", 500);
  // efu reads MaxTimeSpan when present (the reference always uses 500): tracks here last up to
  // 400 ns, so a file may not cut below that.
  if (const auto span = root.get_int_or("MaxTimeSpan", kMaxTimeSpanNs, 0, 65535);
      span < kMaxTrackNs) {
    root.at("MaxTimeSpan")
        .fail(std::to_string(span) + " is below the generator's longest track; expected at least " +
              std::to_string(kMaxTrackNs));
  }
  f.split = root.get_bool_or("SplitMultiEvents", false);
  // The reference keeps the coefficients as float: compare with the same values.
  f.coefficient_low =
      static_cast<float>(root.get_double_or("SplitMultiEventsCoefficientLow", 0.8, 0, 100));
  f.coefficient_high =
      static_cast<float>(root.get_double_or("SplitMultiEventsCoefficientHigh", 1.2, 0, 100));
  for (const JsonNode& c : root.at("Config").elements(1)) {
    HybridEntry h{};
    h.ring = static_cast<std::uint32_t>(c.get_int_or("Ring", 0, 0, 10));
    h.fen = static_cast<std::uint32_t>(c.get_int("FEN", 0, 13));
    h.hybrid = static_cast<std::uint32_t>(c.get_int("Hybrid", 0, 10));
    h.plane = static_cast<std::uint32_t>(c.get_int_or("Plane", 0, 0, 1));
    h.offset = static_cast<std::uint32_t>(c.get_int_or("Offset", 0, 0, 65535 - 128));
    h.panel = static_cast<std::uint32_t>(c.get_int_or("Panel", 0, 0, f.panels - 1));
    h.reversed = c.get_bool_or("ReversedChannels", false);
    f.hybrids.push_back(h);
  }
  return f;
}

// --- Strips ------------------------------------------------------------------------------
// The facility numbers a strip of hybrid h (NMXGeometry::coord), ASIC a = VMM & 1, channel ch:
//   normal:    coordinate = Offset + 64·a + ch
//   reversed:  coordinate = Offset + 64·(1 − a) + (63 − ch)
// so with local = coordinate − Offset (0..127) the generator inverts it:
//   normal:    a = local / 64,       ch = local % 64
//   reversed:  a = 1 − local / 64,   ch = 63 − local % 64
// and the readout carries VMM = 2·Hybrid + a, FiberId = 2·Ring or 2·Ring + 1.
struct Strip {
  std::int32_t entry = -1;  // Config[] index; -1: no hybrid reads this strip
  std::uint8_t asic = 0;
  std::uint8_t channel = 0;
};

constexpr Strip strip_of(std::int32_t entry, std::uint32_t local, bool reversed) {
  const auto block = static_cast<std::uint8_t>(local / 64);
  const auto in_block = static_cast<std::uint8_t>(local % 64);
  if (reversed)
    return Strip{entry, static_cast<std::uint8_t>(1 - block),
                 static_cast<std::uint8_t>(63 - in_block)};
  return Strip{entry, block, in_block};
}

/// The pixel of uTPC position (x, y) as the facility numbers it (ESSGeometry::pixel2D over
/// SizeX × SizeY): 1 + x + SizeX·y, 0 outside. The panels share the one picture: nmx.json's
/// four panels each read a different 640 × 640 quarter of it.
std::uint32_t pixel_of(const NmxFile& f, std::uint32_t x, std::uint32_t y) {
  if (x >= f.size_x || y >= f.size_y) return 0;
  return 1 + x + f.size_x * y;
}

/// Per panel and plane: the strip behind every coordinate, and the coordinates read at all.
class StripMap {
 public:
  explicit StripMap(const NmxFile& f) : planes_(2 * f.panels) {
    for (std::size_t i = 0; i < f.hybrids.size(); ++i) {
      const HybridEntry& h = f.hybrids[i];
      std::vector<Strip>& strips = planes_[2 * h.panel + h.plane];
      if (strips.size() < h.offset + 128) strips.resize(h.offset + 128);
      for (std::uint32_t local = 0; local < 128; ++local) {
        if (strips[h.offset + local].entry >= 0) {
          throw ConfigError(f.name + ": /Config/" + std::to_string(i) + ": coordinate " +
                            std::to_string(h.offset + local) +
                            " of its panel and plane is another hybrid's; expected no overlap");
        }
        strips[h.offset + local] = strip_of(static_cast<std::int32_t>(i), local, h.reversed);
      }
    }
    for (std::uint32_t p = 0; p < f.panels; ++p) {
      if (!covered(p, 0).empty() && !covered(p, 1).empty()) panels_.push_back(p);
    }
    if (panels_.empty())
      throw ConfigError(f.name + ": /Config: no panel has strips in both planes; expected one");
  }
  /// The strip at `coordinate`, entry -1 if none.
  Strip at(std::uint32_t panel, std::uint32_t plane, std::int64_t coordinate) const {
    const std::vector<Strip>& s = planes_[2 * panel + plane];
    if (coordinate < 0 || coordinate >= static_cast<std::int64_t>(s.size())) return Strip{};
    return s[static_cast<std::size_t>(coordinate)];
  }
  std::vector<std::uint32_t> covered(std::uint32_t panel, std::uint32_t plane) const {
    std::vector<std::uint32_t> out;
    const std::vector<Strip>& s = planes_[2 * panel + plane];
    for (std::uint32_t c = 0; c < s.size(); ++c) {
      if (s[c].entry >= 0) out.push_back(c);
    }
    return out;
  }
  /// Panels with strips in both planes: where neutrons can be seen.
  const std::vector<std::uint32_t>& panels() const noexcept { return panels_; }

 private:
  std::vector<std::vector<Strip>> planes_;
  std::vector<std::uint32_t> panels_;
};

// --- Tracks and the facility's rules on them ---------------------------------------------
// Times are in ticks of the ESS clock (ess_time.h) counted from the epoch, so that what the
// readouts carry is exactly what the truth is computed from: two hits one tick apart are apart
// in efu too, and equal ticks are a true tie.
constexpr std::uint64_t kTicks = ess::kTicksPerSecond;

std::uint64_t ticks_of(std::uint64_t ns) {
  const ess::EssTime t = ess::to_ess(ns);
  return std::uint64_t{t.high} * kTicks + t.low;
}
std::uint64_t ns_of_ticks(std::uint64_t ticks) {
  return ess::to_ns(static_cast<std::uint32_t>(ticks / kTicks),
                    static_cast<std::uint32_t>(ticks % kTicks));
}

struct TrackHit {
  std::uint32_t plane;
  std::uint32_t coordinate;
  std::uint64_t ticks;
  std::uint16_t adc;
};

/// The uTPC coordinate of one plane's hits (the reference's Cluster::coordUtpc(false)): the hits
/// in coordinate order; among those with the latest time, the first (lo) and last (hi) index.
/// One latest hit: its coordinate. Several: lo if lo is nearer the start than hi is to the end,
/// hi if farther; equally near: lo if its ADC is larger, else hi.
std::uint32_t utpc(std::vector<TrackHit> hits) {
  std::sort(hits.begin(), hits.end(),
            [](const TrackHit& a, const TrackHit& b) { return a.coordinate < b.coordinate; });
  const std::uint64_t latest =
      std::max_element(hits.begin(), hits.end(), [](const TrackHit& a, const TrackHit& b) {
        return a.ticks < b.ticks;
      })->ticks;
  std::size_t lo = hits.size(), hi = 0;
  for (std::size_t i = 0; i < hits.size(); ++i) {
    if (hits[i].ticks != latest) continue;
    lo = std::min(lo, i);
    hi = i;
  }
  const std::size_t from_end = hits.size() - 1 - hi;
  if (lo < from_end) return hits[lo].coordinate;
  if (lo > from_end) return hits[hi].coordinate;
  return hits[lo].adc > hits[hi].adc ? hits[lo].coordinate : hits[hi].coordinate;
}

/// What one neutron's hits give on one plane: span (max − min + 1), uTPC, ADC sum, times.
struct PlaneSummary {
  std::uint32_t min = 0, max = 0, span = 0, utpc = 0;
  std::uint64_t adc_sum = 0, first = 0, last = 0;
};

PlaneSummary summarize(const std::vector<TrackHit>& hits, std::uint32_t plane) {
  std::vector<TrackHit> mine;
  for (const TrackHit& h : hits) {
    if (h.plane == plane) mine.push_back(h);
  }
  PlaneSummary s;
  s.min = s.max = mine.front().coordinate;
  s.first = s.last = mine.front().ticks;
  for (const TrackHit& h : mine) {
    s.min = std::min(s.min, h.coordinate);
    s.max = std::max(s.max, h.coordinate);
    s.first = std::min(s.first, h.ticks);
    s.last = std::max(s.last, h.ticks);
    s.adc_sum += h.adc;
  }
  s.span = s.max - s.min + 1;
  s.utpc = utpc(mine);
  return s;
}

/// The reference's GapMatcher::clustersMatch: b's ADC sum within [low, high] × a's.
bool charges_match(const NmxFile& f, std::uint64_t a, std::uint64_t b) {
  const double da = static_cast<double>(a), db = static_cast<double>(b);
  return da * f.coefficient_low <= db && da * f.coefficient_high >= db;
}

/// The settings: the shared ones (gen::GeneratorOptions) and NMX's own.
struct Settings : gen::GeneratorOptions, gen::ReorderOptions {
  std::string geometry;
  double split_fraction = 0;
  double tie_fraction = 0;
  double wide_fraction = 0;
  std::uint16_t adc_max = 1023;
};

/// One neutron as drawn: its hits and what the facility makes of them.
struct Neutron {
  std::uint32_t panel = 0;
  std::vector<TrackHit> hits;
  PlaneSummary x, y;
  std::uint64_t end_ticks = 0;  // the event time: the latest hit of both planes
  bool tie = false;
  const char* kind = "track";
};

class Generator {
 public:
  Generator(const Settings& s, const NmxFile& f, const StripMap& strips)
      : s_(s),
        f_(f),
        strips_(strips),
        rng_(s.seed),
        stream_(s, kProgram, kNmxType, kFaults, kTrexType),
        packets_(stream_.packets()),
        truth_(gen::open_ground_truth(
            s.ground_truth, "# pulse_time_ns tof_ns pixel panel x y span_x span_y kind")) {
    queue_packets_.assign(packets_.queues(), 0);
    for (std::uint32_t p = 0; p < f.panels; ++p) {
      covered_[0].push_back(strips.covered(p, 0));
      covered_[1].push_back(strips.covered(p, 1));
    }
  }
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  void run() {
    // A strip's ADC is drawn within ±20 % of its share, between DefaultMinADC and --adc-max.
    const auto [lo, hi] = charge_range(1);
    if (lo > hi) {
      throw ConfigError(f_.name + ": /DefaultMinADC: " + std::to_string(f_.min_adc) +
                        " leaves no room below --adc-max " + std::to_string(s_.adc_max) +
                        "; expected at most " + std::to_string((hi - 1) * 4 / 5));
    }
    spacing_ = gen::neutron_spacing_ns(s_.neutrons_per_pulse);
    // A neutron (or a pair) and its time group: tracks last < 400 ns, and the group closes
    // after the largest time gap; the next neutron must start after that.
    const std::uint64_t min_spacing = 2 * static_cast<std::uint64_t>(kMaxTrackNs) +
                                      std::max(f_.matching_gap_ns, f_.clustering_gap_ns) + 1000;
    gen::check_neutron_spacing(s_.neutrons_per_pulse, spacing_, min_spacing, "");
    stream_.run_pulses([this](std::uint64_t, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
      run_pulse(pulse_ns, prev_ns);
    });
  }

  void write_summary() const {
    gen::SummaryJson json;
    stream_.add_sent(json)
        .number("readouts", readouts_)
        .number("neutrons", neutrons_)
        .number("events", events_)
        .number("split_pairs", split_pairs_)
        .number("ties", ties_)
        .number("rejected_span_x", rejected_[0])
        .number("rejected_span_y", rejected_[1])
        .number("rejected_pixel", rejected_pixel_)
        .number("noise_x", noise_[0])
        .number("noise_y", noise_[1])
        .number("delayed", held_.held())
        .number("delayed_across_packets", delayed_across_)
        .flag("exact_truth", true);
    stream_.add_errors(json).write(s_.summary);
  }

  void print_summary() const {
    stream_.print_summary(readouts_, neutrons_, noise_[0] + noise_[1], "noise hits");
  }

 private:
  bool chance(double p) { return p > 0 && rng_.uniform(0, 1) < p; }

  /// The widest span a formed single neutron may have on `plane`: MaxSpan, and with
  /// SplitMultiEvents below the reference's split span (10), so that every split attempt is a
  /// drawn pair or a wide neutron (a single of span 10 would be tried, and formed whole).
  std::uint32_t max_span(std::uint32_t plane) const {
    std::uint32_t m = f_.max_span[plane];
    if (f_.split) m = std::min(m, kSplitSpan - 1);
    return std::max(m, f_.min_span[plane]);
  }

  /// A run of `span` adjacent read strips of one plane, the conversion strip first, or false.
  bool draw_run(std::uint32_t panel, std::uint32_t plane, std::uint32_t span,
                std::vector<std::uint32_t>& run) {
    const std::vector<std::uint32_t>& cov = covered_[plane][panel];
    for (int attempt = 0; attempt < 100; ++attempt) {
      const std::int64_t start = cov[rng_.below(cov.size())];
      const std::int64_t step = rng_.below(2) == 0 ? 1 : -1;
      run.clear();
      for (std::uint32_t k = 0; k < span; ++k) {
        const std::int64_t c = start + step * k;
        if (strips_.at(panel, plane, c).entry < 0) break;
        run.push_back(static_cast<std::uint32_t>(c));
      }
      if (run.size() == span) return true;
    }
    return false;
  }

  /// One plane's track: the run's strips at end, end − dt, end − 2·dt, ... ticks (the
  /// conversion strip last; with `tie` its neighbour at the same time), the run's ADCs summing
  /// to `charge`. dt keeps the track under 400 ns (the reference's MaxTimeSpan is 500) and every
  /// step under the clustering gap.
  void add_track(Neutron& n, std::uint32_t plane, const std::vector<std::uint32_t>& run,
                 std::uint64_t end, bool tie, std::uint64_t charge) {
    const auto steps = static_cast<std::uint64_t>(run.size() > 1 ? run.size() - 1 : 1);
    const std::uint64_t max_dt = std::clamp<std::uint64_t>(35 / steps, 1, 8);
    const std::uint64_t dt = 1 + rng_.below(max_dt);
    std::uint64_t left = charge;
    for (std::size_t k = 0; k < run.size(); ++k) {
      const std::uint64_t back = (tie && k > 0) ? k - 1 : k;
      const std::uint64_t remaining = run.size() - k;
      std::uint64_t adc = left;
      if (remaining > 1) {
        const std::uint64_t mean = left / remaining;
        adc = std::clamp<std::uint64_t>(
            mean * static_cast<std::uint64_t>(rng_.uniform(80, 121)) / 100, f_.min_adc, s_.adc_max);
        // Leave the others at least the threshold and at most the ADC's top each.
        adc = std::clamp<std::uint64_t>(
            adc, left > (remaining - 1) * s_.adc_max ? left - (remaining - 1) * s_.adc_max : 0,
            left - (remaining - 1) * f_.min_adc);
      }
      left -= adc;
      n.hits.push_back(TrackHit{plane, run[k], end - back * dt, static_cast<std::uint16_t>(adc)});
    }
  }

  /// The charge range (ADC sum) a run of `span` strips can carry: threshold to top per strip,
  /// with room for the ±20 % spread.
  std::pair<std::uint64_t, std::uint64_t> charge_range(std::uint32_t span) const {
    const std::uint64_t lo = std::max<std::uint64_t>(f_.min_adc, 1) * 5 / 4 + 1;
    const std::uint64_t hi = std::uint64_t{s_.adc_max} * 4 / 5;
    return {lo * span, hi * span};
  }

  /// Draws one neutron on `panel` with the given spans, ending at `end` ticks, with a total
  /// charge per plane in [q_lo, q_hi] (the same on both planes, as one avalanche gives).
  bool draw_neutron(Neutron& n, std::uint32_t panel, std::array<std::uint32_t, 2> span,
                    std::uint64_t end, std::uint64_t q_lo, std::uint64_t q_hi) {
    std::array<std::vector<std::uint32_t>, 2> runs;
    for (std::uint32_t plane = 0; plane < 2; ++plane) {
      if (!draw_run(panel, plane, span[plane], runs[plane])) return false;
    }
    const auto [xlo, xhi] = charge_range(span[0]);
    const auto [ylo, yhi] = charge_range(span[1]);
    q_lo = std::max({q_lo, xlo, ylo});
    q_hi = std::min({q_hi, xhi, yhi});
    if (q_lo > q_hi) return false;
    const std::uint64_t charge = q_lo + rng_.below(q_hi - q_lo + 1);
    n = Neutron{};
    n.panel = panel;
    n.tie = chance(s_.tie_fraction) && (span[0] > 1 || span[1] > 1);
    // One plane ends at the neutron's time, the other up to 2 ticks earlier.
    const std::uint32_t later = static_cast<std::uint32_t>(rng_.below(2));
    for (std::uint32_t plane = 0; plane < 2; ++plane) {
      const std::uint64_t plane_end = plane == later ? end : end - rng_.below(3);
      const bool tie = n.tie && span[plane] > 1 && (span[1 - plane] == 1 || plane == 0);
      add_track(n, plane, runs[plane], plane_end, tie, charge);
    }
    finish(n);
    return true;
  }

  void finish(Neutron& n) const {
    n.x = summarize(n.hits, 0);
    n.y = summarize(n.hits, 1);
    n.end_ticks = std::max(n.x.last, n.y.last);
  }

  std::uint32_t draw_span(std::uint32_t plane, std::uint32_t max) {
    const std::uint32_t lo = f_.min_span[plane];
    return lo + static_cast<std::uint32_t>(rng_.below(std::max(max, lo) - lo + 1));
  }

  std::uint32_t draw_panel() { return strips_.panels()[rng_.below(strips_.panels().size())]; }

  /// A single neutron the plugin must form, or (with --wide-fraction) one wider than MaxSpan
  /// on one plane, which it must reject (and count).
  Neutron single(std::uint64_t end) {
    Neutron n;
    const bool wide = chance(s_.wide_fraction);
    const std::uint32_t wide_plane = static_cast<std::uint32_t>(rng_.below(2));
    for (int attempt = 0; attempt < 1000; ++attempt) {
      std::array<std::uint32_t, 2> span{draw_span(0, max_span(0)), draw_span(1, max_span(1))};
      if (wide)
        span[wide_plane] = f_.max_span[wide_plane] + 1 + static_cast<std::uint32_t>(rng_.below(3));
      if (!draw_neutron(n, draw_panel(), span, end, 0, std::numeric_limits<std::uint64_t>::max()))
        continue;
      // With SplitMultiEvents a wide neutron (span >= 10) is first tried as a multi-event:
      // each plane is one part, X and Y carry the same charge, so the reference pairs the whole
      // planes (and the two empty parts, an empty event it skips), and the span cut rejects it.
      if (wide) n.kind = wide_plane == 0 ? "rejected_span_x" : "rejected_span_y";
      return n;
    }
    throw ConfigError(
        "--geometry: no panel has a run of strips for the spans; expected "
        "MinSpan..MaxSpan adjacent strips in both planes");
  }

  /// Two neutrons on one panel within the matching gap, their runs more than the split gap
  /// (10) apart on both planes, one carrying 1.6..2× the other's charge: the reference's
  /// splitAndStashEvent splits each plane at the gap and pairs the halves by charge. The pair
  /// is kept only if exactly one pairing matches (checked with the reference's rule).
  bool pair(std::uint64_t end, Neutron& a, Neutron& b) {
    const std::uint32_t panel = draw_panel();
    const std::array<std::uint32_t, 2> sa{draw_span(0, std::min(max_span(0), 4u)),
                                          draw_span(1, std::min(max_span(1), 4u))};
    const std::array<std::uint32_t, 2> sb{draw_span(0, std::min(max_span(0), 4u)),
                                          draw_span(1, std::min(max_span(1), 4u))};
    if (!draw_neutron(a, panel, sa, end, 0, std::numeric_limits<std::uint64_t>::max()))
      return false;
    const std::uint64_t qa = a.x.adc_sum;
    const std::uint64_t b_end = end + 1 + rng_.below(8);
    if (!draw_neutron(b, panel, sb, b_end, qa * 8 / 5 + 1, qa * 2)) return false;
    for (std::uint32_t plane = 0; plane < 2; ++plane) {
      const PlaneSummary& pa = plane == 0 ? a.x : a.y;
      const PlaneSummary& pb = plane == 0 ? b.x : b.y;
      const bool apart = pb.min > pa.max + kSplitGap || pa.min > pb.max + kSplitGap;
      if (!apart) return false;
    }
    // The halves are the lower and the higher run of each plane.
    const bool a_low_x = a.x.max < b.x.min, a_low_y = a.y.max < b.y.min;
    const std::uint64_t x1 = a_low_x ? a.x.adc_sum : b.x.adc_sum,
                        x2 = a_low_x ? b.x.adc_sum : a.x.adc_sum;
    const std::uint64_t y1 = a_low_y ? a.y.adc_sum : b.y.adc_sum,
                        y2 = a_low_y ? b.y.adc_sum : a.y.adc_sum;
    // The reference pairs the parts only when exactly one pairing holds and neither of the
    // other's matches does; the right pairing is a's parts together.
    const bool m11 = charges_match(f_, x1, y1), m22 = charges_match(f_, x2, y2);
    const bool m12 = charges_match(f_, x1, y2), m21 = charges_match(f_, x2, y1);
    const bool straight = m11 && m22 && !m12 && !m21;
    const bool crossed = m12 && m21 && !m11 && !m22;
    if (a_low_x == a_low_y ? !straight : !crossed) return false;
    // Each half must pass the span cuts on its own (it does: spans <= MaxSpan).
    a.kind = b.kind = "split";
    return true;
  }

  void run_pulse(std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    std::uint64_t noise_left = s_.noise_per_pulse;
    for (std::uint64_t i = 0; i < s_.neutrons_per_pulse; ++i) {
      const std::uint64_t tof =
          kFirstTofNs + static_cast<std::uint64_t>(kMaxTrackNs) + i * spacing_;
      const std::uint64_t end = ticks_of(pulse_ns + tof);
      batch_.clear();
      Neutron a, b;
      bool paired = false;
      if (f_.split && chance(s_.split_fraction)) {
        for (int attempt = 0; attempt < 100 && !paired; ++attempt) paired = pair(end, a, b);
      }
      if (paired) {
        record(a, pulse_ns);
        record(b, pulse_ns);
        ++split_pairs_;
      } else {
        record(single(end), pulse_ns);
      }
      if (noise_left != 0) {
        --noise_left;
        noise(ticks_of(pulse_ns + tof + spacing_ / 2));
      }
      send_batch(pulse_ns, prev_ns);
    }
    release_held(std::numeric_limits<std::uint64_t>::max(), pulse_ns, prev_ns);
    for (unsigned q = 0; q < packets_.queues(); ++q) {
      if (!packets_.empty(q)) send_queue(q, pulse_ns, prev_ns);
    }
  }

  /// The neutron's truth line and its hits into the batch to send.
  void record(const Neutron& n, std::uint64_t pulse_ns) {
    ++neutrons_;
    if (n.tie) ++ties_;
    const std::uint32_t pixel = pixel_of(f_, n.x.utpc, n.y.utpc);
    std::string kind = n.kind;
    // A strip beyond SizeX or SizeY (a file whose Offsets reach past them) has no pixel: the
    // plugin counts the event as rejected (events.rejected.pixel).
    if (pixel == 0 && (kind == "track" || kind == "split")) kind = "rejected_pixel";
    if (kind == "rejected_span_x") ++rejected_[0];
    if (kind == "rejected_span_y") ++rejected_[1];
    if (kind == "rejected_pixel") ++rejected_pixel_;
    if (kind == "track" || kind == "split") ++events_;
    for (const TrackHit& h : n.hits) batch_.push_back(Pending{n.panel, h});
    if (!truth_) return;
    truth_ << pulse_ns << ' ' << ns_of_ticks(n.end_ticks) - pulse_ns << ' ' << pixel << ' '
           << n.panel << ' ' << n.x.utpc << ' ' << n.y.utpc << ' ' << n.x.span << ' ' << n.y.span
           << ' ' << kind << '\n';
  }

  /// A noise hit halfway to the next neutron, one strip of one plane: alone in its time group,
  /// so never an event (the plugin counts it as an event with one plane only).
  void noise(std::uint64_t ticks) {
    const std::uint32_t panel = draw_panel();
    const auto plane = static_cast<std::uint32_t>(rng_.below(2));
    const std::vector<std::uint32_t>& cov = covered_[plane][panel];
    const auto adc = static_cast<std::uint16_t>(f_.min_adc + rng_.below(200));
    batch_.push_back(Pending{panel, TrackHit{plane, cov[rng_.below(cov.size())], ticks, adc}});
    ++noise_[plane];
  }

  struct Pending {
    std::uint32_t panel;
    TrackHit hit;
  };
  // A held-back readout (released in ticks) and the queue's packet it would have gone in.
  struct Held {
    std::uint64_t packet;
    vmm3a::Readout readout;
  };

  /// The batch's readouts in time order (the electronics' order), each held back with
  /// --delay-fraction.
  void send_batch(std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    std::stable_sort(batch_.begin(), batch_.end(),
                     [](const Pending& a, const Pending& b) { return a.hit.ticks < b.hit.ticks; });
    for (const Pending& p : batch_) add_readout(p, pulse_ns, prev_ns);
    if (!held_.empty() && !batch_.empty()) {
      release_held(batch_.front().hit.ticks, pulse_ns, prev_ns);
    }
  }

  vmm3a::Readout readout_of(const Pending& p) {
    const Strip s = strips_.at(p.panel, p.hit.plane, p.hit.coordinate);
    const HybridEntry& h = f_.hybrids[static_cast<std::size_t>(s.entry)];
    return vmm3a::Readout{static_cast<std::uint8_t>(2 * h.ring + rng_.below(2)),
                          static_cast<std::uint8_t>(h.fen),
                          vmm3a::kReadoutSize,
                          static_cast<std::uint32_t>(p.hit.ticks / kTicks),
                          static_cast<std::uint32_t>(p.hit.ticks % kTicks),
                          0,
                          p.hit.adc,
                          0,
                          0,
                          static_cast<std::uint8_t>(2 * h.hybrid + s.asic),
                          s.channel};
  }

  // A panel's readouts all go to one output queue (panel % queues): its time groups are formed
  // per queue, with the reorder window per queue.
  unsigned queue_of(std::uint32_t panel) const { return panel % packets_.queues(); }

  void add_readout(const Pending& p, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    const vmm3a::Readout r = readout_of(p);
    ++readouts_;
    const unsigned queue = queue_of(p.panel);
    const Held held{queue_packets_[queue], r};
    if (!held_.draw_and_hold(rng_, s_, queue, p.hit.ticks, held, ticks_of)) {
      append(queue, r, pulse_ns, prev_ns);
    }
  }

  void append(unsigned queue, const vmm3a::Readout& r, std::uint64_t pulse_ns,
              std::uint64_t prev_ns) {
    if (!packets_.empty(queue) && !packets_.fits(queue, vmm3a::kReadoutSize)) {
      send_queue(queue, pulse_ns, prev_ns);
    }
    vmm3a::write_readout(packets_.append(queue, vmm3a::kReadoutSize), r);
  }

  void release_held(std::uint64_t now_ticks, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    held_.release(now_ticks, [&](unsigned queue, const Held& h) {
      append(queue, h.readout, pulse_ns, prev_ns);
      if (queue_packets_[queue] != h.packet) ++delayed_across_;
    });
  }

  void send_queue(unsigned index, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    ++queue_packets_[index];
    const std::span<const std::uint8_t> packet = gen::finish_packet(
        packets_, index, pulse_ns, prev_ns, s_, vmm3a::kReadoutSize, rng_, shuffled_);
    stream_.send_data(index, packet, pulse_ns, prev_ns, rng_,
                      [&](unsigned queue) { write_corrupt(queue, pulse_ns); });
  }

  // The corrupt fault: a well-formed packet whose readouts are each broken in one known way,
  // counted by reason (readouts.errors.<reason> in efu).
  void write_corrupt(unsigned queue, std::uint64_t pulse_ns) {
    static constexpr const char* kReasons[] = {
        "readout_length",  "readout_fiber",         "readout_vmm",
        "readout_channel", "readout_time_fraction", "readout_adc_below_threshold"};
    const unsigned kinds = f_.min_adc > 0 ? 6 : 5;
    const std::uint64_t t = ticks_of(pulse_ns + 1000);
    const Pending first{strips_.panels().front(),
                        TrackHit{0, covered_[0][strips_.panels().front()].front(), t, 500}};
    for (int k = 0; k < 5; ++k) {
      const auto reason = static_cast<unsigned>(rng_.below(kinds));
      vmm3a::Readout r = readout_of(first);
      if (reason == 0) r.data_length = 19;
      if (reason == 1) r.fiber = 250;
      if (reason == 2) r.vmm = 23;  // hybrid 11: beyond the facility's hybrids 0..10
      if (reason == 3) r.channel = 64 + static_cast<std::uint8_t>(rng_.below(192));
      if (reason == 4) r.time_low = ess::kTicksPerSecond;
      if (reason == 5) r.otadc = static_cast<std::uint16_t>(f_.min_adc - 1);
      vmm3a::write_readout(packets_.append(queue, vmm3a::kReadoutSize), r);
      stream_.faults().count(kReasons[reason]);
    }
  }

  const Settings& s_;
  const NmxFile& f_;
  const StripMap& strips_;
  std::array<std::vector<std::vector<std::uint32_t>>, 2> covered_;  // [plane][panel]
  gen::Random rng_;
  gen::EssStream stream_;
  ess::PacketAssembler& packets_;  // stream_'s
  std::ofstream truth_;
  std::uint64_t spacing_ = 0;
  std::vector<Pending> batch_;
  gen::HeldReadouts<Held> held_;
  std::vector<std::uint8_t> shuffled_;
  std::uint64_t readouts_ = 0, neutrons_ = 0, events_ = 0, split_pairs_ = 0, ties_ = 0;
  std::uint64_t delayed_across_ = 0, rejected_pixel_ = 0;
  std::vector<std::uint64_t> queue_packets_;  // data packets sent per queue
  std::array<std::uint64_t, 2> rejected_{0, 0}, noise_{0, 0};
};

}  // namespace
}  // namespace efu::nmx_gen

int main(int argc, char** argv) {
  namespace gen = efu::gen;
  using efu::nmx_gen::Settings;
  Settings s;
  CLI::App app{"Simulated NMX neutron tracks as ESS VMM3a readout over UDP"};
  gen::add_destination_options(app, s);
  app.add_option("--geometry", s.geometry,
                 "The facility's NMX config JSON (nmx.json, mininmx.json, nmx_p0.json, "
                 "nmx_split.json)")
      ->required();
  gen::add_reorder_options(app, s);
  app.add_option("--split-fraction", s.split_fraction,
                 "With SplitMultiEvents in the config: this fraction of neutron slots carries two "
                 "neutrons that must be split (0..1)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--tie-fraction", s.tie_fraction,
                 "This fraction of neutrons has its two latest strips at the same time (the "
                 "uTPC tie rule decides)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--wide-fraction", s.wide_fraction,
                 "This fraction of neutrons spans MaxSpan+1..+3 strips on one plane: the plugin "
                 "must reject them (marked in the truth)")
      ->check(CLI::Range(0.0, 1.0));
  gen::add_pulse_options(app, s, /*min_size=*/52);
  app.add_option("--noise-per-pulse", s.noise_per_pulse,
                 "Single-strip noise hits per pulse (<= neutrons)");
  app.add_option("--adc-max", s.adc_max, "Largest ADC of a hit")
      ->check(CLI::Range(100, 1023))
      ->capture_default_str();
  gen::add_stream_options(app, s, "ESS output queues (a panel's readouts on panel % queues)",
                          "Write one line per neutron here: pulse_ns tof_ns pixel panel x y "
                          "span_x span_y kind",
                          efu::nmx_gen::kFaults);
  CLI11_PARSE(app, argc, argv);
  return gen::run_main(efu::nmx_gen::kProgram, [&] {
    gen::check_options(s);
    const efu::nmx_gen::NmxFile file = efu::nmx_gen::read_nmx_file(s.geometry);
    const efu::nmx_gen::StripMap strips(file);
    efu::nmx_gen::Generator generator(s, file, strips);
    generator.run();
    generator.write_summary();
    generator.print_summary();
  });
}
