// efu-cbm-gen: simulated beam-monitor readouts (CBM: EVENT_0D, EVENT_2D, IBM; and BEER) as ESS
// CBM readout over UDP, with the exact ground truth an end-to-end test checks efu's cbm plugin
// against: every ev44 event per source (pulse, TOF, pixel), and every da00 histogram per source
// and per published window (frame_time, signal, reference_time, frame_total, timestamp).
//
// The truth does not come from the plugin's pipeline. The generator reads the facility's config
// file with the plugin's loader (config.h, so that the topology has one meaning), draws readouts
// for the Topology[] entries, and works out with its own copy of the rules what efu must publish
// for them:
// - EVENT_0D into ev44: pixel = PixelOffset. EVENT_2D (and BEER): the reference's
//   ESSGeometry::pixel2D plus the offset, pixel = 1 + x + Width * y + PixelOffset.
// - IBM into ev44: the pixel id carries the normalised ADC, NADC / MCASum when
//   NormalizeIBMReadouts and MCASum != 0, else NADC.
// - da00 (EVENT_0D with value 1, IBM with the normalised ADC): a model of the reference's
//   DA00HistogramSerializer<int32, int32, uint64> as efu's TofHistogram documents it
//   (HistogramTruth below), written independently of it.
//
// A beam-monitor readout is one event: --neutrons-per-pulse is the readouts per pulse, spread
// over the Topology[] entries at random. What every ESS generator shares (options, pulses,
// sending, header faults, the summary) is in common/include/efu/gen/; this file is the CBM part:
// the config, the readouts, the truth, and the faults particular to CBM: the broken readouts of
// the corrupt fault, one kind per reason the plugin rejects a readout (--corrupt-kinds: ring,
// monitor_ring, fen, topology, type_mismatch, tof_high, ...), each with the counter it must land
// in, and packets whose pulse is too far from their previous pulse (--pulse-diff-fraction).
//
// Outputs: --ground-truth, one line per ev44 event "pulse_time_ns tof_ns pixel source";
// --histogram-truth, per da00 source its bin edges and every window it must publish, as JSON;
// --summary, the counts per source, per accepted type and per fault (readout_faults is keyed by
// efu's counter name).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cbm_readout.h"
#include "config.h"
#include "efu/errors.h"
#include "efu/ess/byte_reader.h"
#include "efu/ess/ess_time.h"
#include "efu/ess/packet_assembler.h"
#include "efu/gen/ess_stream.h"
#include "efu/gen/faults.h"
#include "efu/gen/generator_options.h"
#include "efu/gen/random.h"
#include "efu/gen/result_files.h"

namespace efu::cbmgen {
namespace {

constexpr const char* kProgram = "efu-cbm-gen";
constexpr std::uint8_t kWrongType = 0x40;  // TREX's: what a type fault writes
constexpr gen::Fault kFaults[] = {
    gen::Fault::kCookie,  gen::Fault::kTruncated, gen::Fault::kVersion, gen::Fault::kType,
    gen::Fault::kCorrupt, gen::Fault::kEmpty,     gen::Fault::kOversize};
constexpr std::int64_t kMaxI32 = std::numeric_limits<std::int32_t>::max();
// The earliest TOF drawn for a histogram: the ESS tick nearest to pulse + t is within 6 ns of it,
// so a readout this late is never before its pulse.
constexpr std::uint64_t kMinHistogramTofNs = 16;
// The ESS header's previous pulse time (high and low words), for the pulse_time_diff fault.
constexpr std::size_t kPrevPulseHighOffset = 18;
constexpr std::size_t kPrevPulseLowOffset = 22;

// --- The config ---------------------------------------------------------------------------

enum class Kind : std::uint8_t { k0D = 1, k2D = 2, kIbm = 3 };  // the readout's Type byte

struct Entry {
  std::uint8_t fen = 0;
  std::uint8_t channel = 0;
  Kind kind = Kind::k0D;
  bool da00 = false;
  std::string source;
  std::uint64_t pixel_offset = 0;
  std::uint32_t width = 0, height = 0;
  std::int32_t max_tof_bin = 0, bin_count = 0;
  std::uint32_t frames = 1;
  bool average = false;
};

struct Monitors {
  bool beer = false;
  std::uint64_t max_pulse_diff_ns = 5ULL * 71'428'571;
  std::uint64_t max_tof_ns = 20ULL * 71'428'571;
  std::uint32_t monitor_ring = 11, max_ring = 11, max_fen = 0;
  bool normalize = true;
  std::vector<Entry> entries;

  // The TOF limit a readout is held to: MaxTOFNS, at most what an int32 TOF holds.
  std::uint64_t tof_limit_ns() const { return std::min<std::uint64_t>(max_tof_ns, kMaxI32); }
  bool has(std::uint32_t fen, std::uint32_t channel) const {
    return std::any_of(entries.begin(), entries.end(),
                       [&](const Entry& e) { return e.fen == fen && e.channel == channel; });
  }
};

// The topology as the plugin reads it (config.h: one loader, one truth of what the file means),
// copied into the generator's own view of it.
Monitors load_monitors(const std::string& path) {
  const cbm::CbmConfig c = cbm::load_config_file(path);
  Monitors in;
  in.beer = c.instrument == cbm::Instrument::kBeer;
  in.max_pulse_diff_ns = c.max_pulse_time_diff_ns;
  in.max_tof_ns = c.max_tof_ns;
  in.monitor_ring = c.monitor_ring;
  in.max_ring = c.max_ring;
  in.max_fen = c.max_fen_id;
  in.normalize = c.normalize_ibm;
  for (const cbm::Monitor& m : c.monitors) {
    Entry e;
    e.fen = m.fen;
    e.channel = m.channel;
    e.kind = static_cast<Kind>(m.type);
    e.da00 = m.schema == cbm::Schema::kDa00;
    e.source = m.source;
    e.pixel_offset = m.pixel_offset;
    e.width = m.width;
    e.height = m.height;
    e.max_tof_bin = m.max_tof_bin;
    e.bin_count = m.bin_count;
    e.frames = m.aggregated_frames;
    e.average = m.aggregation == cbm::AggregationMode::kAverage;
    in.entries.push_back(std::move(e));
  }
  return in;
}

// --- The truth of a da00 source -------------------------------------------------------------

// One published da00 message.
struct Window {
  std::uint64_t timestamp_ns = 0;
  std::vector<std::int32_t> signal;
  std::vector<std::int32_t> reference_time;
  std::vector<std::uint64_t> frame_total;
};

// What the reference's DA00HistogramSerializer publishes for one source, worked out here on its
// own (TofHistogram's header states the same rules):
//   width = MaxTofBin / BinCount, edges[i] = i * width, a TOF t goes to bin t / width, dropped
//   when that is BinCount or more (beyond the period);
//   the first pulse only sets the reference; each later change of pulse ends a frame, and the
//   next frame's reference_time is the current one's plus (new pulse - old pulse), modulo 2^32
//   as int32, carried across windows; after AggregatedFrames frames the window is published
//   (timestamp: the last pulse of the window) unless all its bins are empty;
//   signal: per bin the sum, or the sum / count rounded towards 0; frame_total: per frame the
//   sum of the values binned in it. At stop the pending window is published (if not empty) with
//   the slots of frames that have not begun at 0.
class HistogramTruth {
 public:
  explicit HistogramTruth(const Entry& e)
      : width_(e.max_tof_bin / e.bin_count),
        average_(e.average),
        sums_(static_cast<std::size_t>(e.bin_count)),
        counts_(sums_.size()),
        offsets_(e.frames),
        totals_(e.frames) {}

  std::int32_t width() const { return width_; }
  std::size_t bins() const { return sums_.size(); }
  const std::vector<Window>& windows() const { return windows_; }

  void pulse(std::uint64_t pulse_ns) {
    if (!reference_) {
      reference_ = pulse_ns;
      return;
    }
    if (pulse_ns == *reference_) return;
    const auto carried = static_cast<std::uint32_t>(offsets_[slot_]) +
                         static_cast<std::uint32_t>(pulse_ns - *reference_);
    if (++slot_ == offsets_.size()) {
      if (!publish()) ++skipped_empty_;
      slot_ = 0;
      std::fill(offsets_.begin(), offsets_.end(), 0);
      std::fill(totals_.begin(), totals_.end(), 0);
    }
    offsets_[slot_] = static_cast<std::int32_t>(carried);
    totals_[slot_] = 0;
    reference_ = pulse_ns;
  }

  // True when the value lands in a bin, false when beyond the period (dropped).
  bool add(std::uint64_t tof_ns, std::uint32_t value) {
    const std::uint64_t bin = tof_ns / static_cast<std::uint64_t>(width_);
    if (bin >= sums_.size()) return false;
    sums_[bin] += value;
    ++counts_[bin];
    totals_[slot_] += value;
    return true;
  }

  void flush() { publish(); }
  // Windows that ended on a pulse change with every bin empty: not published.
  std::uint64_t skipped_empty() const { return skipped_empty_; }

 private:
  bool publish() {
    if (std::all_of(counts_.begin(), counts_.end(), [](std::uint64_t n) { return n == 0; })) {
      return false;
    }
    Window w{*reference_, {}, offsets_, totals_};
    for (std::size_t i = 0; i < sums_.size(); ++i) {
      const std::uint64_t v = average_ && counts_[i] != 0 ? sums_[i] / counts_[i] : sums_[i];
      w.signal.push_back(static_cast<std::int32_t>(v));  // below 2^31: check_value_range()
    }
    windows_.push_back(std::move(w));
    std::fill(sums_.begin(), sums_.end(), 0);
    std::fill(counts_.begin(), counts_.end(), 0);
    return true;
  }

  std::int32_t width_;
  bool average_;
  std::vector<std::uint64_t> sums_, counts_;
  std::vector<std::int32_t> offsets_;
  std::vector<std::uint64_t> totals_;
  std::size_t slot_ = 0;
  std::optional<std::uint64_t> reference_;
  std::vector<Window> windows_;
  std::uint64_t skipped_empty_ = 0;
};

// --- Broken readouts (the corrupt fault) ------------------------------------------------------

// Each kind is one reason the plugin rejects a readout, with the counter efu must count it in
// (docs/cbm.md "Counters").
enum class Broken : std::uint8_t {
  kLength,
  kFiber,
  kFenRange,
  kTimeFraction,
  kTypeInvalid,
  kRing,
  kMonitorRing,
  kFen,
  kTopology,
  kTypeMismatch,
  kXPos,
  kYPos,
  kTofHigh,
  kTofNegative
};

struct BrokenKind {
  Broken kind;
  const char* name;     // in --corrupt-kinds
  const char* counter;  // efu's counter of it
};

constexpr BrokenKind kBrokenKinds[] = {
    {Broken::kLength, "length", "readouts.errors.length"},
    {Broken::kFiber, "fiber", "readouts.errors.fiber"},
    {Broken::kFenRange, "fen_range", "readouts.errors.fen"},
    {Broken::kTimeFraction, "time_fraction", "readouts.errors.time_fraction"},
    {Broken::kTypeInvalid, "type", "readouts.errors.type"},
    {Broken::kRing, "ring", "readouts.errors.ring"},
    {Broken::kMonitorRing, "monitor_ring", "readouts.errors.monitor_ring"},
    {Broken::kFen, "fen", "readouts.errors.fen"},
    {Broken::kTopology, "topology", "readouts.errors.channel"},
    {Broken::kTypeMismatch, "type_mismatch", "readouts.errors.type_mismatch"},
    {Broken::kXPos, "xpos", "readouts.errors.xpos"},
    {Broken::kYPos, "ypos", "readouts.errors.ypos"},
    {Broken::kTofHigh, "tof_high", "readouts.errors.tof_too_large"},
    {Broken::kTofNegative, "tof_negative", "readouts.errors.tof_negative"},
};

const Entry* first_of(const Monitors& in, Kind kind) {
  for (const Entry& e : in.entries) {
    if (e.kind == kind) return &e;
  }
  return nullptr;
}

// A FEN <= MaxFENId with a channel no entry has, if there is one.
std::optional<std::pair<std::uint8_t, std::uint8_t>> free_channel(const Monitors& in) {
  for (std::uint32_t fen = 0; fen <= in.max_fen; ++fen) {
    for (std::uint32_t ch = 0; ch < 256; ++ch) {
      if (!in.has(fen, ch)) {
        return std::make_pair(static_cast<std::uint8_t>(fen), static_cast<std::uint8_t>(ch));
      }
    }
  }
  return std::nullopt;
}

// Why a kind cannot be made for this config ("" when it can).
std::string impossible(Broken k, const Monitors& in) {
  switch (k) {
    case Broken::kRing:
      return in.max_ring < cbm::kMaxRing ? "" : "MaxRing is the largest ring a fibre gives";
    case Broken::kMonitorRing:
      return in.max_ring > 0 ? "" : "MaxRing 0 leaves no ring but MonitorRing";
    case Broken::kFen:
      return in.max_fen < cbm::kMaxFen ? "" : "MaxFENId is the largest FEN";
    case Broken::kTopology:
      return free_channel(in) ? "" : "every channel of every FEN is in Topology";
    case Broken::kTypeMismatch:
      return !in.beer ? "" : "BEER refuses every type but EVENT_2D as invalid";
    case Broken::kXPos:
    case Broken::kYPos:
      return first_of(in, Kind::k2D) != nullptr ? "" : "the config has no EVENT_2D monitor";
    default:
      return "";
  }
}

// --corrupt-kinds: a comma list of kind names (all the config allows when empty).
std::vector<BrokenKind> parse_broken(const std::string& list, const Monitors& in) {
  std::vector<BrokenKind> kinds;
  if (list.empty()) {
    for (const BrokenKind& k : kBrokenKinds) {
      if (impossible(k.kind, in).empty()) kinds.push_back(k);
    }
    return kinds;
  }
  std::stringstream names(list);
  for (std::string name; std::getline(names, name, ',');) {
    const auto* k = std::find_if(std::begin(kBrokenKinds), std::end(kBrokenKinds),
                                 [&](const BrokenKind& b) { return name == b.name; });
    if (k == std::end(kBrokenKinds)) {
      throw ConfigError("--corrupt-kinds: '" + name + "' is not a kind; expected one of " +
                        "length, fiber, fen_range, time_fraction, type, ring, monitor_ring, fen, "
                        "topology, type_mismatch, xpos, ypos, tof_high, tof_negative");
    }
    if (const std::string why = impossible(k->kind, in); !why.empty()) {
      throw ConfigError("--corrupt-kinds: '" + name + "' cannot be made: " + why +
                        "; expected a kind this config can reject");
    }
    kinds.push_back(*k);
  }
  return kinds;
}

// --- The generator ----------------------------------------------------------------------------

struct Settings : gen::GeneratorOptions, gen::ReorderOptions {
  std::string geometry;
  std::string histogram_truth;
  std::string corrupt_kinds;
  std::uint32_t max_nadc = 65535;
  std::uint32_t max_mca_sum = 16;
  double pulse_diff_fraction = 0;
};

// One readout of a pulse, with what efu must make of it.
struct Drawn {
  cbm::CbmReadout readout;
  std::size_t entry;
  std::uint64_t tof_ns;  // as efu computes it from the ESS ticks
  std::uint32_t value;   // the event's pixel (ev44) or the histogram value (da00)
};

class Generator {
 public:
  Generator(const Settings& s, const Monitors& in)
      : s_(s),
        in_(in),
        rng_(s.seed),
        stream_(s, kProgram, in.beer ? cbm::kBeerDetectorType : cbm::kCbmDetectorType, kFaults,
                kWrongType),
        packets_(stream_.packets()),
        broken_(parse_broken(s.corrupt_kinds, in)),
        truth_(gen::open_ground_truth(s.ground_truth, "# pulse_time_ns tof_ns pixel source")) {
    for (const Entry& e : in.entries) {
      histograms_.push_back(e.da00 ? std::optional<HistogramTruth>(e) : std::nullopt);
    }
  }
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  void run() {
    check_value_range();
    check_tof_range();
    stream_.run_pulses([this](std::uint64_t, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
      run_pulse(pulse_ns, prev_ns);
    });
    for (auto& h : histograms_) {
      if (h) h->flush();
    }
    write_histogram_truth();
  }

  void write_summary() const {
    std::uint64_t windows = 0, skipped = 0;
    for (const auto& h : histograms_) {
      windows += h ? h->windows().size() : 0;
      skipped += h ? h->skipped_empty() : 0;
    }
    gen::SummaryJson json;
    stream_.add_sent(json)
        .number("readouts", readouts_)
        .number("events", events_)
        .number("histogram_binned", binned_)
        .number("histogram_windows", windows)
        .number("histogram_skipped_empty", skipped)
        .counts("accepted_by_type", accepted_by_type_)
        .counts("events_by_source", events_by_source_)
        .counts("binned_by_source", binned_by_source_)
        .counts("beyond_period_by_source", beyond_by_source_)
        .number("max_pulse_time_diff_ns", in_.max_pulse_diff_ns)
        .number("pulses_rejected", bad_.pulses)
        .number("packets_rejected_pulse", bad_.packets)
        .number("readouts_rejected_pulse", bad_.readouts)
        .counts("readout_faults", readout_faults_)
        .flag("exact_truth", true);
    stream_.add_errors(json).write(s_.summary);
  }

  void print_summary() const { stream_.print_summary(readouts_, events_ + binned_, 0, "noise"); }

 private:
  std::uint64_t below(std::uint64_t n) { return rng_.below(n); }
  unsigned queue() const { return in_.monitor_ring % packets_.queues(); }

  // Every bin's sum must stay an exact int32 (TofHistogram saturates there, the reference
  // overflows): at worst every readout of a window in one bin, each with the largest value.
  void check_value_range() const {
    for (const Entry& e : in_.entries) {
      if (!e.da00) continue;
      const std::uint64_t largest = e.kind == Kind::kIbm ? s_.max_nadc : 1;
      if (s_.neutrons_per_pulse * e.frames * largest > static_cast<std::uint64_t>(kMaxI32)) {
        throw ConfigError("--max-nadc: '" + std::to_string(s_.max_nadc) + "' with " +
                          std::to_string(s_.neutrons_per_pulse) + " readouts per pulse over " +
                          std::to_string(e.frames) + " AggregatedFrames of source '" + e.source +
                          "' may overflow an int32 bin; expected readouts * frames * max-nadc "
                          "below 2^31");
      }
    }
  }

  // ev44 readouts are drawn from kFirstTofNs over the pulse's neutron window; the TOF limit must
  // leave room for them.
  void check_tof_range() const {
    if (in_.tof_limit_ns() < gen::kFirstTofNs + 1000) {
      throw ConfigError("MaxTOFNS: " + std::to_string(in_.max_tof_ns) + " ns in '" + s_.geometry +
                        "' leaves no time for readouts; expected at least " +
                        std::to_string(gen::kFirstTofNs + 1000));
    }
  }

  void run_pulse(std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    // A packet whose pulse is further than MaxPulseTimeDiffNS from its previous one is refused
    // by efu's header check (parser.essheader.errors.pulse_time_diff): its readouts are sent but
    // are in no truth, and its pulse changes no histogram's reference.
    const ess::EssTime prev = ess::to_ess(prev_ns);
    bad_pulse_ = pulse_ns - ess::to_ns(prev.high, prev.low) > in_.max_pulse_diff_ns;
    if (bad_pulse_) ++bad_.pulses;
    std::vector<Drawn> drawn;
    for (std::uint64_t i = 0; i < s_.neutrons_per_pulse; ++i) drawn.push_back(draw(pulse_ns));
    // The electronics send a pulse's readouts in time order.
    std::stable_sort(drawn.begin(), drawn.end(),
                     [](const Drawn& a, const Drawn& b) { return a.tof_ns < b.tof_ns; });
    if (!drawn.empty() && !bad_pulse_) {
      for (auto& h : histograms_) {
        if (h) h->pulse(pulse_ns);
      }
    }
    for (const Drawn& d : drawn) {
      record(d, pulse_ns);
      append(d.readout, pulse_ns, prev_ns);
    }
    if (!packets_.empty(queue())) send_queue(pulse_ns, prev_ns);
  }

  // The TOF of a readout of entry `e`: a histogram's spans its TOF range and 5 % beyond it (so
  // that some readouts are beyond the period: readouts.errors.tof_beyond_period), an event's the
  // pulse's neutron window; both within the TOF limit.
  std::uint64_t draw_tof(const Entry& e) {
    const std::uint64_t limit = in_.tof_limit_ns();
    if (e.da00) {
      const std::uint64_t range = std::uint64_t{static_cast<std::uint32_t>(e.max_tof_bin)};
      const std::uint64_t top = std::min<std::uint64_t>(range + range / 20, limit + 1);
      return top > kMinHistogramTofNs ? kMinHistogramTofNs + below(top - kMinHistogramTofNs)
                                      : kMinHistogramTofNs;
    }
    return gen::kFirstTofNs + below(std::min(gen::kNeutronWindowNs, limit - gen::kFirstTofNs));
  }

  // An IBM readout's NADC and MCASum, and the normalised ADC efu takes from them.
  std::uint32_t draw_ibm(cbm::CbmReadout& r) {
    const auto nadc = static_cast<std::uint32_t>(below(std::uint64_t{s_.max_nadc} + 1));
    const auto sum = static_cast<std::uint8_t>(below(std::uint64_t{s_.max_mca_sum} + 1));
    r.set_ibm(nadc, sum);
    return in_.normalize && sum != 0 ? nadc / sum : nadc;
  }

  Drawn draw(std::uint64_t pulse_ns) {
    const std::size_t index = below(in_.entries.size());
    const Entry& e = in_.entries[index];
    const ess::EssTime t = ess::to_ess(pulse_ns + draw_tof(e));
    cbm::CbmReadout r;
    r.fiber = static_cast<std::uint8_t>(in_.monitor_ring * 2 + below(2));
    r.fen = e.fen;
    r.time_high = t.high;
    r.time_low = t.low;
    r.type = static_cast<std::uint8_t>(e.kind);
    r.channel = e.channel;
    r.adc = static_cast<std::uint16_t>(below(65536));  // unused by efu
    std::uint32_t value = 1;                           // a 0D histogram counts readouts
    if (e.kind == Kind::kIbm) value = draw_ibm(r);
    if (e.kind == Kind::k0D && !e.da00) value = static_cast<std::uint32_t>(e.pixel_offset);
    if (e.kind == Kind::k2D) {
      const auto x = static_cast<std::uint16_t>(below(e.width));
      const auto y = static_cast<std::uint16_t>(below(e.height));
      r.set_position(x, y);
      // ESSGeometry::pixel2D(x, y) = 1 + x + nx * y, then the entry's offset.
      value = static_cast<std::uint32_t>(1 + x + std::uint64_t{e.width} * y + e.pixel_offset);
    }
    return Drawn{r, index, ess::to_ns(t.high, t.low) - pulse_ns, value};
  }

  void record(const Drawn& d, std::uint64_t pulse_ns) {
    ++readouts_;
    if (bad_pulse_) {
      ++bad_.readouts;
      return;
    }
    const Entry& e = in_.entries[d.entry];
    const char* type = e.kind == Kind::k0D ? "event_0d" : e.kind == Kind::k2D ? "event_2d" : "ibm";
    if (!e.da00) {
      ++accepted_by_type_[type];
      ++events_;
      ++events_by_source_[e.source];
      if (truth_)
        truth_ << pulse_ns << ' ' << d.tof_ns << ' ' << d.value << ' ' << e.source << '\n';
      return;
    }
    if (histograms_[d.entry]->add(d.tof_ns, d.value)) {
      ++accepted_by_type_[type];
      ++binned_;
      ++binned_by_source_[e.source];
    } else {
      ++beyond_by_source_[e.source];
    }
  }

  void append(const cbm::CbmReadout& r, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    if (!packets_.empty(queue()) && !packets_.fits(queue(), cbm::kReadoutSize)) {
      send_queue(pulse_ns, prev_ns);
    }
    cbm::write_readout(packets_.append(queue(), cbm::kReadoutSize), r);
  }

  void send_queue(std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    const std::span<const std::uint8_t> packet = gen::finish_packet(
        packets_, queue(), pulse_ns, prev_ns, s_, cbm::kReadoutSize, rng_, shuffled_);
    if (bad_pulse_) ++bad_.packets;
    const bool pulse_diff =
        s_.pulse_diff_fraction > 0 && !bad_pulse_ && rng_.uniform(0, 1) < s_.pulse_diff_fraction;
    if (pulse_diff) pulse_diff_copy_.assign(packet.begin(), packet.end());
    stream_.send_data(queue(), packet, pulse_ns, prev_ns, rng_,
                      [&](unsigned q) { write_corrupt(q, pulse_ns, prev_ns); });
    if (pulse_diff) send_pulse_diff(pulse_ns);
  }

  // --pulse-diff-fraction: a copy of the data packet just sent whose previous pulse time is more
  // than MaxPulseTimeDiffNS before its pulse, so efu's header check refuses it whole
  // (parser.essheader.errors.pulse_time_diff) before it looks at the sequence number (a repeat)
  // or any readout: it changes no event, histogram or other counter.
  //   prev = pulse - MaxPulseTimeDiffNS - 1 us (on the ESS tick nearest to it, within 6 ns)
  void send_pulse_diff(std::uint64_t pulse_ns) {
    const std::uint64_t back = in_.max_pulse_diff_ns + 1000;
    if (back > pulse_ns) return;
    const ess::EssTime prev = ess::to_ess(pulse_ns - back);
    ess::store_u32(pulse_diff_copy_.data() + kPrevPulseHighOffset, prev.high);
    ess::store_u32(pulse_diff_copy_.data() + kPrevPulseLowOffset, prev.low);
    stream_.send(pulse_diff_copy_);
    stream_.faults().count("pulse_time_diff");
  }

  // The corrupt fault: a well-formed packet of 5 readouts, each broken in one way drawn from
  // --corrupt-kinds, each landing in one counter. In a pulse the header check refuses, the
  // packet is refused whole and none of its readouts is looked at.
  void write_corrupt(unsigned queue, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    if (bad_pulse_) stream_.faults().count("corrupt_rejected_pulse");
    for (int k = 0; k < 5; ++k) {
      const BrokenKind& kind = broken_[below(broken_.size())];
      cbm::write_readout(packets_.append(queue, cbm::kReadoutSize),
                         broken(kind.kind, pulse_ns, prev_ns));
      if (!bad_pulse_) ++readout_faults_[kind.counter];
    }
  }

  // A readout of the first entry 1 us after the pulse, then broken as `kind` says.
  cbm::CbmReadout broken(Broken kind, std::uint64_t pulse_ns, std::uint64_t prev_ns) const {
    const Entry* e = &in_.entries.front();
    if (kind == Broken::kXPos || kind == Broken::kYPos) e = first_of(in_, Kind::k2D);
    cbm::CbmReadout r;
    r.fiber = static_cast<std::uint8_t>(in_.monitor_ring * 2);
    r.fen = e->fen;
    r.type = static_cast<std::uint8_t>(e->kind);
    r.channel = e->channel;
    set_time(r, pulse_ns + 1000);
    if (e->kind == Kind::kIbm) r.set_ibm(100, 1);
    break_readout(kind, *e, r, pulse_ns, prev_ns);
    return r;
  }

  static void set_time(cbm::CbmReadout& r, std::uint64_t ns) {
    const ess::EssTime t = ess::to_ess(ns);
    r.time_high = t.high;
    r.time_low = t.low;
  }

  void break_readout(Broken kind, const Entry& e, cbm::CbmReadout& r, std::uint64_t pulse_ns,
                     std::uint64_t prev_ns) const {
    switch (kind) {
      case Broken::kLength:
        r.data_length = cbm::kReadoutSize - 1;
        break;
      case Broken::kFiber:
        r.fiber = cbm::kMaxFiber + 1;
        break;
      case Broken::kFenRange:
        r.fen = cbm::kMaxFen + 1;
        break;
      case Broken::kTimeFraction:
        r.time_low = ess::kTicksPerSecond;
        break;
      case Broken::kTypeInvalid:
        r.type = in_.beer ? 1 : cbm::kMaxType + 1;
        break;
      case Broken::kRing:
        r.fiber = static_cast<std::uint8_t>((in_.max_ring + 1) * 2);
        break;
      case Broken::kMonitorRing:
        r.fiber = static_cast<std::uint8_t>((in_.monitor_ring == 0 ? 1 : 0) * 2);
        break;
      case Broken::kFen:
        r.fen = static_cast<std::uint8_t>(in_.max_fen + 1);
        break;
      case Broken::kTopology:
        r.fen = free_channel(in_)->first;
        r.channel = free_channel(in_)->second;
        break;
      case Broken::kTypeMismatch:
        r.type = static_cast<std::uint8_t>(r.type % 3 + 1);
        break;
      case Broken::kXPos:
        r.set_position(static_cast<std::uint16_t>(e.width), 0);
        break;
      case Broken::kYPos:
        r.set_position(0, static_cast<std::uint16_t>(e.height));
        break;
      case Broken::kTofHigh:
        set_time(r, pulse_ns + in_.tof_limit_ns() + 1000);
        break;
      case Broken::kTofNegative:
        set_time(r, prev_ns - 1000);
        break;
    }
  }

  // --histogram-truth: per da00 source, its bins and every window it must publish, as JSON.
  void write_histogram_truth() const {
    if (s_.histogram_truth.empty()) return;
    std::ofstream out(s_.histogram_truth);
    if (!out)
      throw ConfigError("--histogram-truth: '" + s_.histogram_truth + "' cannot be written");
    out << "{\"sources\": {";
    bool first = true;
    for (std::size_t i = 0; i < in_.entries.size(); ++i) {
      if (!histograms_[i]) continue;
      out << (first ? "" : ", ") << '"' << in_.entries[i].source << "\": ";
      write_source(out, in_.entries[i], *histograms_[i]);
      first = false;
    }
    out << "}}\n";
  }

  template <typename T>
  static void write_array(std::ostream& out, const char* key, const std::vector<T>& values) {
    out << '"' << key << "\": [";
    for (std::size_t i = 0; i < values.size(); ++i) out << (i ? ", " : "") << values[i];
    out << ']';
  }

  static void write_source(std::ostream& out, const Entry& e, const HistogramTruth& h) {
    std::vector<std::int64_t> edges;
    for (std::size_t i = 0; i <= h.bins(); ++i) edges.push_back(std::int64_t{h.width()} * i);
    out << "{\"bin_count\": " << e.bin_count << ", \"aggregated_frames\": " << e.frames
        << ", \"aggregation\": \"" << (e.average ? "average" : "sum") << "\", ";
    write_array(out, "frame_time", edges);
    out << ", \"windows\": [";
    for (std::size_t i = 0; i < h.windows().size(); ++i) {
      const Window& w = h.windows()[i];
      out << (i ? ", " : "") << "{\"timestamp_ns\": " << w.timestamp_ns << ", ";
      write_array(out, "signal", w.signal);
      out << ", ";
      write_array(out, "reference_time", w.reference_time);
      out << ", ";
      write_array(out, "frame_total", w.frame_total);
      out << '}';
    }
    out << "]}";
  }

  const Settings& s_;
  const Monitors& in_;
  gen::Random rng_;
  gen::EssStream stream_;
  ess::PacketAssembler& packets_;  // stream_'s
  std::vector<BrokenKind> broken_;
  std::ofstream truth_;
  std::vector<std::optional<HistogramTruth>> histograms_;  // per entry, da00 ones only
  std::vector<std::uint8_t> shuffled_;
  std::vector<std::uint8_t> pulse_diff_copy_;  // send_pulse_diff()
  std::uint64_t readouts_ = 0, events_ = 0, binned_ = 0;
  std::map<std::string, std::uint64_t> accepted_by_type_, events_by_source_, binned_by_source_,
      beyond_by_source_, readout_faults_;
  // What was sent in pulses the header check refuses (run_pulse()).
  struct Rejected {
    std::uint64_t pulses = 0, packets = 0, readouts = 0;
  };
  bool bad_pulse_ = false;
  Rejected bad_;
};

}  // namespace
}  // namespace efu::cbmgen

int main(int argc, char** argv) {
  namespace gen = efu::gen;
  using efu::cbmgen::Settings;
  Settings s;
  CLI::App app{"Simulated beam-monitor (CBM, BEER) readouts as ESS CBM readout over UDP"};
  gen::add_destination_options(app, s);
  app.add_option("--geometry", s.geometry,
                 "The beam-monitor config (the facility's cbm or BEER file)")
      ->required();
  app.add_flag("--shuffle", s.shuffle, "Send the readouts of each packet in random order");
  gen::add_pulse_options(app, s, /*min_size=*/52);
  app.add_option("--max-nadc", s.max_nadc, "IBM readouts: largest NADC drawn (24 bits)")
      ->check(CLI::Range(0U, efu::cbm::kMaxNadc))
      ->capture_default_str();
  app.add_option("--max-mca-sum", s.max_mca_sum, "IBM readouts: MCASum drawn in 0..N")
      ->check(CLI::Range(0U, 255U))
      ->capture_default_str();
  app.add_option("--histogram-truth", s.histogram_truth,
                 "Write every da00 histogram efu must publish here, as JSON");
  app.add_option("--pulse-diff-fraction", s.pulse_diff_fraction,
                 "After this fraction of data packets, a copy of it whose previous pulse time is "
                 "beyond MaxPulseTimeDiffNS (efu refuses it: parser.essheader.errors."
                 "pulse_time_diff)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--corrupt-kinds", s.corrupt_kinds,
                 "The corrupt fault's broken readouts: a comma list of length, fiber, fen_range, "
                 "time_fraction, type, ring, monitor_ring, fen, topology, type_mismatch, xpos, "
                 "ypos, tof_high, tof_negative (default: every kind the config allows)");
  gen::add_stream_options(app, s, "ESS output queues (the readouts go to MonitorRing % queues)",
                          "Write one line per ev44 event here (pulse, TOF, pixel, source)",
                          efu::cbmgen::kFaults);
  CLI11_PARSE(app, argc, argv);
  return gen::run_main(efu::cbmgen::kProgram, [&] {
    gen::check_options(s);
    if (s.replay_pulses != 0 && !s.histogram_truth.empty()) {
      // A replay repeats pulse times and readouts the histogram truth lists once.
      throw efu::ConfigError("--histogram-truth: '" + s.histogram_truth +
                             "' with --replay-pulses; expected one of them (a replay repeats "
                             "what the truth lists once)");
    }
    const auto monitors = efu::cbmgen::load_monitors(s.geometry);
    efu::cbmgen::Generator generator(s, monitors);
    generator.run();
    generator.write_summary();
    generator.print_summary();
  });
}
