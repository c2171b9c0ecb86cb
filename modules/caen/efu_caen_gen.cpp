// efu-caen-gen: simulated neutrons of a CAEN charge-division instrument (LoKI, BIFROST, CSPEC,
// MIRACLES: the --geometry file's Detector) as ESS CAEN readout over UDP, with a ground-truth
// file (pulse, TOF and pixel per neutron, and BIFROST's ev44 source) that an end-to-end test
// checks efu's events against (docs/caen.md).
//
// The ground truth does not come from efu's pixel code: the generator numbers pixels with its
// own forward formulas (recipe builders below) and finds amplitudes that give each pixel by
// searching those formulas, so a mistake on either side shows up as a wrong pixel.
//
// What every ESS generator shares (options, pulses, sending, header faults, the summary) is in
// common/include/efu/gen/; this file is the CAEN part: pixel recipes, shapes, readouts, late
// neutrons, noise and the corrupt-readout fault.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "caen_pipeline.h"
#include "caen_readout.h"
#include "calibration.h"
#include "config.h"
#include "efu/errors.h"
#include "efu/ess/logical_geometry.h"
#include "efu/ess/packet_assembler.h"
#include "efu/gen/ess_stream.h"
#include "efu/gen/faults.h"
#include "efu/gen/generator_options.h"
#include "efu/gen/random.h"
#include "efu/gen/result_files.h"

namespace efu::caen {
namespace {

using gen::kFirstTofNs;
using gen::kPulsePeriodNs;

constexpr std::int64_t kAmplitudeSum = 32000;  // a neutron's amplitude sum, near full scale
constexpr const char* kProgram = "efu-caen-gen";
constexpr gen::Fault kFaults[] = {gen::Fault::kCookie, gen::Fault::kTruncated, gen::Fault::kVersion,
                                  gen::Fault::kType,   gen::Fault::kCorrupt,   gen::Fault::kEmpty,
                                  gen::Fault::kOversize};

/// The shared options (gen::GeneratorOptions) and CAEN's own.
struct Settings : gen::GeneratorOptions {
  std::string geometry;
  std::string calibration;
  std::string shape = "uniform";
  double spot_x = -1, spot_y = -1, spot_radius = 10, ring_width = 3;
  int noise_below = 100;
  std::uint64_t late_per_pulse = 0;
  bool mix_queues = false;  // each readout in a random output queue, not ring % queues
};

/// How to make one pixel: the readout's identifiers and amplitudes.
struct Recipe {
  bool valid = false;
  std::uint8_t ring = 0;
  std::uint8_t fen = 0;
  std::uint8_t group = 0;
  std::uint16_t a = 0, b = 0, c = 0, d = 0;
};

/// Every pixel the instrument's readout can reach, with the amplitudes that reach it.
class Recipes {
 public:
  Recipes(const CaenConfig& config, const Calibration& calibration)
      : config_(config), calibration_(calibration) {
    switch (config.instrument) {
      case Instrument::kLoki:
        grid_ = ess::LogicalGeometry{config.resolution, config.total_groups * kLokiStrawsPerGroup};
        break;
      case Instrument::kBifrost:
        grid_ = ess::LogicalGeometry{900, 15};
        break;
      case Instrument::kCspec:
        grid_ = ess::LogicalGeometry{900, 180};
        break;
      case Instrument::kMiracles:
        grid_ = ess::LogicalGeometry{48, 128};
        break;
    }
    table_.resize(grid_.pixel_count());
    switch (config.instrument) {
      case Instrument::kLoki:
        build_loki();
        break;
      case Instrument::kBifrost:
        build_bifrost();
        break;
      case Instrument::kCspec:
        build_cspec();
        break;
      case Instrument::kMiracles:
        build_miracles();
        break;
    }
    for (std::uint32_t p = 0; p < table_.size(); ++p) {
      if (table_[p].valid) reachable_.push_back(p + 1);
    }
    if (reachable_.empty())
      throw ConfigError("--geometry: '" + config.path + "' has no reachable pixel");
  }

  const ess::LogicalGeometry& grid() const noexcept { return grid_; }
  const Recipe* find(std::uint32_t pixel) const noexcept {
    if (pixel == 0 || pixel > table_.size() || !table_[pixel - 1].valid) return nullptr;
    return &table_[pixel - 1];
  }
  const std::vector<std::uint32_t>& reachable() const noexcept { return reachable_; }

 private:
  void put(std::uint32_t x, std::uint32_t y, Recipe r) {
    const std::uint32_t pixel = grid_.pixel(x, y);
    if (pixel == 0 || table_[pixel - 1].valid) return;  // outside, or already reachable
    r.valid = true;
    table_[pixel - 1] = r;
  }

  // LoKI: y from ring/FEN/group/straw, x = round(corrected (A+B)/S · (Resolution-1)), the straw
  // from (B+D)/S at the middle of the straw's interval.
  void build_loki() {
    const std::int64_t steps = config_.resolution - 1;
    if (steps == 0) return;
    const std::int64_t k = std::max<std::int64_t>(1, kAmplitudeSum / steps);
    const std::int64_t s = steps * k;
    for (std::uint32_t ring = 0; ring < kMaxRings; ++ring) {
      const LokiRing& rc = config_.rings[ring];
      if (!rc.configured) continue;
      const LokiBank& bank = config_.banks[rc.bank];
      for (std::uint32_t fen = 0; fen < rc.fens; ++fen) {
        for (std::uint32_t group = 0; group < kLokiGroupsPerFen; ++group) {
          const std::uint32_t layer = group % 4, half = group / 4;
          const std::uint32_t global =
              bank.y_offset / 7 + layer * bank.groups_n + (rc.fen_offset + fen) * 2 + half;
          if (global >= calibration_.groups()) continue;
          for (std::uint32_t unit = 0; unit < kLokiStrawsPerGroup; ++unit) {
            const std::uint32_t y = bank.y_offset + layer * bank.groups_n * 7 +
                                    (rc.fen_offset + fen) * 14 + half * 7 + unit;
            const UnitCalibration& u = calibration_.unit(global, unit);
            const auto q = static_cast<std::int64_t>(
                std::llround((u.min + u.max) / 2 * static_cast<double>(s)));
            if (calibration_.unit_of(global, static_cast<double>(q) / static_cast<double>(s)) !=
                static_cast<int>(unit)) {
              continue;
            }
            auto x_of = [&](std::int64_t p) {
              Calibration::Clamp clamp;
              const double pos = calibration_.correct(
                  global, unit, static_cast<double>(p) / static_cast<double>(s), clamp);
              return static_cast<std::int64_t>(std::round(pos * static_cast<double>(steps)));
            };
            for (std::int64_t x = 0; x <= steps; ++x) {
              std::int64_t lo = 0, hi = s;  // the smallest p with x_of(p) >= x
              while (lo < hi) {
                const std::int64_t mid = (lo + hi) / 2;
                if (x_of(mid) >= x)
                  hi = mid;
                else
                  lo = mid + 1;
              }
              if (x_of(lo) != x) continue;  // not reachable through this correction
              const std::int64_t p = lo;
              const std::int64_t b = std::max<std::int64_t>(0, p + q - s);
              Recipe r;
              r.ring = static_cast<std::uint8_t>(ring);
              r.fen = static_cast<std::uint8_t>(fen);
              r.group = static_cast<std::uint8_t>(group);
              r.a = static_cast<std::uint16_t>(p - b);
              r.b = static_cast<std::uint16_t>(b);
              r.c = static_cast<std::uint16_t>(s - p - q + b);
              r.d = static_cast<std::uint16_t>(q - b);
              put(static_cast<std::uint32_t>(x), y, r);
            }
          }
        }
      }
    }
  }

  /// The A (with B = sum − A) near `guess` for which `matches(a)` holds, if any.
  template <typename Matches>
  static std::optional<std::int64_t> search(std::int64_t guess, std::int64_t sum,
                                            Matches&& matches) {
    for (std::int64_t delta = 0; delta <= 3; ++delta) {
      for (const std::int64_t a : {guess - delta, guess + delta}) {
        if (a >= 0 && a <= sum && matches(a)) return a;
      }
    }
    return std::nullopt;
  }

  // BIFROST: tube by the interval holding A/S, x along it = trunc((A/S − lo)/(hi − lo) · 99).
  void build_bifrost() {
    const std::int64_t s = std::min<std::int64_t>(kAmplitudeSum, config_.max_amplitude);
    if (s == 0) return;
    for (std::uint32_t ring = 0; ring <= std::min<std::uint32_t>(config_.max_ring, kMaxRings - 1);
         ++ring) {
      for (std::uint32_t group = 0; group <= std::min<std::uint32_t>(config_.max_group, 14);
           ++group) {
        const std::uint32_t global = ring * 15 + group;
        if (global >= calibration_.groups()) continue;
        for (std::uint32_t unit = 0; unit < std::min<std::uint32_t>(calibration_.group_size(), 3);
             ++unit) {
          const UnitCalibration& u = calibration_.unit(global, unit);
          for (std::uint32_t along = 0; along < 100; ++along) {
            const double target = u.lo + (along == 99 ? 1.0 : (along + 0.5) / 99) * (u.hi - u.lo);
            const auto guess =
                static_cast<std::int64_t>(std::llround(target * static_cast<double>(s)));
            const auto a = search(guess, s, [&](std::int64_t cand) {
              const double ratio = static_cast<double>(cand) / static_cast<double>(s);
              if (calibration_.unit_of(global, ratio) != static_cast<int>(unit)) return false;
              const double width = u.hi - u.lo;
              const double t = width == 0.0 ? 0.0 : (ratio - u.lo) / width;
              return static_cast<std::uint32_t>(t * 99) == along;
            });
            if (!a) continue;
            Recipe r;
            r.ring = static_cast<std::uint8_t>(ring);
            r.group = static_cast<std::uint8_t>(group);
            r.a = static_cast<std::uint16_t>(*a);
            r.b = static_cast<std::uint16_t>(s - *a);
            put(ring * config_.resolution + (group % 3) * 100 + along, (group / 3) * 3 + unit, r);
          }
        }
      }
    }
  }

  // CSPEC: y = ((Resolution − 1)·A)/(A + B); with A + B = (Resolution − 1)·k, A = y·k exactly.
  void build_cspec() {
    const std::int64_t steps = config_.resolution - 1;
    if (steps == 0) return;
    const std::int64_t k = std::max<std::int64_t>(1, kAmplitudeSum / steps);
    for (std::uint32_t ring = 0; ring <= std::min<std::uint32_t>(config_.max_ring, kMaxRings - 1);
         ++ring) {
      for (std::uint32_t group = 0; group <= std::min<std::uint32_t>(config_.max_group, 23);
           ++group) {
        const std::uint32_t x = ring * config_.resolution + group * (config_.resolution / 24);
        for (std::int64_t y = 0; y <= steps; ++y) {
          Recipe r;
          r.ring = static_cast<std::uint8_t>(ring);
          r.group = static_cast<std::uint8_t>(group);
          r.a = static_cast<std::uint16_t>(y * k);
          r.b = static_cast<std::uint16_t>((steps - y) * k);
          put(x, static_cast<std::uint32_t>(y), r);
        }
      }
    }
  }

  // MIRACLES: tube A (A ≥ B) or B, the position along it from p = A/S in single precision.
  void build_miracles() {
    const std::int64_t s = std::min<std::int64_t>(kAmplitudeSum, config_.max_amplitude);
    const int h = static_cast<int>(config_.resolution / 2) - 1;
    if (s == 0 || h <= 0) return;
    auto along_of = [h, s](std::int64_t a, bool& tube_b) {
      tube_b = a < s - a;
      const auto p = static_cast<float>(1.0 * static_cast<double>(a) / static_cast<double>(s));
      return tube_b ? static_cast<int>(p * 2 * h)
                    : static_cast<int>(std::round(h - (p - 0.5) * 2 * h));
    };
    for (std::uint32_t ring = 0; ring <= std::min<std::uint32_t>(config_.max_ring, 3); ++ring) {
      for (std::uint32_t group = 0; group < 12; ++group) {
        for (int tube = 0; tube < 2; ++tube) {
          const std::uint32_t x =
              2 * group + ((ring == 1 || ring == 3) ? 24 : 0) + static_cast<std::uint32_t>(tube);
          for (int along = 0; along <= h; ++along) {
            const double p = tube == 0 ? 0.5 + static_cast<double>(h - along) / (2.0 * h)
                                       : (along + 0.5) / (2.0 * h);
            const auto guess = static_cast<std::int64_t>(std::llround(p * static_cast<double>(s)));
            const auto a = search(guess, s, [&](std::int64_t cand) {
              bool tube_b = false;
              const int got = along_of(cand, tube_b);
              return got == along && tube_b == (tube == 1);
            });
            if (!a) continue;
            Recipe r;
            r.ring = static_cast<std::uint8_t>(ring);
            r.group = static_cast<std::uint8_t>(group);
            r.a = static_cast<std::uint16_t>(*a);
            r.b = static_cast<std::uint16_t>(s - *a);
            const int y =
                ((ring == 2 || ring == 3) ? static_cast<int>(config_.resolution / 2) : 0) + along;
            put(x, static_cast<std::uint32_t>(y), r);
          }
        }
      }
    }
  }

  const CaenConfig& config_;
  const Calibration& calibration_;
  ess::LogicalGeometry grid_{1, 1};
  std::vector<Recipe> table_;  // by pixel id − 1
  std::vector<std::uint32_t> reachable_;
};

/// The type byte of a `type` fault: another CAEN instrument's.
std::uint8_t wrong_type(Instrument instrument) {
  return detector_type(instrument) == kTypeLoki ? kTypeBifrost : kTypeLoki;
}

class Generator {
 public:
  Generator(const Settings& s, const CaenConfig& config, const Recipes& recipes)
      : s_(s),
        config_(config),
        recipes_(recipes),
        rng_(s.seed),
        stream_(s, kProgram, detector_type(config.instrument), kFaults,
                wrong_type(config.instrument)),
        packets_(stream_.packets()),
        truth_(gen::open_ground_truth(s.ground_truth, config.instrument == Instrument::kBifrost
                                                          ? "# pulse_time_ns tof_ns pixel source"
                                                          : "# pulse_time_ns tof_ns pixel")) {}
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
        .number("readouts", readouts_)
        .number("neutrons", neutrons_)
        .number("late", late_)
        .number("noise", noise_);
    stream_.add_errors(json).write(s_.summary);
  }

  void print_summary() const { stream_.print_summary(readouts_, neutrons_, noise_, "noise"); }

 private:
  double uniform(double lo, double hi) { return rng_.uniform(lo, hi); }
  std::uint64_t below(std::uint64_t n) { return rng_.below(n); }

  /// A reachable pixel drawn from the shape, in the instrument's logical grid.
  std::uint32_t draw_pixel() {
    const auto& all = recipes_.reachable();
    if (s_.shape == "uniform") return all[below(all.size())];
    const ess::LogicalGeometry& g = recipes_.grid();
    const double cx = s_.spot_x >= 0 ? s_.spot_x : g.nx / 2.0;
    const double cy = s_.spot_y >= 0 ? s_.spot_y : g.ny / 2.0;
    for (int attempt = 0; attempt < 1000; ++attempt) {
      double fx = 0, fy = 0;
      if (s_.shape == "spot") {
        std::normal_distribution<double> n(0, s_.spot_radius);
        fx = cx + n(rng_.engine());
        fy = cy + n(rng_.engine());
      } else {  // ring
        const double r = s_.spot_radius + uniform(-s_.ring_width, s_.ring_width);
        const double angle = uniform(0, 2 * M_PI);
        fx = cx + r * std::cos(angle);
        fy = cy + r * std::sin(angle);
      }
      if (fx < 0 || fy < 0) continue;
      const std::uint32_t pixel =
          g.pixel(static_cast<std::uint32_t>(fx), static_cast<std::uint32_t>(fy));
      if (recipes_.find(pixel) != nullptr) return pixel;
    }
    return all[below(all.size())];  // the shape misses the reachable pixels: anywhere
  }

  CaenReadout readout_of(const Recipe& r, std::uint64_t time_ns) {
    CaenReadout out;
    out.fiber = static_cast<std::uint8_t>(r.ring * 2 + below(2));  // either fibre of the ring
    out.fen = r.fen;
    out.group = r.group;
    const ess::EssTime t = ess::to_ess(time_ns);
    out.time_high = t.high;
    out.time_low = t.low;
    out.a = r.a;
    out.b = r.b;
    out.c = r.c;
    out.d = r.d;
    return out;
  }

  void add(const CaenReadout& r, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    const unsigned queue = s_.mix_queues ? static_cast<unsigned>(below(packets_.queues()))
                                         : (r.fiber / 2U) % packets_.queues();
    if (!packets_.empty(queue) && !packets_.fits(queue, kReadoutSize))
      send_queue(queue, pulse_ns, prev_ns);
    write_readout(packets_.append(queue, kReadoutSize), r);
    ++readouts_;
  }

  void neutron(std::uint64_t reference_ns, std::uint64_t tof, std::uint64_t pulse_ns,
               std::uint64_t prev_ns) {
    const std::uint32_t pixel = draw_pixel();
    // The readout time is what the electronics stamp: efu adds ReadoutConstDelayNS back.
    const std::uint64_t stamped =
        reference_ns + tof - static_cast<std::uint64_t>(config_.readout_delay_ns);
    const Recipe& recipe = *recipes_.find(pixel);
    const CaenReadout r = readout_of(recipe, stamped);
    add(r, pulse_ns, prev_ns);
    ++neutrons_;
    if (truth_) {
      const std::uint64_t decoded = ess::to_ns(r.time_high, r.time_low) +
                                    static_cast<std::uint64_t>(config_.readout_delay_ns);
      truth_ << reference_ns << ' ' << decoded - reference_ns << ' ' << pixel;
      if (config_.instrument == Instrument::kBifrost) truth_ << ' ' << bifrost_source(recipe);
      truth_ << '\n';
    }
  }

  // BIFROST's ev44 source, the tube triplet, as the facility's file writer names it: a ring
  // reads triplets 3·ring .. 3·ring + 2 of each of the 5 arcs, the readout's group g (0..14)
  // being arc g / 3 and triplet 3·ring + g % 3.
  static std::string bifrost_source(const Recipe& r) {
    return "arc=" + std::to_string(r.group / 3) +
           ";triplet=" + std::to_string(3 * r.ring + r.group % 3);
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
    std::uint64_t noise_left = s_.noise_per_pulse;
    for (std::uint64_t i = 0; i < s_.neutrons_per_pulse; ++i) {
      const std::uint64_t tof = kFirstTofNs + i * spacing_;
      neutron(pulse_ns, tof, pulse_ns, prev_ns);
      if (noise_left != 0) {
        // A readout of a real channel whose amplitudes sum to less than --noise-below: efu
        // drops it as readouts.errors.amplitude_low when its --amplitude-threshold is that.
        --noise_left;
        CaenReadout n = readout_of(*recipes_.find(draw_pixel()), pulse_ns + tof + spacing_ / 2);
        const auto quarter = static_cast<std::uint16_t>(
            1 + below(static_cast<std::uint64_t>(std::max(1, (s_.noise_below - 1) / 4))));
        n.a = quarter;
        n.b = quarter;
        n.c = config_.instrument == Instrument::kLoki ? quarter : 0;
        n.d = n.c;
        add(n, pulse_ns, prev_ns);
        ++noise_;
      }
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

  // The corrupt fault: a well-formed packet in the sequence whose readouts are each broken in
  // one known way (the header faults are gen::FaultInjector's). (MIRACLES checks no group: its
  // out-of-range group is an x outside the grid.)
  void write_corrupt(unsigned queue, std::uint64_t pulse_ns) {
    const char* const group_counter =
        config_.instrument == Instrument::kMiracles ? "readout_pixel" : "readout_group";
    const char* const reasons[] = {"readout_length",        "readout_fiber",
                                   "readout_fen",           group_counter,
                                   "readout_time_fraction", "readout_amplitude_zero"};
    for (int k = 0; k < 6; ++k) {
      const auto reason = static_cast<unsigned>(below(6));
      CaenReadout r = readout_of(*recipes_.find(recipes_.reachable()[0]), pulse_ns + 1000);
      r.fiber = static_cast<std::uint8_t>(r.fiber & ~1U);
      if (reason == 0) r.data_length = 23;
      if (reason == 1) r.fiber = 24 + static_cast<std::uint8_t>(below(200));
      if (reason == 2) r.fen = 24 + static_cast<std::uint8_t>(below(200));
      if (reason == 3) r.group = 255;
      if (reason == 4) r.time_low = ess::kTicksPerSecond;
      if (reason == 5) r.a = r.b = r.c = r.d = 0;
      write_readout(packets_.append(queue, kReadoutSize), r);
      stream_.faults().count(reasons[reason]);
    }
  }

  const Settings& s_;
  const CaenConfig& config_;
  const Recipes& recipes_;
  gen::Random rng_;
  gen::EssStream stream_;
  ess::PacketAssembler& packets_;  // stream_'s
  std::ofstream truth_;
  std::uint64_t spacing_ = 0;
  std::uint64_t readouts_ = 0, neutrons_ = 0, noise_ = 0;
  std::uint64_t late_ = 0;  // neutrons of the previous pulse (counted in neutrons_ too)
};

}  // namespace
}  // namespace efu::caen

int main(int argc, char** argv) {
  namespace gen = efu::gen;
  using efu::caen::Settings;
  Settings s;
  CLI::App app{
      "Simulated neutrons of a CAEN charge-division instrument (LoKI, BIFROST, CSPEC, MIRACLES) as "
      "ESS CAEN readout over UDP"};
  gen::add_destination_options(app, s);
  app.add_option("--geometry", s.geometry,
                 "Instrument config JSON, the facility's format (default: the shipped loki.json)");
  app.add_option("--calibration", s.calibration,
                 "Calibration JSON (default: the shipped one of the instrument)");
  gen::add_pulse_options(app, s, /*min_size=*/56);
  app.add_option("--shape", s.shape,
                 "Neutron positions: uniform (over the reachable pixels), spot or ring")
      ->check(CLI::IsMember({"uniform", "spot", "ring"}))
      ->capture_default_str();
  app.add_option("--spot-x", s.spot_x, "Spot/ring centre, logical x (default: the middle)");
  app.add_option("--spot-y", s.spot_y, "Spot/ring centre, logical y (default: the middle)");
  app.add_option("--spot-radius", s.spot_radius, "Spot sigma or ring radius, pixels")
      ->capture_default_str();
  app.add_option("--ring-width", s.ring_width, "Ring half width, pixels")->capture_default_str();
  app.add_option("--noise-per-pulse", s.noise_per_pulse,
                 "Low-amplitude noise readouts per pulse (<= neutrons)");
  app.add_option("--noise-below", s.noise_below,
                 "Noise amplitude sums stay below this (efu's --amplitude-threshold)")
      ->check(CLI::Range(5, 100000))
      ->capture_default_str();
  app.add_option("--late-per-pulse", s.late_per_pulse,
                 "Neutrons of the previous pulse sent with each pulse's readouts (efu measures "
                 "their TOF against the previous pulse)")
      ->check(CLI::Range(0, 8000));
  app.add_flag("--mix-queues", s.mix_queues,
               "Put each readout in a random output queue (default: ring % queues), so that one "
               "ring's readouts reach several of efu's processing threads");
  gen::add_stream_options(app, s, "ESS output queues (ring % queues, or see --mix-queues)",
                          "Write one line per neutron here: pulse_ns tof_ns pixel (BIFROST: and "
                          "the ev44 source, arc=A;triplet=T)",
                          efu::caen::kFaults);
  CLI11_PARSE(app, argc, argv);
  return gen::run_main(efu::caen::kProgram, [&] {
    gen::check_options(s);
    efu::caen::CaenSettings settings;
    settings.geometry_path = s.geometry.empty() ? efu::caen::default_geometry_path() : s.geometry;
    settings.calibration_path = s.calibration;
    const efu::caen::LoadedInstrument instrument = efu::caen::load_instrument(settings);
    const efu::caen::Recipes recipes(instrument.config, instrument.calibration);
    efu::caen::Generator generator(s, instrument.config, recipes);
    generator.run();
    generator.write_summary();
    generator.print_summary();
  });
}
