// efu-cdt-gen: simulated neutrons of a CDT instrument (DREAM, MAGIC, HEIMDAL: the --geometry
// file's Detector) as ESS CDT readout over UDP, with a ground-truth file (pulse, TOF and pixel
// per neutron) that an end-to-end test checks efu's events against (docs/cdt.md).
//
// The ground truth does not come from efu's geometry (geometry.h). The generator works the other
// way round: it draws where in a configured module the neutron is seen (cassette, counter, wire,
// strip: the module's physical channels), builds the UnitId, anode and cathode the electronics
// would send for that channel, and numbers the pixel from the same channel with its own layout
// tables below. A mistake on either side shows up as a wrong pixel in the end-to-end test.
//
// What every ESS generator shares (options, pulses, sending, header faults, the summary) is in
// common/include/efu/gen/; this file is the CDT part: channels, readouts, late neutrons and the
// corrupt-readout fault.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "cdt_pipeline.h"
#include "cdt_readout.h"
#include "config.h"
#include "efu/errors.h"
#include "efu/ess/packet_assembler.h"
#include "efu/gen/ess_stream.h"
#include "efu/gen/faults.h"
#include "efu/gen/generator_options.h"
#include "efu/gen/random.h"
#include "efu/gen/result_files.h"

namespace efu::cdt {
namespace {

using gen::kFirstTofNs;
using gen::kPulsePeriodNs;

constexpr const char* kProgram = "efu-cdt-gen";
constexpr gen::Fault kFaults[] = {
    gen::Fault::kCookie,  gen::Fault::kTruncated, gen::Fault::kVersion, gen::Fault::kType,
    gen::Fault::kCorrupt, gen::Fault::kEmpty,     gen::Fault::kOversize};

struct Settings : gen::GeneratorOptions {
  std::string geometry;
  std::uint64_t late_per_pulse = 0;
  std::string shape = "uniform";
  double spot_x = 0.5, spot_y = 0.5;  // in the module's face, fractions of its width and height
  double spot_radius = 0.3;
  double ring_width = 0.05;
};

// --- Shapes -------------------------------------------------------------------------------
// Every module draws the shape on its own face: the rectangle it covers in efu-monitor's panel
// of its module type (docs/cdt.md, Monitor), a SUMO sector, a PA sector, a cuboid face, a
// mantle cassette's wires × strips. The shape works in fractions of the face (0..1 across and
// up), so the same ring sits in every face whatever its size; the type's function below turns
// the point into the channel under it. `uniform` keeps the old draw: each channel counter
// independently uniform.
struct FacePoint {
  double x, y;  // 0 <= x, y < 1
};

class Shape {
 public:
  explicit Shape(const Settings& s) : s_(s), uniform_(s.shape == "uniform") {}

  bool uniform() const noexcept { return uniform_; }

  /// A point of the shape inside the face; after 1000 misses (a shape off the face), its
  /// centre clamped onto the face.
  FacePoint point(gen::Random& rng) const {
    for (int attempt = 0; attempt < 1000; ++attempt) {
      double fx = 0, fy = 0;
      if (s_.shape == "spot") {
        std::normal_distribution<double> n(0, s_.spot_radius);
        fx = s_.spot_x + n(rng.engine());
        fy = s_.spot_y + n(rng.engine());
      } else {  // ring
        const double r = s_.spot_radius + rng.uniform(-s_.ring_width, s_.ring_width);
        const double a = rng.uniform(0, 2 * M_PI);
        fx = s_.spot_x + r * std::cos(a);
        fy = s_.spot_y + r * std::sin(a);
      }
      if (fx >= 0 && fy >= 0 && fx < 1 && fy < 1) return FacePoint{fx, fy};
    }
    constexpr double kLast = 0.999999;
    return FacePoint{std::clamp(s_.spot_x, 0.0, kLast), std::clamp(s_.spot_y, 0.0, kLast)};
  }

 private:
  const Settings& s_;
  bool uniform_;
};

/// The cell of `n` cells under fraction `f` (0 <= f < 1).
std::uint32_t cell(double f, std::uint32_t n) {
  return std::min(static_cast<std::uint32_t>(f * n), n - 1);
}

/// What the electronics send for one channel, and the pixel the facility gives it.
struct Channel {
  std::uint8_t unit = 0;
  std::uint8_t anode = 0;
  std::uint8_t cathode = 0;
  std::uint32_t pixel = 0;
};

// --- The instruments' pixel spaces, as the ICDs lay them out ------------------------------
// Pixel = offset of the module type + 1 + x + width·y, x across and y up the type's picture.
constexpr std::uint32_t kDreamFwEndCapOffset = 0;       // 5 sectors
constexpr std::uint32_t kDreamBwEndCapOffset = 71'680;  // 280 × 256 after the forward endcap
constexpr std::uint32_t kDreamMantleOffset = 229'376;   // + 616 × 256
constexpr std::uint32_t kDreamSansOffset = 720'896;     // + 256 × 1920
constexpr std::uint32_t kDreamHrOffset = 1'122'304;     // + 112 × 3584
constexpr std::uint32_t kMagicPaOffset = 245'760;       // after the FR detector's 128 × 1920

std::uint32_t pixel_at(std::uint32_t offset, std::uint32_t width, std::uint32_t x,
                       std::uint32_t y) {
  return offset + 1 + x + width * y;
}

// --- SUMO endcaps -------------------------------------------------------------------------
// A sector is 56 columns wide: SUMO 6 (10 cassettes) on the outside, then SUMO 5 (8), 4 (6)
// and 3 (4), two counters (columns) per cassette; 16 strips × 16 wires up the sector. The
// readout names the cassette through the anode's and cathode's high bits, differently per SUMO:
//   SUMO 6: cassette = 2·(C/16) − A/32     SUMO 5: cassette = 2·(C/16) + A/32
//   SUMO 4: cassette = 2·(C/16) + A/32 − 1 SUMO 3: cassette = 2·(C/32) + A/32
// so the generator solves each for the two high parts (hi_a = A/32, hi_c = C/16 or C/32).
constexpr std::array<std::uint32_t, 7> kSumoCassettes{0, 0, 0, 4, 6, 8, 10};  // by SUMO 3..6

std::uint32_t sumo_first_column(std::uint32_t sumo) {
  std::uint32_t column = 0;
  for (std::uint32_t outer = 6; outer > sumo; --outer) column += 2 * kSumoCassettes[outer];
  return column;
}

struct SumoCell {
  std::uint32_t sumo, cassette, counter, wire, strip;
};

SumoCell sumo_uniform(gen::Random& rng) {
  SumoCell c{};
  c.sumo = static_cast<std::uint32_t>(3 + rng.below(4));
  c.cassette = static_cast<std::uint32_t>(rng.below(kSumoCassettes[c.sumo]));
  c.counter = static_cast<std::uint32_t>(rng.below(2));
  c.wire = static_cast<std::uint32_t>(rng.below(16));
  c.strip = static_cast<std::uint32_t>(rng.below(16));
  return c;
}

// The face is the sector: 56 columns across, 16·strip + wire up (the type's grid).
SumoCell sumo_at(FacePoint p) {
  const std::uint32_t column = cell(p.x, 56), y = cell(p.y, 256);
  std::uint32_t sumo = 6;
  while (column >= sumo_first_column(sumo) + 2 * kSumoCassettes[sumo]) --sumo;
  const std::uint32_t in_sumo = column - sumo_first_column(sumo);
  return SumoCell{sumo, in_sumo / 2, in_sumo % 2, y % 16, y / 16};
}

Channel sumo_channel(const SumoCell& c, std::uint32_t sector, std::uint32_t offset,
                     std::uint32_t sectors) {
  std::uint32_t hi_a = c.cassette % 2, hi_c = c.cassette / 2, cathode_step = 16;
  if (c.sumo == 6) hi_c = (c.cassette + hi_a) / 2;  // cassette = 2·hi_c − hi_a
  if (c.sumo == 4) {                                // cassette + 1 = 2·hi_c + hi_a
    hi_a = (c.cassette + 1) % 2;
    hi_c = (c.cassette + 1) / 2;
  }
  if (c.sumo == 3) cathode_step = 32;
  Channel ch;
  ch.unit = static_cast<std::uint8_t>(c.sumo);
  ch.anode = static_cast<std::uint8_t>(32 * hi_a + 16 * c.counter + c.wire);
  ch.cathode = static_cast<std::uint8_t>(cathode_step * hi_c + c.strip);
  const std::uint32_t x = 56 * sector + sumo_first_column(c.sumo) + 2 * c.cassette + c.counter;
  ch.pixel = pixel_at(offset, 56 * sectors, x, 16 * c.strip + c.wire);
  return ch;
}

// --- Mantles (DREAM 256 strips, MAGIC FR 128 strips; HEIMDAL 64 strips) -------------------
// A mantle module is one cassette of a mounting unit: 2 counters × 32 wires, and the strips.
// Its face is 32·counter + wire across (the wire column, around the mantle) and the strip up
// (along the beam). Anode = 32·counter + wire, cathode = strip.
struct MantleCell {
  std::uint32_t counter, wire, strip;
};

MantleCell mantle_uniform(gen::Random& rng, std::uint32_t strips) {
  MantleCell c{};
  c.counter = static_cast<std::uint32_t>(rng.below(2));
  c.wire = static_cast<std::uint32_t>(rng.below(32));
  c.strip = static_cast<std::uint32_t>(rng.below(strips));
  return c;
}

MantleCell mantle_at(FacePoint p, std::uint32_t strips) {
  const std::uint32_t x = cell(p.x, 64);
  return MantleCell{x / 32, x % 32, cell(p.y, strips)};
}

// DREAM mantle and FR: strips across; up the picture each of the 32 wires holds the 5 mounting
// units × 6 cassettes × 2 counters (60 rows).
Channel mantle_channel(const MantleCell& c, const Module& m, std::uint32_t strips,
                       std::uint32_t offset) {
  Channel ch;
  ch.anode = static_cast<std::uint8_t>(32 * c.counter + c.wire);
  ch.cathode = static_cast<std::uint8_t>(c.strip);
  const std::uint32_t row = c.wire * 60 + m.index * 12 + m.index2 * 2 + c.counter;
  ch.pixel = pixel_at(offset, strips, c.strip, row);
  return ch;
}

// HEIMDAL mantle: 12 mounting units × 6 cassettes × 2 counters across (144), 32 wires × 64
// strips up.
Channel heimdal_channel(const MantleCell& c, const Module& m) {
  Channel ch;
  ch.anode = static_cast<std::uint8_t>(32 * c.counter + c.wire);
  ch.cathode = static_cast<std::uint8_t>(c.strip);
  ch.pixel = pixel_at(0, 144, 12 * m.index + 2 * m.index2 + c.counter, 64 * c.wire + c.strip);
  return ch;
}

// --- Cuboids (HR, SANS) -------------------------------------------------------------------
// The cuboids as the instrument scientist sees them: a 7 × 7 picture of 16 × 16 faces, each
// character one face, '.' none, a digit the face's clockwise quarter turns; cuboids are numbered
// left to right, top row first. 32 strips deep, each strip a 112 × 112 slice of the picture.
constexpr std::array<std::string_view, 7> kHrLayout{"..011..", ".00111.", "0001111", "000.222",
                                                    "333.222", ".33.22.", "..3.2.."};
constexpr std::array<std::string_view, 7> kSansLayout{"..011..", ".00111.", "0001111", "000.222",
                                                      "3333222", ".33322.", "..332.."};

struct Face {
  std::uint32_t col, row, turns;
};

std::vector<Face> faces_of(const std::array<std::string_view, 7>& layout) {
  std::vector<Face> faces;
  for (std::uint32_t row = 0; row < layout.size(); ++row) {
    for (std::uint32_t col = 0; col < layout[row].size(); ++col) {
      if (layout[row][col] != '.') {
        faces.push_back(Face{col, row, static_cast<std::uint32_t>(layout[row][col] - '0')});
      }
    }
  }
  return faces;
}

// In a face, 8 cassettes of 2 counters run across (u = 2·cassette + counter) and the 16 wires
// down (v = 15 − wire); a quarter turn clockwise takes (u, v) to (15 − v, u), four turns are
// none. The cassette is A/32 + 2·(C/32): anode = 32·(cassette mod 2) + 16·counter + wire,
// cathode = 32·(cassette / 2) + strip.
struct CuboidCell {
  bool second;  // the cuboid of UnitId 1 (Index2)
  std::uint32_t cassette, counter, wire, strip;
};

void quarter_turns(std::uint32_t turns, std::uint32_t& u, std::uint32_t& v) {
  for (std::uint32_t turn = 0; turn < turns; ++turn) {
    const std::uint32_t was_u = u;
    u = 15 - v;
    v = was_u;
  }
}

CuboidCell cuboid_uniform(gen::Random& rng, const Module& m) {
  CuboidCell c{};
  c.second = m.index2 != kNoCuboid && rng.below(2) == 1;
  c.cassette = static_cast<std::uint32_t>(rng.below(8));
  c.counter = static_cast<std::uint32_t>(rng.below(2));
  c.wire = static_cast<std::uint32_t>(rng.below(16));
  c.strip = static_cast<std::uint32_t>(rng.below(32));
  return c;
}

// The face point is in the picture, (u', v') after the turns, v' down (the picture's row 0 is
// its top, so up the face is 15 − v'): turning it on to four turns gives the unrotated (u, v).
// The strip (depth) is drawn uniformly.
CuboidCell cuboid_at(gen::Random& rng, const Module& m, const std::vector<Face>& faces,
                     FacePoint p) {
  CuboidCell c{};
  c.second = m.index2 != kNoCuboid && rng.below(2) == 1;
  std::uint32_t u = cell(p.x, 16), v = 15 - cell(p.y, 16);
  quarter_turns((4 - faces.at(c.second ? m.index2 : m.index).turns) % 4, u, v);
  c.cassette = u / 2;
  c.counter = u % 2;
  c.wire = 15 - v;
  c.strip = static_cast<std::uint32_t>(rng.below(32));
  return c;
}

Channel cuboid_channel(const CuboidCell& c, const Module& m, const std::vector<Face>& faces,
                       std::uint32_t offset) {
  const Face& face = faces.at(c.second ? m.index2 : m.index);
  Channel ch;
  ch.unit = c.second ? 1 : 0;
  ch.anode = static_cast<std::uint8_t>(32 * (c.cassette % 2) + 16 * c.counter + c.wire);
  ch.cathode = static_cast<std::uint8_t>(32 * (c.cassette / 2) + c.strip);
  std::uint32_t u = 2 * c.cassette + c.counter, v = 15 - c.wire;
  quarter_turns(face.turns, u, v);
  ch.pixel = pixel_at(offset, 112, 16 * face.col + u, 112 * c.strip + 16 * face.row + v);
  return ch;
}

// --- MAGIC PA detector --------------------------------------------------------------------
// 8 sectors of 16 cassettes × 2 counters across, 32 strips × 16 wires up. The cassette is
// A/32 + 4·(C/64): anode = 32·(cassette mod 4) + 16·counter + wire, cathode = 64·(cassette / 4)
// + strip.
struct PaCell {
  std::uint32_t cassette, counter, wire, strip;
};

PaCell pa_uniform(gen::Random& rng) {
  PaCell c{};
  c.cassette = static_cast<std::uint32_t>(rng.below(16));
  c.counter = static_cast<std::uint32_t>(rng.below(2));
  c.wire = static_cast<std::uint32_t>(rng.below(16));
  c.strip = static_cast<std::uint32_t>(rng.below(32));
  return c;
}

// The face is the sector: 2·cassette + counter across, 16·strip + wire up (the type's grid).
PaCell pa_at(FacePoint p) {
  const std::uint32_t x = cell(p.x, 32), y = cell(p.y, 512);
  return PaCell{x / 2, x % 2, y % 16, y / 16};
}

Channel pa_channel(const PaCell& c, const Module& m) {
  Channel ch;
  ch.anode = static_cast<std::uint8_t>(32 * (c.cassette % 4) + 16 * c.counter + c.wire);
  ch.cathode = static_cast<std::uint8_t>(64 * (c.cassette / 4) + c.strip);
  ch.pixel = pixel_at(kMagicPaOffset, 256, 32 * m.index + 2 * c.cassette + c.counter,
                      16 * c.strip + c.wire);
  return ch;
}

/// A configured (ring, FEN) and what it is.
struct Placed {
  std::uint8_t ring;
  std::uint8_t fen;
  Module module;
};

class Channels {
 public:
  explicit Channels(const CdtConfig& config)
      : hr_(faces_of(kHrLayout)), sans_(faces_of(kSansLayout)) {
    for (std::uint32_t ring = 0; ring < kRings; ++ring) {
      for (std::uint32_t fen = 0; fen < kFens; ++fen) {
        const Module& m = config.module(ring, fen);
        if (m.configured) {
          modules_.push_back(
              Placed{static_cast<std::uint8_t>(ring), static_cast<std::uint8_t>(fen), m});
        }
      }
    }
    if (modules_.empty()) throw ConfigError("--geometry: '" + config.path + "' has no module");
  }

  const std::vector<Placed>& modules() const noexcept { return modules_; }

  /// The channel of a neutron in `m`: uniform over its channels, or the one under the shape's
  /// point on its face.
  Channel draw(gen::Random& rng, const Module& m, const Shape& shape) const {
    const bool uniform = shape.uniform();
    const FacePoint p = uniform ? FacePoint{0, 0} : shape.point(rng);
    switch (m.type) {
      case ModuleType::kFwEndCap:
        return sumo_channel(uniform ? sumo_uniform(rng) : sumo_at(p), m.index, kDreamFwEndCapOffset,
                            5);
      case ModuleType::kBwEndCap:
        return sumo_channel(uniform ? sumo_uniform(rng) : sumo_at(p), m.index, kDreamBwEndCapOffset,
                            11);
      case ModuleType::kDreamMantle:
        return mantle_channel(uniform ? mantle_uniform(rng, 256) : mantle_at(p, 256), m, 256,
                              kDreamMantleOffset);
      case ModuleType::kFrDetector:
        return mantle_channel(uniform ? mantle_uniform(rng, 128) : mantle_at(p, 128), m, 128, 0);
      case ModuleType::kHr:
        return cuboid_channel(uniform ? cuboid_uniform(rng, m) : cuboid_at(rng, m, hr_, p), m, hr_,
                              kDreamHrOffset);
      case ModuleType::kSans:
        return cuboid_channel(uniform ? cuboid_uniform(rng, m) : cuboid_at(rng, m, sans_, p), m,
                              sans_, kDreamSansOffset);
      case ModuleType::kPaDetector:
        return pa_channel(uniform ? pa_uniform(rng) : pa_at(p), m);
      case ModuleType::kHeimdalMantle:
        return heimdal_channel(uniform ? mantle_uniform(rng, 64) : mantle_at(p, 64), m);
      case ModuleType::kCount:
        break;
    }
    throw std::logic_error("unknown module type");
  }

 private:
  std::vector<Face> hr_, sans_;
  std::vector<Placed> modules_;
};

/// The type byte of a `type` fault: another CDT instrument's.
std::uint8_t wrong_type(Instrument instrument) {
  return type_byte(instrument == Instrument::kDream ? Instrument::kMagic : Instrument::kDream);
}

/// The corrupt fault's broken readouts: each breaks one thing of a good readout, so that it lands
/// in exactly one of efu's counters, readouts.errors.<reason> for "readout_<reason>". Only the
/// reasons the instrument can show are used (a unit error needs an endcap or cuboid, a cassette
/// error an endcap or PA detector, an unconfigured one a free (ring, FEN) pair).
enum class Broken : std::uint8_t {
  kLength,
  kRing,
  kFen,
  kUnconfigured,
  kUnit,
  kCassette,
  kTimeFraction
};
constexpr std::array<const char*, 7> kBrokenNames{
    "readout_length", "readout_ring",     "readout_fen",          "readout_unconfigured",
    "readout_unit",   "readout_cassette", "readout_time_fraction"};

class Generator {
 public:
  Generator(const Settings& s, const CdtConfig& config, const Channels& channels)
      : s_(s),
        config_(config),
        channels_(channels),
        shape_(s),
        rng_(s.seed),
        stream_(s, kProgram, type_byte(config.instrument), kFaults, wrong_type(config.instrument)),
        packets_(stream_.packets()),
        truth_(gen::open_ground_truth(s.ground_truth, "# pulse_time_ns tof_ns pixel")) {
    find_broken_kinds();
  }
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  void run() {
    spacing_ = gen::neutron_spacing_ns(s_.neutrons_per_pulse);
    stream_.run_pulses_with_late(
        [this](std::uint64_t pulse_ns, std::uint64_t prev_ns) { run_late(pulse_ns, prev_ns); },
        [this](std::uint64_t pulse_ns, std::uint64_t prev_ns) { run_pulse(pulse_ns, prev_ns); });
  }

  void write_summary() const {
    gen::SummaryJson json;
    json.text("instrument", instrument_name(config_.instrument));
    stream_.add_sent(json)
        .number("modules", channels_.modules().size())
        .number("readouts", readouts_)
        .number("neutrons", neutrons_)
        .number("late", late_);
    stream_.add_errors(json).write(s_.summary);
  }

  void print_summary() const { stream_.print_summary(readouts_, neutrons_, late_, "late"); }

 private:
  void find_broken_kinds() {
    broken_ = {Broken::kLength, Broken::kRing, Broken::kFen, Broken::kTimeFraction};
    for (std::uint32_t k = 0; k < kRings * kFens && !free_pair_; ++k) {
      if (!config_.modules[k].configured) {
        free_pair_ = true;
        free_ring_ = static_cast<std::uint8_t>(k / kFens);
        free_fen_ = static_cast<std::uint8_t>(k % kFens);
        broken_.push_back(Broken::kUnconfigured);
      }
    }
    for (std::size_t i = 0; i < channels_.modules().size(); ++i) {
      const ModuleType t = channels_.modules()[i].module.type;
      const bool sumo = t == ModuleType::kBwEndCap || t == ModuleType::kFwEndCap;
      const bool cuboid = t == ModuleType::kHr || t == ModuleType::kSans;
      if ((sumo || cuboid) && unit_module_ < 0) unit_module_ = static_cast<int>(i);
      if ((sumo || t == ModuleType::kPaDetector) && cassette_module_ < 0) {
        cassette_module_ = static_cast<int>(i);
      }
    }
    if (unit_module_ >= 0) broken_.push_back(Broken::kUnit);
    if (cassette_module_ >= 0) broken_.push_back(Broken::kCassette);
  }

  /// A good readout of module `placed` at `time_ns`, and its pixel.
  CdtReadout readout_of(const Placed& placed, std::uint64_t time_ns, std::uint32_t& pixel) {
    const Channel ch = channels_.draw(rng_, placed.module, shape_);
    CdtReadout r;
    r.fiber = static_cast<std::uint8_t>(placed.ring * 2 + rng_.below(2));  // either fibre
    r.fen = placed.fen;
    const ess::EssTime t = ess::to_ess(time_ns);
    r.time_high = t.high;
    r.time_low = t.low;
    r.unit = ch.unit;
    r.anode = ch.anode;
    r.cathode = ch.cathode;
    pixel = ch.pixel;
    return r;
  }

  /// Every readout of one ring goes to one output queue, so efu keeps each (ring, FEN) pair on
  /// one processing thread.
  void add(const CdtReadout& r, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    const unsigned queue = (r.fiber / 2U) % packets_.queues();
    if (!packets_.empty(queue) && !packets_.fits(queue, kReadoutSize))
      send_queue(queue, pulse_ns, prev_ns);
    write_readout(packets_.append(queue, kReadoutSize), r);
    ++readouts_;
  }

  void neutron(std::uint64_t reference_ns, std::uint64_t tof, std::uint64_t pulse_ns,
               std::uint64_t prev_ns) {
    const auto& modules = channels_.modules();
    std::uint32_t pixel = 0;
    const CdtReadout r = readout_of(modules[rng_.below(modules.size())], reference_ns + tof, pixel);
    add(r, pulse_ns, prev_ns);
    ++neutrons_;
    if (truth_) {
      truth_ << reference_ns << ' ' << ess::to_ns(r.time_high, r.time_low) - reference_ns << ' '
             << pixel << '\n';
    }
  }

  // Neutrons of the previous pulse that arrive in the new pulse's packets (their TOF is in the
  // last 90 us of the previous pulse, after every regular neutron): efu measures them against
  // the header's previous pulse time.
  void run_late(std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    for (std::uint64_t k = 0; k < s_.late_per_pulse; ++k) {
      neutron(prev_ns, kPulsePeriodNs - 90'000 + k * (80'000 / s_.late_per_pulse), pulse_ns,
              prev_ns);
      ++late_;
    }
  }

  void run_pulse(std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    for (std::uint64_t i = 0; i < s_.neutrons_per_pulse; ++i) {
      neutron(pulse_ns, kFirstTofNs + i * spacing_, pulse_ns, prev_ns);
    }
    for (unsigned q = 0; q < packets_.queues(); ++q) {
      if (!packets_.empty(q)) send_queue(q, pulse_ns, prev_ns);
    }
  }

  void send_queue(unsigned index, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    const std::span<const std::uint8_t> packet =
        packets_.finish(index, ess::to_ess(pulse_ns), ess::to_ess(prev_ns));
    stream_.send_data(index, packet, pulse_ns, prev_ns, rng_,
                      [&](unsigned queue) { write_corrupt(queue, pulse_ns); });
  }

  /// A readout of a good neutron, broken as `kind` says.
  CdtReadout broken(Broken kind, std::uint64_t pulse_ns) {
    const auto& modules = channels_.modules();
    const int base = kind == Broken::kUnit       ? unit_module_
                     : kind == Broken::kCassette ? cassette_module_
                                                 : 0;
    const Placed& placed = modules[static_cast<std::size_t>(base)];
    std::uint32_t pixel = 0;
    CdtReadout r = readout_of(placed, pulse_ns + 1000, pixel);
    const bool sumo =
        placed.module.type == ModuleType::kBwEndCap || placed.module.type == ModuleType::kFwEndCap;
    switch (kind) {
      case Broken::kLength:
        r.data_length = kReadoutSize - 1;
        break;
      case Broken::kRing:
        r.fiber = static_cast<std::uint8_t>(2 * kRings + rng_.below(256 - 2 * kRings));
        break;
      case Broken::kFen:
        r.fen = static_cast<std::uint8_t>(kFens + rng_.below(256 - kFens));
        break;
      case Broken::kUnconfigured:
        r.fiber = static_cast<std::uint8_t>(2 * free_ring_);
        r.fen = free_fen_;
        break;
      case Broken::kUnit:  // a SUMO is 3..6, a cuboid 0 or 1
        r.unit = sumo ? 7 : 2;
        break;
      case Broken::kCassette:  // SUMO 6 cassette 2·0 − 1; PA cassette 4 + 4·3 = 16
        r.unit = sumo ? 6 : r.unit;
        r.anode = sumo ? 32 : 128;
        r.cathode = sumo ? 0 : 192;
        break;
      case Broken::kTimeFraction:
        r.time_low = ess::kTicksPerSecond;
        break;
    }
    return r;
  }

  // The corrupt fault: a well-formed packet in the sequence whose readouts are each broken in
  // one known way (the header faults are gen::FaultInjector's).
  void write_corrupt(unsigned queue, std::uint64_t pulse_ns) {
    for (int k = 0; k < 6; ++k) {
      const Broken kind = broken_[rng_.below(broken_.size())];
      write_readout(packets_.append(queue, kReadoutSize), broken(kind, pulse_ns));
      stream_.faults().count(kBrokenNames[static_cast<std::size_t>(kind)]);
    }
  }

  const Settings& s_;
  const CdtConfig& config_;
  const Channels& channels_;
  Shape shape_;
  gen::Random rng_;
  gen::EssStream stream_;
  ess::PacketAssembler& packets_;  // stream_'s
  std::ofstream truth_;
  std::vector<Broken> broken_;
  bool free_pair_ = false;
  std::uint8_t free_ring_ = 0, free_fen_ = 0;
  int unit_module_ = -1, cassette_module_ = -1;
  std::uint64_t spacing_ = 0;
  std::uint64_t readouts_ = 0, neutrons_ = 0;
  std::uint64_t late_ = 0;  // neutrons of the previous pulse (counted in neutrons_ too)
};

}  // namespace
}  // namespace efu::cdt

int main(int argc, char** argv) {
  namespace gen = efu::gen;
  using efu::cdt::Settings;
  Settings s;
  CLI::App app{
      "Simulated neutrons of a CDT instrument (DREAM, MAGIC, HEIMDAL) as ESS CDT readout "
      "over UDP"};
  gen::add_destination_options(app, s);
  app.add_option("--geometry", s.geometry,
                 "Instrument file, the facility's format; its Detector picks the instrument "
                 "(default: the shipped DreamInst.json)");
  gen::add_pulse_options(app, s, /*min_size=*/48);
  app.add_option("--late-per-pulse", s.late_per_pulse,
                 "Neutrons of the previous pulse sent with each pulse's readouts (efu measures "
                 "their TOF against the previous pulse)")
      ->check(CLI::Range(0, 8000));
  app.add_option("--shape", s.shape,
                 "Neutron positions on every module's face: uniform (over its channels), spot or "
                 "ring")
      ->check(CLI::IsMember({"uniform", "spot", "ring"}))
      ->capture_default_str();
  app.add_option("--spot-x", s.spot_x, "Spot/ring centre, fraction of the face's width")
      ->capture_default_str();
  app.add_option("--spot-y", s.spot_y, "Spot/ring centre, fraction of the face's height")
      ->capture_default_str();
  app.add_option("--spot-radius", s.spot_radius,
                 "Spot sigma or ring radius, fraction of the face's width and height")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--ring-width", s.ring_width, "Ring half width, fraction of the face")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  gen::add_stream_options(app, s, "ESS output queues (ring % queues)",
                          "Write one line per neutron here: pulse_ns tof_ns pixel",
                          efu::cdt::kFaults);
  CLI11_PARSE(app, argc, argv);
  return gen::run_main(efu::cdt::kProgram, [&] {
    gen::check_options(s);
    const efu::cdt::CdtConfig config = efu::cdt::CdtConfig::from_file(
        s.geometry.empty() ? efu::cdt::default_geometry_path() : s.geometry);
    const efu::cdt::Channels channels(config);
    efu::cdt::Generator generator(s, config, channels);
    generator.run();
    generator.write_summary();
    generator.print_summary();
  });
}
