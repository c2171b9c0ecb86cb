// efu-trex-gen: simulated TREX (or LET) neutrons as ESS VMM3a readout over UDP, with a
// ground-truth file (pulse, TOF and pixel per neutron) that an end-to-end test checks efu's trex
// plugin against (docs/trex.md, "Generator (efu-trex-gen)").
//
// The ground truth does not come from the plugin's channel map. The generator works the other
// way round: it reads the facility's trex.json or let.json itself, draws where a neutron is seen
// (a vessel's unit, one of its wires, a run of adjacent grids), writes the fibre, FEN, VMM and
// channel the electronics send for those wires and grids (the inverse of the ICD's equations,
// written out below), and numbers the pixel from the same wire and grids with the facility's own
// rules. A mistake on either side shows up as a wrong pixel in the end-to-end test.
//
// What every ESS generator shares (options, pulses, sending, header faults, the summary) is in
// common/include/efu/gen/; this file is the TREX part: the instrument file, the neutrons, the
// reordering and delays, and the corrupt-readout fault.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <span>
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
#include "efu/vmm3a/hybrid_map.h"
#include "efu/vmm3a/readout.h"

namespace efu::trexgen {
namespace {

constexpr const char* kProgram = "efu-trex-gen";
constexpr std::uint8_t kTrexType = 0x40;   // the facility's DetectorType TREX (LET's files too)
constexpr std::uint8_t kWrongType = 0x44;  // NMX's: what a type fault writes
constexpr gen::Fault kFaults[] = {
    gen::Fault::kCookie,  gen::Fault::kTruncated, gen::Fault::kVersion, gen::Fault::kType,
    gen::Fault::kCorrupt, gen::Fault::kEmpty,     gen::Fault::kOversize};

// --- The instrument file --------------------------------------------------------------------
// A vessel's wires stand in 2 columns of 6 x positions, 16 deep (z); each column is read by one
// (Ring, FEN), which this file calls a unit: its wire hybrid (96 wires) and its grid hybrids.
constexpr std::uint32_t kDepth = 16;
constexpr std::uint32_t kColumnWidth = 6;
constexpr std::uint32_t kWiresPerUnit = kDepth * kColumnWidth;
constexpr std::uint32_t kLongGrids = 140;
constexpr std::uint32_t kShortGrids = 51;
constexpr std::uint32_t kMaxGridsPerNeutron = 16;

enum class Layout : std::uint8_t { kTrex, kLet };

struct Vessel {
  std::uint32_t grids = 0;
  bool rotated = false;
  bool short_vessel = false;
  std::int64_t x_offset = 0;
  std::int64_t y_offset = 0;
  std::uint16_t min_adc = 0;
};

struct Unit {
  std::uint32_t ring = 0;
  std::uint32_t fen = 0;
  std::size_t vessel = 0;
  std::uint32_t hybrids = 0;  // bit h: hybrid h of this (Ring, FEN) is in Config[]
  std::int64_t grid_lo = 0;   // grids grid_lo..grid_hi have their y inside SizeY
  std::int64_t grid_hi = -1;
  std::vector<std::uint8_t> wires;  // the unit's wires whose x and z are inside SizeX, SizeZ
  std::uint32_t grids = 0;          // all its grids (the vessel's NumGrids, at most the wiring's)
};

struct Instrument {
  std::string path;
  Layout layout = Layout::kTrex;
  std::uint32_t size_x = 384, size_y = 140, size_z = 16;
  std::uint32_t span_cut = 3;
  std::uint64_t max_pulse_time_ns = 5 * 71'428'571ULL;
  std::uint64_t time_gap_ns = 500;  // max(MaxClusteringTimeGap, MaxMatchingTimeGap)
  std::vector<Vessel> vessels;
  std::vector<std::string> vessel_ids;
  std::vector<Unit> units;
  std::vector<std::size_t> usable;  // units a neutron can be drawn in, inside the pixel volume
  std::vector<std::size_t> wired;   // units with their wire and grid hybrids (--outside-fraction)
};

struct Channel {
  std::uint8_t vmm;
  std::uint8_t channel;
};

// The wire hybrid of a unit: TREX's hybrid 0, LET's hybrid 1.
std::uint32_t wire_hybrid(Layout l) { return l == Layout::kTrex ? 0 : 1; }

// The hybrids a unit's grids are on: a full-length vessel's on hybrids 1 and 2; a short vessel's
// on one, TREX's hybrid 1 and LET's hybrid 0 (bits).
std::uint32_t grid_hybrids(Layout l, bool short_vessel) {
  if (short_vessel) return l == Layout::kTrex ? 0b010U : 0b001U;
  return 0b110U;
}

// The ICD numbers a unit's wires w = asic * 64 + channel - 32 on the wire hybrid's two ASICs
// (asic 0: w 0..31 on channels 32..63; asic 1: w 32..95 on channels 0..63), so
//   asic = (w + 32) / 64,  channel = (w + 32) % 64.
// LET's wire boards swap each even channel with the odd one beside it: channel ^ 1.
Channel wire_channel(Layout l, std::uint32_t w) {
  const std::uint32_t asic = (w + 32) / 64;
  std::uint32_t channel = (w + 32) % 64;
  if (l == Layout::kLet) channel ^= 1U;
  return {static_cast<std::uint8_t>(wire_hybrid(l) * 2 + asic), static_cast<std::uint8_t>(channel)};
}

// A full-length vessel's grids g = (2 * hybrid + asic - 2) * 64 + channel - 58 (g 0..5: hybrid 1
// asic 0 channels 58..63; 6..69: hybrid 1 asic 1; 70..133: hybrid 2 asic 0; 134..139: hybrid 2
// asic 1 channels 0..5), so with k = (g + 58) / 64:
//   VMM = 2 * hybrid + asic = k + 2,  channel = (g + 58) % 64.
// A short vessel's grid g is channel g (0..50) of asic 0 of its grid hybrid.
Channel grid_channel(Layout l, bool short_vessel, std::uint32_t g) {
  if (short_vessel) {
    const std::uint32_t hybrid = l == Layout::kTrex ? 1 : 0;
    return {static_cast<std::uint8_t>(hybrid * 2), static_cast<std::uint8_t>(g)};
  }
  return {static_cast<std::uint8_t>((g + 58) / 64 + 2), static_cast<std::uint8_t>((g + 58) % 64)};
}

// Which column of its vessel a unit reads: TREX's odd FENs and LET's even rings the second.
std::uint32_t column_of(Layout l, std::uint32_t ring, std::uint32_t fen) {
  return l == Layout::kTrex ? fen % 2 : (ring % 2 == 0 ? 1 : 0);
}

// x of wire w of a unit: across the vessel xv = 6 * column + w / 16 (0..11); a rotated vessel
// counts across the other way (11 - xv); XOffset places the vessel:
//   x = (rotated ? 11 - xv : xv) + XOffset.
std::int64_t wire_x(Layout l, const Unit& u, const Vessel& v, std::uint32_t w) {
  const std::int64_t across = kColumnWidth * column_of(l, u.ring, u.fen) + w / kDepth;
  return (v.rotated ? 2 * kColumnWidth - 1 - across : across) + v.x_offset;
}

// z of wire w: its depth, w % 16.
std::int64_t wire_z(std::uint32_t w) { return w % kDepth; }

// y of grid g: y = YOffset + g, or YOffset - g in a rotated vessel (its grids counted downwards).
std::int64_t grid_y(const Vessel& v, std::uint32_t g) {
  return v.rotated ? v.y_offset - g : v.y_offset + g;
}

// The facility's 3D pixel (ESSGeometry pixel3D), x fastest, 0 outside the volume:
//   1 + x + SizeX * (y + SizeY * z)
std::uint64_t pixel(const Instrument& in, std::uint64_t x, std::uint64_t y, std::uint64_t z) {
  if (x >= in.size_x || y >= in.size_y || z >= in.size_z) return 0;
  return 1 + x + in.size_x * (y + in.size_y * z);
}

// The centre of mass of the grids, rounded half up as the facility's std::round:
//   y = floor((2 * sum(adc * y) + sum(adc)) / (2 * sum(adc))).
std::uint64_t grid_centre(const std::uint16_t* y, const std::uint16_t* adc, std::uint32_t n) {
  std::uint64_t weighted = 0, sum = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    weighted += y[i] * adc[i];
    sum += adc[i];
  }
  return (2 * weighted + sum) / (2 * sum);
}

void load_vessels(const JsonNode& root, std::uint16_t default_min_adc, Instrument& in) {
  const JsonNode vessels = root.at("Vessel_Config");
  if (!vessels.is_object()) vessels.fail("expected an object of vessels by id");
  for (const auto& item : vessels.json().items()) {
    const JsonNode node = vessels.at(item.key());
    Vessel v;
    v.grids = static_cast<std::uint32_t>(node.get_int("NumGrids", 1, kLongGrids));
    v.rotated = node.get_bool("Rotation");
    v.short_vessel = node.get_bool_or("Short", false);
    v.x_offset = node.get_int_or("XOffset", 0, 0, 65535);
    v.y_offset = node.get_int_or("YOffset", 0, 0, 65535);
    v.min_adc = static_cast<std::uint16_t>(node.get_int_or("MinADC", default_min_adc, 0, 1023));
    if (v.short_vessel && v.grids > kShortGrids) {
      node.at("NumGrids")
          .fail(std::to_string(v.grids) + " grids in a short vessel; expected 1.." +
                std::to_string(kShortGrids));
    }
    in.vessels.push_back(v);
    in.vessel_ids.push_back(item.key());
  }
}

std::size_t vessel_index(const Instrument& in, const JsonNode& entry) {
  const std::string id = entry.get_string("VesselId");
  const auto it = std::find(in.vessel_ids.begin(), in.vessel_ids.end(), id);
  if (it == in.vessel_ids.end()) {
    entry.at("VesselId").fail("'" + id + "' is not in Vessel_Config; expected one of its ids");
  }
  return static_cast<std::size_t>(it - in.vessel_ids.begin());
}

// Config[] entries, gathered per (Ring, FEN).
void load_units(const JsonNode& root, Instrument& in) {
  for (const JsonNode& entry : root.at("Config").elements(1)) {
    const auto ring = static_cast<std::uint32_t>(entry.get_int("Ring", 0, vmm3a::kMaxRing));
    const auto fen = static_cast<std::uint32_t>(entry.get_int("FEN", 0, vmm3a::kMaxFen));
    const auto hybrid = static_cast<std::uint32_t>(entry.get_int("Hybrid", 0, vmm3a::kMaxHybrid));
    const std::size_t vessel = vessel_index(in, entry);
    auto unit = std::find_if(in.units.begin(), in.units.end(),
                             [&](const Unit& u) { return u.ring == ring && u.fen == fen; });
    if (unit == in.units.end()) {
      in.units.push_back(Unit{ring, fen, vessel, 0, 0, -1, {}});
      unit = in.units.end() - 1;
    }
    if (unit->vessel != vessel) {
      entry.at("VesselId")
          .fail("Ring " + std::to_string(ring) + " FEN " + std::to_string(fen) +
                " is already in vessel '" + in.vessel_ids[unit->vessel] +
                "'; expected one vessel per (Ring, FEN)");
    }
    if ((unit->hybrids >> hybrid & 1U) != 0) {
      entry.at("Hybrid").fail(std::to_string(hybrid) + " is used twice on Ring " +
                              std::to_string(ring) + " FEN " + std::to_string(fen) +
                              "; expected each hybrid once");
    }
    unit->hybrids |= 1U << hybrid;
  }
}

// Where in a unit a neutron can be seen with its pixel inside SizeX x SizeY x SizeZ (every one of
// its grids' y too): the facility's files leave some out (trex.json's SizeY is 51, LET's rotated
// vessel has YOffset 0), and the plugin rejects those.
void place_unit(Instrument& in, Unit& u) {
  const Vessel& v = in.vessels[u.vessel];
  const std::uint32_t grids = std::min(v.grids, v.short_vessel ? kShortGrids : kLongGrids);
  u.grids = grids;
  for (std::uint32_t g = 0; g < grids; ++g) {
    const std::int64_t y = grid_y(v, g);
    if (y < 0 || y >= in.size_y) continue;
    if (u.grid_hi < u.grid_lo) u.grid_lo = g;
    u.grid_hi = g;
  }
  for (std::uint32_t w = 0; w < kWiresPerUnit; ++w) {
    if (wire_x(in.layout, u, v, w) < in.size_x && wire_z(w) < in.size_z) {
      u.wires.push_back(static_cast<std::uint8_t>(w));
    }
  }
  const std::uint32_t needed =
      (1U << wire_hybrid(in.layout)) | grid_hybrids(in.layout, v.short_vessel);
  if ((u.hybrids & needed) != needed) return;
  const auto index = static_cast<std::size_t>(&u - in.units.data());
  in.wired.push_back(index);
  if (u.grid_hi >= u.grid_lo && !u.wires.empty()) in.usable.push_back(index);
}

// The grid-span cut the file gives: MaxGridsSpan (trex.json), or MaxGridsPerEvent (let.json's
// name for it), else the facility's 3.
std::uint32_t file_span_cut(const JsonNode& root) {
  const char* key = root.has("MaxGridsSpan") ? "MaxGridsSpan" : "MaxGridsPerEvent";
  return static_cast<std::uint32_t>(root.get_int_or(key, 3, 1, 65535));
}

Instrument load_instrument(const std::string& path, std::uint32_t span_cut) {
  const JsonDocument doc = JsonDocument::from_file(path, "trex config");
  const JsonNode root = doc.root();
  Instrument in;
  in.path = path;
  const std::string detector = root.get_string("Detector");
  if (detector != "TREX") root.at("Detector").fail("'" + detector + "'; expected TREX");
  const std::string geometry = root.get_string("InstrumentGeometry");
  if (geometry != "TREX" && geometry != "LET") {
    root.at("InstrumentGeometry").fail("'" + geometry + "'; expected TREX or LET");
  }
  in.layout = geometry == "TREX" ? Layout::kTrex : Layout::kLet;
  in.size_x = static_cast<std::uint32_t>(root.get_int_or("SizeX", 384, 1, 65535));
  in.size_y = static_cast<std::uint32_t>(root.get_int_or("SizeY", 140, 1, 65535));
  in.size_z = static_cast<std::uint32_t>(root.get_int_or("SizeZ", 16, 1, 65535));
  in.span_cut = span_cut != 0 ? span_cut : file_span_cut(root);
  in.time_gap_ns =
      static_cast<std::uint64_t>(std::max(root.get_int_or("MaxClusteringTimeGap", 500, 0, 65535),
                                          root.get_int_or("MaxMatchingTimeGap", 500, 0, 65535)));
  in.max_pulse_time_ns = static_cast<std::uint64_t>(root.get_int_or(
      "MaxPulseTimeNS", static_cast<std::int64_t>(in.max_pulse_time_ns), 1, 0xFFFF'FFFFLL));
  load_vessels(root, static_cast<std::uint16_t>(root.get_int_or("DefaultMinADC", 50, 0, 1023)), in);
  load_units(root, in);
  for (Unit& u : in.units) place_unit(in, u);
  if (in.usable.empty()) {
    throw ConfigError("trex config '" + path +
                      "': /Config: no (Ring, FEN) has its wire and grid hybrids and a pixel inside "
                      "SizeX x SizeY x SizeZ; expected at least one");
  }
  return in;
}

// --- The generator ----------------------------------------------------------------------------

struct Settings : gen::GeneratorOptions, gen::ReorderOptions {
  std::string geometry;
  std::uint64_t jitter_ns = 100;
  std::uint64_t min_spacing_ns = 2000;
  std::uint16_t adc_min = 100;
  std::uint32_t max_grids = 3;
  std::uint32_t span_cut = 0;  // 0: the file's cut (file_span_cut())
  double outside_fraction = 0;
};

class Generator {
 public:
  Generator(const Settings& s, const Instrument& in)
      : s_(s),
        in_(in),
        rng_(s.seed),
        stream_(s, kProgram, kTrexType, kFaults, kWrongType),
        packets_(stream_.packets()),
        truth_(gen::open_ground_truth(s.ground_truth,
                                      "# pulse_time_ns tof_ns pixel ring fen x y z grids")) {}
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  void run() {
    spacing_ = gen::neutron_spacing_ns(s_.neutrons_per_pulse);
    check_time_gap();
    gen::check_neutron_spacing(s_.neutrons_per_pulse, spacing_, s_.min_spacing_ns,
                               " (--min-spacing-ns " + std::to_string(s_.min_spacing_ns) + ")");
    stream_.run_pulses([this](std::uint64_t, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
      run_pulse(pulse_ns, prev_ns);
    });
  }

  // A neutron's hits must chain within the file's time gap, and a noise hit (halfway to the next
  // neutron) must be further than the gap from both neutrons, or the truth would not be exact.
  void check_time_gap() const {
    if (s_.jitter_ns > in_.time_gap_ns) {
      throw ConfigError("--jitter-ns: '" + std::to_string(s_.jitter_ns) +
                        "' is more than the time gap " + std::to_string(in_.time_gap_ns) +
                        " ns of '" + in_.path + "'; expected at most that");
    }
    if (spacing_ / 2 <= s_.jitter_ns + in_.time_gap_ns) {
      throw ConfigError("--neutrons-per-pulse: '" + std::to_string(s_.neutrons_per_pulse) +
                        "' spaces neutrons " + std::to_string(spacing_) +
                        " ns apart; expected more than 2 * (--jitter-ns + the time gap " +
                        std::to_string(in_.time_gap_ns) + " ns of '" + in_.path + "')");
    }
  }

  void write_summary() const {
    gen::SummaryJson json;
    stream_.add_sent(json)
        .number("readouts", readouts_)
        .number("neutrons", neutrons_)
        .number("rejected_grid_span", rejected_span_)
        .number("rejected_pixel", rejected_pixel_)
        .number("grid_span_cut", in_.span_cut)
        .number("noise_wire", noise_[0])
        .number("noise_grid", noise_[1])
        .number("delayed", held_.held())
        .number("max_pulse_time_ns", in_.max_pulse_time_ns)
        .number("pulses_rejected", bad_.pulses)
        .number("packets_rejected_pulse", bad_.packets)
        .number("readouts_rejected_pulse", bad_.readouts)
        .number("neutrons_rejected_pulse", bad_.neutrons)
        .number("noise_rejected_pulse", bad_.noise)
        .flag("exact_truth", true);
    stream_.add_errors(json).write(s_.summary);
  }

  void print_summary() const {
    stream_.print_summary(readouts_, neutrons_ + rejected_span_ + rejected_pixel_ + bad_.neutrons,
                          noise_[0] + noise_[1] + bad_.noise, "noise hits");
  }

 private:
  std::uint64_t below(std::uint64_t n) { return rng_.below(n); }

  // A unit's readouts go to the output queue of its ring, as on the instrument.
  unsigned queue_of(const Unit& u) const { return u.ring % packets_.queues(); }

  void append(unsigned queue, const vmm3a::Readout& r, std::uint64_t pulse_ns,
              std::uint64_t prev_ns) {
    if (!packets_.empty(queue) && !packets_.fits(queue, vmm3a::kReadoutSize)) {
      send_queue(queue, pulse_ns, prev_ns);
    }
    vmm3a::write_readout(packets_.append(queue, vmm3a::kReadoutSize), r);
  }

  // One readout of a unit's channel. The fibre is either of the ring's two (ring = fibre / 2);
  // BC and TDC are noise (efu uses neither without a calibration) and so is the over-threshold
  // bit above the 10-bit ADC.
  void add_readout(const Unit& u, Channel c, std::uint16_t adc, std::uint64_t time_ns,
                   std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    const ess::EssTime t = ess::to_ess(time_ns);
    const auto otadc =
        static_cast<std::uint16_t>(adc | (below(2) != 0 ? vmm3a::kOverThresholdBit : 0));
    const vmm3a::Readout r{static_cast<std::uint8_t>(u.ring * 2 + below(2)),
                           static_cast<std::uint8_t>(u.fen),
                           vmm3a::kReadoutSize,
                           t.high,
                           t.low,
                           static_cast<std::uint16_t>(below(4096)),
                           otadc,
                           0,
                           static_cast<std::uint8_t>(below(256)),
                           c.vmm,
                           c.channel};
    ++readouts_;
    if (bad_pulse_) ++bad_.readouts;
    const unsigned queue = queue_of(u);
    if (!held_.draw_and_hold(rng_, s_, queue, time_ns, r)) append(queue, r, pulse_ns, prev_ns);
  }

  void release_held(std::uint64_t now_ns, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    held_.release(now_ns, [&](unsigned queue, const vmm3a::Readout& r) {
      append(queue, r, pulse_ns, prev_ns);
    });
  }

  std::uint16_t draw_adc(const Vessel& v) {
    const std::uint16_t lo = std::max(s_.adc_min, v.min_adc);
    return static_cast<std::uint16_t>(lo + below(1024U - lo));
  }

  // Where a neutron is seen: a unit, one of its wires, `grids` adjacent grids from first_grid.
  struct Place {
    const Unit* unit;
    std::uint32_t wire;
    std::uint32_t first_grid;
    std::uint32_t grids;
  };

  // Inside the pixel volume (usually), or with --outside-fraction anywhere in a wired unit.
  Place draw_place() {
    if (s_.outside_fraction > 0 && rng_.uniform(0, 1) < s_.outside_fraction) {
      const Unit& u = in_.units[in_.wired[below(in_.wired.size())]];
      const auto n = static_cast<std::uint32_t>(1 + below(std::min(s_.max_grids, u.grids)));
      return Place{&u, static_cast<std::uint32_t>(below(kWiresPerUnit)),
                   static_cast<std::uint32_t>(below(u.grids - n + 1)), n};
    }
    const Unit& u = in_.units[in_.usable[below(in_.usable.size())]];
    const auto range = static_cast<std::uint32_t>(u.grid_hi - u.grid_lo + 1);
    const auto n = static_cast<std::uint32_t>(1 + below(std::min(s_.max_grids, range)));
    return Place{&u, u.wires[below(u.wires.size())],
                 static_cast<std::uint32_t>(u.grid_lo + below(range - n + 1)), n};
  }

  // One neutron at t0: one wire (x, z) and n adjacent grids (y) of a unit. One of its hits, the
  // wire or a grid, is at t0; the others follow within jitter_ns, so the event time (the earliest
  // hit) is t0, as the ESS clock ticks it.
  void neutron(std::uint64_t t0, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    const Place p = draw_place();
    const Vessel& v = in_.vessels[p.unit->vessel];
    const std::uint64_t prompt = below(p.grids + 1);  // 0: the wire; k: grid k - 1
    auto later = [&](std::uint64_t k) { return k == prompt ? t0 : t0 + below(s_.jitter_ns + 1); };
    add_readout(*p.unit, wire_channel(in_.layout, p.wire), draw_adc(v), later(0), pulse_ns,
                prev_ns);
    std::array<std::uint16_t, kMaxGridsPerNeutron> y{};
    std::array<std::uint16_t, kMaxGridsPerNeutron> adc{};
    for (std::uint32_t k = 0; k < p.grids; ++k) {
      // The reference's uint16_t: a rotated grid below YOffset wraps to 65536 - (g - YOffset).
      y[k] = static_cast<std::uint16_t>(grid_y(v, p.first_grid + k));
      adc[k] = draw_adc(v);
      add_readout(*p.unit, grid_channel(in_.layout, v.short_vessel, p.first_grid + k), adc[k],
                  later(k + 1), pulse_ns, prev_ns);
    }
    if (bad_pulse_) {
      ++bad_.neutrons;
      return;
    }
    record(p, t0, pulse_ns, y.data(), adc.data());
  }

  // What the plugin must make of a neutron, on the reference's 16-bit coordinates: over the
  // grid-span cut (max - min + 1 of the grids' y), outside the pixel volume, or the event whose
  // pulse, TOF and pixel the ground truth lists.
  void record(const Place& p, std::uint64_t t0, std::uint64_t pulse_ns, const std::uint16_t* y,
              const std::uint16_t* adc) {
    const auto [low, high] = std::minmax_element(y, y + p.grids);
    if (std::uint32_t{*high} - *low + 1 > in_.span_cut) {
      ++rejected_span_;
      return;
    }
    const Vessel& v = in_.vessels[p.unit->vessel];
    const auto xz = static_cast<std::uint16_t>(kDepth * wire_x(in_.layout, *p.unit, v, p.wire) +
                                               wire_z(p.wire));
    const std::uint64_t x = xz / kDepth, z = xz % kDepth, yc = grid_centre(y, adc, p.grids);
    const std::uint64_t id = pixel(in_, x, yc, z);
    if (id == 0) {
      ++rejected_pixel_;
      return;
    }
    ++neutrons_;
    if (!truth_) return;
    const ess::EssTime t = ess::to_ess(t0);
    truth_ << pulse_ns << ' ' << ess::to_ns(t.high, t.low) - pulse_ns << ' ' << id << ' '
           << p.unit->ring << ' ' << p.unit->fen << ' ' << x << ' ' << yc << ' ' << z << ' '
           << p.grids << '\n';
  }

  // A noise hit: one wire or one grid alone in its time group, so never an event.
  void noise(std::uint64_t time_ns, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    const Unit& u = in_.units[in_.usable[below(in_.usable.size())]];
    const Vessel& v = in_.vessels[u.vessel];
    const bool wire = below(2) == 0;
    const Channel c =
        wire ? wire_channel(in_.layout, u.wires[below(u.wires.size())])
             : grid_channel(
                   in_.layout, v.short_vessel,
                   static_cast<std::uint32_t>(
                       u.grid_lo + below(static_cast<std::uint64_t>(u.grid_hi - u.grid_lo + 1))));
    add_readout(u, c, draw_adc(v), time_ns, pulse_ns, prev_ns);
    ++(bad_pulse_ ? bad_.noise : noise_[wire ? 0 : 1]);
  }

  void run_pulse(std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    // The file's MaxPulseTimeNS rejects a packet whose pulse is further than that from its previous
    // pulse (parser.essheader.errors.pulse_time_diff). trex.json's 71428570 ns is shorter than
    // the 14 Hz period, so the first pulse (its previous one a whole period back) and every pulse
    // whose ESS ticks fall a period or more apart are rejected as efu's header check, like the
    // reference's, says: their neutrons are sent but are not in the ground truth. The times are
    // those the header carries, in ESS ticks (the first pulse's previous one is not on a tick).
    const ess::EssTime prev = ess::to_ess(prev_ns);
    bad_pulse_ = pulse_ns - ess::to_ns(prev.high, prev.low) > in_.max_pulse_time_ns;
    if (bad_pulse_) ++bad_.pulses;
    std::uint64_t noise_left = s_.noise_per_pulse;
    for (std::uint64_t i = 0; i < s_.neutrons_per_pulse; ++i) {
      const std::uint64_t t0 = pulse_ns + gen::kFirstTofNs + i * spacing_;
      neutron(t0, pulse_ns, prev_ns);
      // Halfway to the next neutron: further than any time gap from both.
      if (noise_left != 0) {
        --noise_left;
        noise(t0 + spacing_ / 2, pulse_ns, prev_ns);
      }
      if (!held_.empty()) release_held(t0, pulse_ns, prev_ns);
    }
    // Whatever is still held goes out with the last packets of the pulse.
    release_held(std::numeric_limits<std::uint64_t>::max(), pulse_ns, prev_ns);
    for (unsigned q = 0; q < packets_.queues(); ++q) {
      if (!packets_.empty(q)) send_queue(q, pulse_ns, prev_ns);
    }
  }

  void send_queue(unsigned queue, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    const std::span<const std::uint8_t> packet = gen::finish_packet(
        packets_, queue, pulse_ns, prev_ns, s_, vmm3a::kReadoutSize, rng_, shuffled_);
    if (bad_pulse_) ++bad_.packets;
    stream_.send_data(queue, packet, pulse_ns, prev_ns, rng_,
                      [&](unsigned q) { write_corrupt(q, pulse_ns); });
  }

  // The corrupt fault: a well-formed packet whose 5 readouts are each broken in one known way,
  // each landing in one readouts.errors counter. They are on the first usable unit's ring, 1 us
  // after the pulse, where no neutron is.
  void write_corrupt(unsigned queue, std::uint64_t pulse_ns) {
    static constexpr const char* kReasons[] = {"readout_length",
                                               "readout_fiber",
                                               "readout_fen",
                                               "readout_vmm",
                                               "readout_channel",
                                               "readout_time_fraction",
                                               "readout_adc_below_threshold"};
    const Unit& u = in_.units[in_.usable.front()];
    const Vessel& v = in_.vessels[u.vessel];
    const ess::EssTime t = ess::to_ess(pulse_ns + 1000);
    // In a rejected pulse the packet is refused whole: none of its readouts is looked at.
    if (bad_pulse_) stream_.faults().count("corrupt_rejected_pulse");
    for (int k = 0; k < 5; ++k) {
      auto reason = static_cast<unsigned>(below(std::size(kReasons)));
      if (reason == 6 && v.min_adc == 0) reason = 5;  // no ADC is below a threshold of 0
      const Channel c = wire_channel(in_.layout, u.wires.front());
      vmm3a::Readout r{static_cast<std::uint8_t>(u.ring * 2),
                       static_cast<std::uint8_t>(u.fen),
                       vmm3a::kReadoutSize,
                       t.high,
                       t.low,
                       0,
                       static_cast<std::uint16_t>(std::max<std::uint16_t>(v.min_adc, 500)),
                       0,
                       0,
                       c.vmm,
                       c.channel};
      if (reason == 0) r.data_length = 19;
      if (reason == 1) r.fiber = static_cast<std::uint8_t>(unused_ring() * 2);
      if (reason == 2) r.fen = static_cast<std::uint8_t>(unused_fen(u.ring));
      if (reason == 3) r.vmm = static_cast<std::uint8_t>(unused_hybrid(u) * 2);
      if (reason == 4) {  // asic 0 of the wire hybrid carries wires on channels 32..63 only
        const Channel first = wire_channel(in_.layout, 0);
        r.vmm = first.vmm;
        r.channel = static_cast<std::uint8_t>(first.channel ^ 32U);
      }
      if (reason == 5) r.time_low = ess::kTicksPerSecond;
      if (reason == 6) r.otadc = static_cast<std::uint16_t>(v.min_adc - 1);
      vmm3a::write_readout(packets_.append(queue, vmm3a::kReadoutSize), r);
      if (!bad_pulse_) stream_.faults().count(kReasons[reason]);
    }
  }

  // A ring, FEN or hybrid that the file does not use (past the facility's limits if it uses all).
  std::uint32_t unused_ring() const {
    std::uint32_t ring = 0;
    while (ring <= vmm3a::kMaxRing && used(ring, std::nullopt)) ++ring;
    return ring <= vmm3a::kMaxRing ? ring : 125;
  }
  std::uint32_t unused_fen(std::uint32_t ring) const {
    std::uint32_t fen = 0;
    while (fen <= vmm3a::kMaxFen && used(ring, fen)) ++fen;
    return fen;
  }
  static std::uint32_t unused_hybrid(const Unit& u) {
    std::uint32_t hybrid = 0;
    while ((u.hybrids >> hybrid & 1U) != 0) ++hybrid;
    return hybrid;
  }
  bool used(std::uint32_t ring, std::optional<std::uint32_t> fen) const {
    return std::any_of(in_.units.begin(), in_.units.end(),
                       [&](const Unit& u) { return u.ring == ring && (!fen || u.fen == *fen); });
  }

  const Settings& s_;
  const Instrument& in_;
  gen::Random rng_;
  gen::EssStream stream_;
  ess::PacketAssembler& packets_;  // stream_'s
  std::ofstream truth_;
  std::uint64_t spacing_ = 0;
  gen::HeldReadouts<vmm3a::Readout> held_;
  std::vector<std::uint8_t> shuffled_;
  std::uint64_t readouts_ = 0, neutrons_ = 0, rejected_span_ = 0, rejected_pixel_ = 0;
  std::uint64_t noise_[2] = {0, 0};
  // What was sent in pulses the header check rejects (run_pulse()).
  struct Rejected {
    std::uint64_t pulses = 0, packets = 0, readouts = 0, neutrons = 0, noise = 0;
  };
  bool bad_pulse_ = false;
  Rejected bad_;
};

}  // namespace
}  // namespace efu::trexgen

int main(int argc, char** argv) {
  namespace gen = efu::gen;
  using efu::trexgen::Settings;
  Settings s;
  CLI::App app{"Simulated TREX (or LET) neutrons as ESS VMM3a readout over UDP"};
  gen::add_destination_options(app, s);
  app.add_option("--geometry", s.geometry, "The facility's trex.json or let.json")->required();
  gen::add_reorder_options(app, s);
  gen::add_pulse_options(app, s, /*min_size=*/52);
  app.add_option("--max-grids", s.max_grids, "Each neutron hits 1..N adjacent grids")
      ->check(CLI::Range(1U, efu::trexgen::kMaxGridsPerNeutron))
      ->capture_default_str();
  app.add_option("--grid-span-cut", s.span_cut,
                 "The plugin's grid-span cut: a neutron on more grids is an expected rejection "
                 "(0: the file's MaxGridsSpan or MaxGridsPerEvent, else 3)")
      ->capture_default_str();
  app.add_option("--outside-fraction", s.outside_fraction,
                 "Draw this fraction of neutrons anywhere in the vessels, outside the pixel volume "
                 "too (expected rejections: events.rejected.pixel or grid_span)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--adc-min", s.adc_min, "Lowest ADC drawn (and never below a vessel's MinADC)")
      ->check(CLI::Range(0, 1023))
      ->capture_default_str();
  app.add_option("--noise-per-pulse", s.noise_per_pulse,
                 "Single wire or grid noise hits per pulse (<= neutrons)");
  app.add_option("--jitter-ns", s.jitter_ns, "Hits follow the neutron by 0..jitter ns")
      ->check(CLI::Range(0, 400))
      ->capture_default_str();
  app.add_option("--min-spacing-ns", s.min_spacing_ns, "Refuse neutron spacings below this")
      ->capture_default_str();
  gen::add_stream_options(app, s, "ESS output queues (a unit's ring % queues)",
                          "Write one line per neutron here", efu::trexgen::kFaults);
  CLI11_PARSE(app, argc, argv);
  return gen::run_main(efu::trexgen::kProgram, [&] {
    gen::check_options(s);
    const auto instrument = efu::trexgen::load_instrument(s.geometry, s.span_cut);
    efu::trexgen::Generator generator(s, instrument);
    generator.run();
    generator.write_summary();
    generator.print_summary();
  });
}
