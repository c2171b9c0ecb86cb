// efu-multiblade-gen: simulated Multi-Blade neutrons as ESS VMM3a readout over UDP, with a
// ground-truth file that an end-to-end test can check efu's events against (docs/multiblade.md).
//
// What every ESS generator shares (options, pulses, sending, header faults, the summary) is in
// common/include/efu/gen/; this file is the Multi-Blade part: positions, hits, readouts, the
// reordering and delays, and the corrupt-readout fault.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "efu/errors.h"
#include "efu/ess/packet_assembler.h"
#include "efu/gen/ess_stream.h"
#include "efu/gen/faults.h"
#include "efu/gen/generator_options.h"
#include "efu/gen/random.h"
#include "efu/gen/result_files.h"
#include "efu/vmm3a/readout.h"
#include "geometry.h"
#include "multiblade_pipeline.h"

namespace efu::multiblade {
namespace {

using gen::kFirstTofNs;
using gen::kPulsePeriodNs;

constexpr const char* kProgram = "efu-multiblade-gen";
constexpr gen::Fault kFaults[] = {gen::Fault::kCookie, gen::Fault::kTruncated, gen::Fault::kVersion,
                                  gen::Fault::kCorrupt,  gen::Fault::kEmpty,     gen::Fault::kOversize};

/// The shared options (gen::GeneratorOptions) and Multi-Blade's own.
struct Settings : gen::GeneratorOptions, gen::ReorderOptions {
  std::string geometry;
  std::string shape = "uniform";
  double spot_x = 32, spot_y = 64, spot_radius = 8, ring_width = 3;
  std::uint64_t jitter_ns = 100;
  std::uint64_t min_spacing_ns = 2000;
  std::uint16_t adc_min = 300;
  std::string instrument = "auto";
  bool random_time = false;
};

class Generator {
 public:
  Generator(const Settings& s, const Geometry& g)
      : s_(s),
        g_(g),
        rng_(s.seed),
        stream_(s, kProgram, detector_type(g.instrument()), kFaults),
        packets_(stream_.packets()),
        truth_(gen::open_ground_truth(
            s.ground_truth,
            "# pulse_time_ns tof_ns pixel cassette_number wire_coordinate strip_coordinate")) {}
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  void run() {
    const std::uint64_t window = gen::kNeutronWindowNs;
    window_ = window;
    spacing_ = s_.neutrons_per_pulse == 0 ? window : window / s_.neutrons_per_pulse;
    if (!s_.random_time) {
      gen::check_neutron_spacing(s_.neutrons_per_pulse, spacing_, s_.min_spacing_ns,
                                 " (--min-spacing-ns " + std::to_string(s_.min_spacing_ns) + ")");
    }
    stream_.run_pulses([this](std::uint64_t, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
      run_pulse(pulse_ns, prev_ns);
    });
  }

  void write_summary() const {
    gen::SummaryJson json;
    stream_.add_sent(json)
        .number("readouts", readouts_)
        .number("neutrons", neutrons_)
        .number("noise_wire", noise_[0])
        .number("noise_strip", noise_[1])
        .number("delayed", held_.held())
        .flag("exact_truth", !s_.random_time);
    stream_.add_errors(json).write(s_.summary);
  }

  void print_summary() const {
    stream_.print_summary(readouts_, neutrons_, noise_[0] + noise_[1], "noise hits");
  }

 private:
  double uniform(double lo, double hi) { return rng_.uniform(lo, hi); }
  std::uint64_t below(std::uint64_t n) { return rng_.below(n); }

  // A position in generator coordinates: x = local strip 0..63, y = cassette index * 32 + local
  // wire (cassettes in Config[] order), whatever the instrument's own pixel layout is.
  void position(std::uint32_t& x, std::uint32_t& y) {
    const double width = kStripsPerCassette;
    const double height = g_.cassettes() * kWiresPerCassette;
    for (int attempt = 0; attempt < 1000; ++attempt) {
      double fx = 0, fy = 0;
      if (s_.shape == "uniform") {
        fx = uniform(0, width);
        fy = uniform(0, height);
      } else if (s_.shape == "spot") {
        std::normal_distribution<double> n(0, s_.spot_radius);
        fx = s_.spot_x + n(rng_.engine());
        fy = s_.spot_y + n(rng_.engine());
      } else {  // ring
        const double r = s_.spot_radius + uniform(-s_.ring_width, s_.ring_width);
        const double a = uniform(0, 2 * M_PI);
        fx = s_.spot_x + r * std::cos(a);
        fy = s_.spot_y + r * std::sin(a);
      }
      if (fx >= 0 && fy >= 0 && fx < width && fy < height) {
        x = static_cast<std::uint32_t>(fx);
        y = static_cast<std::uint32_t>(fy);
        return;
      }
    }
    // Shape entirely off the detector: its centre, clamped onto it.
    x = std::min(static_cast<std::uint32_t>(std::max(s_.spot_x, 0.0)), kStripsPerCassette - 1);
    y = std::min(static_cast<std::uint32_t>(std::max(s_.spot_y, 0.0)),
                 g_.cassettes() * kWiresPerCassette - 1);
  }

  void append(unsigned queue, const vmm3a::Readout& r, std::uint64_t pulse_ns,
              std::uint64_t prev_ns) {
    if (!packets_.empty(queue) && !packets_.fits(queue, vmm3a::kReadoutSize)) {
      send_queue(queue, pulse_ns, prev_ns);
    }
    vmm3a::write_readout(packets_.append(queue, vmm3a::kReadoutSize), r);
  }

  // Readouts of cassette c go to the output queue of its ring, as on the real instruments.
  unsigned queue_of(std::uint32_t cassette) const {
    return g_.cassette(cassette).ring % packets_.queues();
  }

  void add_readout(std::uint32_t cassette, Plane plane, std::uint32_t local, std::uint16_t adc,
                   std::uint64_t time_ns, std::uint64_t pulse_ns, std::uint64_t prev_pulse_ns) {
    const CassetteConfig& c = g_.cassette(cassette);
    const ess::EssTime t = ess::to_ess(time_ns);
    // Either fibre of the ring (ring = fibre / 2).
    const auto fiber = static_cast<std::uint8_t>(c.ring * 2 + below(2));
    const vmm3a::Readout r{fiber,
                           c.fen,
                           vmm3a::kReadoutSize,
                           t.high,
                           t.low,
                           0,
                           adc,
                           0,
                           0,
                           g_.vmm_of(cassette, plane),
                           g_.channel_of(plane, local)};
    ++readouts_;
    const unsigned queue = queue_of(cassette);
    if (!held_.draw_and_hold(rng_, s_, queue, time_ns, r)) {
      append(queue, r, pulse_ns, prev_pulse_ns);
    }
  }

  void release_held(std::uint64_t now_ns, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    held_.release(now_ns, [&](unsigned queue, const vmm3a::Readout& r) {
      append(queue, r, pulse_ns, prev_ns);
    });
  }

  // Hits of one plane: the centre channel carries the full charge; each neighbour, present with
  // probability 0.7, carries 20-60 % of it, so the centroid always rounds back to the centre.
  void plane_hits(std::uint32_t cassette, Plane plane, std::uint32_t centre, std::uint32_t count,
                  std::uint64_t t0, bool prompt, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    const auto adc = static_cast<std::uint16_t>(s_.adc_min + below(1024 - s_.adc_min));
    const std::uint64_t centre_time = prompt ? t0 : t0 + below(s_.jitter_ns + 1);
    add_readout(cassette, plane, centre, adc, centre_time, pulse_ns, prev_ns);
    for (int side = -1; side <= 1; side += 2) {
      const auto neighbour = static_cast<std::int64_t>(centre) + side;
      if (neighbour < 0 || neighbour >= static_cast<std::int64_t>(count) || uniform(0, 1) > 0.7)
        continue;
      const auto share = static_cast<std::uint16_t>(adc * uniform(0.2, 0.6));
      add_readout(cassette, plane, static_cast<std::uint32_t>(neighbour), share,
                  t0 + below(s_.jitter_ns + 1), pulse_ns, prev_ns);
    }
  }

  void run_pulse(std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    std::uint64_t noise_left = s_.noise_per_pulse;
    for (std::uint64_t i = 0; i < s_.neutrons_per_pulse; ++i) {
      // Random-time mode: every neutron (its wire and strip hits) at a random time in the pulse,
      // in no order, as the facility's own generator does; neutrons may then overlap.
      const std::uint64_t tof =
          s_.random_time ? kFirstTofNs + below(window_) : kFirstTofNs + i * spacing_;
      std::uint32_t x = 0, y = 0;
      position(x, y);
      const std::uint32_t cassette = y / kWiresPerCassette;
      const std::uint32_t wire = y % kWiresPerCassette;
      // The centre wire is the prompt signal at the capture time; the rest are up to jitter_ns
      // later, so the event time (earliest hit) is the neutron's time.
      plane_hits(cassette, Plane::kWire, wire, kWiresPerCassette, pulse_ns + tof, true, pulse_ns,
                 prev_ns);
      plane_hits(cassette, Plane::kStrip, x, kStripsPerCassette, pulse_ns + tof, false, pulse_ns,
                 prev_ns);
      ++neutrons_;
      if (truth_) {
        const std::uint32_t wc = g_.coordinate_of(cassette, Plane::kWire, wire);
        const std::uint32_t sc = g_.coordinate_of(cassette, Plane::kStrip, x);
        truth_ << pulse_ns << ' ' << tof << ' ' << g_.pixel(wc, sc) << ' '
               << g_.cassette(cassette).cassette_number << ' ' << wc << ' ' << sc << '\n';
      }
      // A noise hit halfway to the next neutron: alone in its time group, so never an event.
      if (noise_left != 0) {
        --noise_left;
        const auto cassette_n = static_cast<std::uint32_t>(below(g_.cassettes()));
        const Plane plane = below(2) == 0 ? Plane::kWire : Plane::kStrip;
        const std::uint32_t n = plane == Plane::kWire ? kWiresPerCassette : kStripsPerCassette;
        add_readout(cassette_n, plane, static_cast<std::uint32_t>(below(n)),
                    static_cast<std::uint16_t>(s_.adc_min + below(200)),
                    pulse_ns + tof + spacing_ / 2, pulse_ns, prev_ns);
        ++noise_[static_cast<unsigned>(plane)];
      }
      if (!held_.empty()) release_held(pulse_ns + tof, pulse_ns, prev_ns);
    }
    // Whatever is still held goes out with the last packets of the pulse.
    release_held(std::numeric_limits<std::uint64_t>::max(), pulse_ns, prev_ns);
    for (unsigned q = 0; q < packets_.queues(); ++q) {
      if (!packets_.empty(q)) send_queue(q, pulse_ns, prev_ns);
    }
  }

  void send_queue(unsigned index, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    const std::span<const std::uint8_t> packet = gen::finish_packet(
        packets_, index, pulse_ns, prev_ns, s_, vmm3a::kReadoutSize, rng_, shuffled_);
    stream_.send_data(index, packet, pulse_ns, prev_ns, rng_,
                      [&](unsigned queue) { write_corrupt(queue, pulse_ns); });
  }

  // The corrupt fault: a well-formed packet in the sequence whose readouts are each broken in
  // one known way (the header faults are gen::FaultInjector's).
  void write_corrupt(unsigned queue, std::uint64_t pulse_ns) {
    const char* const reasons[] = {"readout_length", "readout_fiber", "readout_vmm",
                                   "readout_channel", "readout_time_fraction"};
    const ess::EssTime t = ess::to_ess(pulse_ns + 1000);
    for (int k = 0; k < 5; ++k) {
      const unsigned reason = static_cast<unsigned>(below(5));
      vmm3a::Readout r{0, 0, vmm3a::kReadoutSize, t.high, t.low, 0, 500, 0, 0, 0, 0};
      const CassetteConfig& c0 = g_.cassette(0);
      r.fiber = static_cast<std::uint8_t>(c0.ring * 2);
      r.fen = c0.fen;
      r.vmm = g_.vmm_of(0, Plane::kStrip);
      r.channel = g_.channel_of(Plane::kStrip, 0);
      if (reason == 0) r.data_length = 19;
      if (reason == 1) r.fiber = 250;
      if (reason == 2) r.vmm = 23;  // hybrid 11: beyond every instrument's hybrids
      if (reason == 3) r.channel = 200;
      if (reason == 4) r.time_low = ess::kTicksPerSecond;
      vmm3a::write_readout(packets_.append(queue, vmm3a::kReadoutSize), r);
      stream_.faults().count(reasons[reason]);
    }
  }

  const Settings& s_;
  const Geometry& g_;
  gen::Random rng_;
  gen::EssStream stream_;
  ess::PacketAssembler& packets_;  // stream_'s
  std::ofstream truth_;
  std::uint64_t spacing_ = 0;
  std::uint64_t window_ = 0;
  gen::HeldReadouts<vmm3a::Readout> held_;
  std::vector<std::uint8_t> shuffled_;
  std::uint64_t readouts_ = 0, neutrons_ = 0;
  std::uint64_t noise_[2] = {0, 0};
};

}  // namespace
}  // namespace efu::multiblade

int main(int argc, char** argv) {
  namespace gen = efu::gen;
  using efu::multiblade::Settings;
  Settings s;
  CLI::App app{"Simulated Multi-Blade neutrons as ESS VMM3a readout over UDP"};
  gen::add_destination_options(app, s);
  app.add_option("--geometry", s.geometry,
                 "The facility's instrument config JSON (default: the shipped configs/freia.json)");
  app.add_option("--detector", s.instrument,
                 "auto (from InstrumentGeometry), freia, estia, amor or tblmb: the ESS type byte")
      ->check(CLI::IsMember({"auto", "freia", "estia", "amor", "tblmb"}))
      ->capture_default_str();
  gen::add_reorder_options(app, s);
  app.add_flag("--random-time", s.random_time,
               "Each neutron at a random time in its pulse, in no order (overlaps possible: the "
               "ground truth is then not exact)");
  gen::add_pulse_options(app, s, /*min_size=*/52);
  app.add_option("--shape", s.shape, "Neutron positions: uniform, spot or ring")
      ->check(CLI::IsMember({"uniform", "spot", "ring"}))
      ->capture_default_str();
  app.add_option("--spot-x", s.spot_x, "Spot/ring centre, strips")->capture_default_str();
  app.add_option("--spot-y", s.spot_y, "Spot/ring centre, cassette index * 32 + wire")
      ->capture_default_str();
  app.add_option("--spot-radius", s.spot_radius, "Spot sigma or ring radius")
      ->capture_default_str();
  app.add_option("--ring-width", s.ring_width, "Ring half width")->capture_default_str();
  app.add_option("--noise-per-pulse", s.noise_per_pulse,
                 "Single-channel noise hits per pulse (<= neutrons)");
  app.add_option("--jitter-ns", s.jitter_ns, "Hits follow the neutron by 0..jitter ns")
      ->check(CLI::Range(0, 400))
      ->capture_default_str();
  app.add_option("--min-spacing-ns", s.min_spacing_ns, "Refuse neutron spacings below this")
      ->capture_default_str();
  gen::add_stream_options(app, s, "ESS output queues (a cassette's ring % queues)",
                          "Write one line per neutron here", efu::multiblade::kFaults);
  CLI11_PARSE(app, argc, argv);
  return gen::run_main(efu::multiblade::kProgram, [&] {
    gen::check_options(s);
    efu::multiblade::MultibladeConfig config;
    config.geometry_path =
        s.geometry.empty() ? efu::multiblade::default_geometry_path() : s.geometry;
    config.instrument = s.instrument;
    const auto geometry = efu::multiblade::load_geometry(config);
    efu::multiblade::Generator generator(s, geometry);
    generator.run();
    generator.write_summary();
    generator.print_summary();
  });
}
