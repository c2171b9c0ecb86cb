// efu-multiblade-gen: simulated Multi-Blade neutrons as ESS VMM3a readout over UDP, with a
// ground-truth file that an end-to-end test can check efu's events against (docs/multiblade.md).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "efu/errors.h"
#include "efu/ess/header_writer.h"
#include "efu/ess/packet_assembler.h"
#include "efu/gen/pacer.h"
#include "efu/gen/packet_sender.h"
#include "geometry.h"
#include "multiblade_pipeline.h"
#include "vmm3_readout.h"

namespace efu::multiblade {
namespace {

constexpr std::uint64_t kPulsePeriodNs = 1'000'000'000 / 14;  // 71.43 ms, the ESS 14 Hz
constexpr std::uint64_t kFirstTofNs = 10'000;

struct Settings {
  std::string host = "127.0.0.1";
  int port = 9000;
  std::string geometry;
  std::uint64_t neutrons_per_pulse = 1000;
  std::uint64_t pulses = 0;
  std::uint64_t count = 0;
  double duration_s = 0;
  double rate_pps = 0;
  double rate_gbps = 0;
  std::uint32_t size = 8972;
  std::string shape = "uniform";
  double spot_x = 32, spot_y = 64, spot_radius = 8, ring_width = 3;
  std::uint64_t noise_per_pulse = 0;
  std::uint64_t jitter_ns = 100;
  std::uint64_t min_spacing_ns = 2000;
  unsigned queues = 1;
  unsigned header_version = 1;
  std::uint64_t seed = 1;
  std::uint64_t start_time_ns = 0;
  std::string ground_truth;
  std::string summary;
  double fault_fraction = 0;
  std::string fault_kinds = "cookie,truncated,version,corrupt";
  std::uint16_t adc_min = 300;
  std::string instrument = "auto";
  bool shuffle = false;
  double delay_fraction = 0;
  std::uint64_t max_delay_ns = 200'000;
  bool random_time = false;
  bool gso = false;
};

enum class Fault { kCookie, kTruncated, kVersion, kCorrupt };

gen::SenderSettings sender_settings(const Settings& s) {
  gen::SenderSettings out;
  out.program = "efu-multiblade-gen";
  out.host = s.host;
  out.port = static_cast<std::uint16_t>(s.port);
  out.max_size = s.size;
  out.gso = s.gso;
  return out;
}

class Generator {
 public:
  Generator(const Settings& s, const Geometry& g)
      : s_(s),
        g_(g),
        rng_(s.seed),
        pacer_(gen::Rate{s.rate_pps, s.rate_pps > 0 ? 0 : s.rate_gbps}),
        sender_(sender_settings(s), pacer_),
        packets_(detector_type(g.instrument()), static_cast<std::uint8_t>(s.header_version), s.size,
                 s.queues) {
    std::stringstream kinds(s.fault_kinds);
    for (std::string k; std::getline(kinds, k, ',');) {
      if (k == "cookie")
        faults_.push_back(Fault::kCookie);
      else if (k == "truncated")
        faults_.push_back(Fault::kTruncated);
      else if (k == "version")
        faults_.push_back(Fault::kVersion);
      else if (k == "corrupt")
        faults_.push_back(Fault::kCorrupt);
      else
        throw ConfigError("--fault-kinds: '" + k +
                          "' is not valid; expected cookie, truncated, version or corrupt");
    }
    if (s.fault_fraction > 0 && faults_.empty()) {
      throw ConfigError(
          "--fault-kinds: empty; expected at least one kind when --fault-fraction > 0");
    }
    if (!s.ground_truth.empty()) {
      truth_.open(s.ground_truth);
      if (!truth_) throw ConfigError("--ground-truth: '" + s.ground_truth + "' cannot be written");
      truth_ << "# pulse_time_ns tof_ns pixel cassette_number wire_coordinate strip_coordinate\n";
    }
  }
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  void run() {
    const std::uint64_t window =
        std::min<std::uint64_t>(kPulsePeriodNs - kFirstTofNs - 100'000, kPulsePeriodNs);
    window_ = window;
    spacing_ = s_.neutrons_per_pulse == 0 ? window : window / s_.neutrons_per_pulse;
    if (!s_.random_time && spacing_ < s_.min_spacing_ns) {
      throw ConfigError("--neutrons-per-pulse: '" + std::to_string(s_.neutrons_per_pulse) +
                        "' spaces neutrons " + std::to_string(spacing_) +
                        " ns apart; expected at most " +
                        std::to_string(window / s_.min_spacing_ns) + " (--min-spacing-ns " +
                        std::to_string(s_.min_spacing_ns) + ")");
    }
    start_ = std::chrono::steady_clock::now();
    pacer_.restart();
    std::uint64_t start_ns = s_.start_time_ns;
    if (start_ns == 0) {
      start_ns = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                std::chrono::system_clock::now().time_since_epoch())
                                                .count());
    }
    std::uint64_t prev_pulse = start_ns - kPulsePeriodNs;
    for (std::uint64_t pulse = 0;; ++pulse) {
      if (s_.pulses != 0 && pulse >= s_.pulses) break;
      if (s_.count != 0 && sent_packets_ >= s_.count) break;
      if (s_.duration_s > 0 && elapsed_s() >= s_.duration_s) break;
      // Pulse times sit on ESS ticks, so what efu decodes is exactly what the truth file says.
      const ess::EssTime pulse_ess = ess::to_ess(start_ns + pulse * kPulsePeriodNs);
      const std::uint64_t pulse_ns = ess::to_ns(pulse_ess.high, pulse_ess.low);
      run_pulse(pulse_ns, prev_pulse);
      prev_pulse = pulse_ns;
    }
    if (!sender_.flush()) throw std::runtime_error(sender_.error());
  }

  void write_summary() const {
    if (s_.summary.empty()) return;
    std::ofstream out(s_.summary);
    out << "{\"packets\": " << sent_packets_ << ", \"data_packets\": " << data_packets_
        << ", \"readouts\": " << readouts_ << ", \"neutrons\": " << neutrons_
        << ", \"noise_wire\": " << noise_[0] << ", \"noise_strip\": " << noise_[1]
        << ", \"delayed\": " << delayed_
        << ", \"exact_truth\": " << (s_.random_time ? "false" : "true")
        << ", \"send_errors\": " << sender_.send_errors() << ", \"faults\": {";
    bool first = true;
    for (const auto& [name, n] : fault_counts_) {
      out << (first ? "" : ", ") << "\"" << name << "\": " << n;
      first = false;
    }
    out << "}}\n";
  }

  void print_summary() const {
    std::printf(
        "sent %llu packets (%llu data), %llu readouts, %llu neutrons, %llu noise hits, "
        "%llu send errors\n",
        static_cast<unsigned long long>(sent_packets_),
        static_cast<unsigned long long>(data_packets_), static_cast<unsigned long long>(readouts_),
        static_cast<unsigned long long>(neutrons_),
        static_cast<unsigned long long>(noise_[0] + noise_[1]),
        static_cast<unsigned long long>(sender_.send_errors()));
  }

 private:
  double elapsed_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  double uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng_);
  }
  std::uint64_t below(std::uint64_t n) {
    return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng_);
  }

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
        fx = s_.spot_x + n(rng_);
        fy = s_.spot_y + n(rng_);
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

  struct Held {
    unsigned queue;
    std::uint64_t release_ns;
    Vmm3Readout readout;
  };

  void append(unsigned queue, const Vmm3Readout& r, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    if (!packets_.empty(queue) && !packets_.fits(queue, kReadoutSize)) {
      send_queue(queue, pulse_ns, prev_ns);
    }
    write_readout(packets_.append(queue, kReadoutSize), r);
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
    const Vmm3Readout r{fiber,
                        c.fen,
                        kReadoutSize,
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
    if (s_.delay_fraction > 0 && uniform(0, 1) < s_.delay_fraction) {
      // Held back and sent once the generator has moved on by up to max_delay_ns: the readout
      // lands in a later packet of its queue, its time unchanged.
      held_.push_back(Held{queue, time_ns + below(s_.max_delay_ns + 1), r});
      ++delayed_;
      return;
    }
    append(queue, r, pulse_ns, prev_pulse_ns);
  }

  void release_held(std::uint64_t now_ns, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    std::size_t kept = 0;
    for (const Held& h : held_) {
      if (h.release_ns <= now_ns) {
        append(h.queue, h.readout, pulse_ns, prev_ns);
      } else {
        held_[kept++] = h;
      }
    }
    held_.resize(kept);
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
    std::span<const std::uint8_t> packet =
        packets_.finish(index, ess::to_ess(pulse_ns), ess::to_ess(prev_ns));
    if (s_.shuffle) {
      // The readouts of the packet in random order (Fisher-Yates over the 20-byte blocks).
      shuffled_.assign(packet.begin(), packet.end());
      const std::size_t header = ess::header_size(packets_.version());
      const std::size_t n = (shuffled_.size() - header) / kReadoutSize;
      for (std::size_t i = n; i > 1; --i) {
        const std::size_t j = below(i);
        std::swap_ranges(
            shuffled_.begin() + static_cast<std::ptrdiff_t>(header + (i - 1) * kReadoutSize),
            shuffled_.begin() + static_cast<std::ptrdiff_t>(header + i * kReadoutSize),
            shuffled_.begin() + static_cast<std::ptrdiff_t>(header + j * kReadoutSize));
      }
      packet = shuffled_;
    }
    send(packet);
    ++data_packets_;
    if (s_.fault_fraction > 0 && uniform(0, 1) < s_.fault_fraction) {
      inject_fault(index, packet, pulse_ns, prev_ns);
    }
  }

  // Faults never touch a packet that carries ground-truth neutrons: each is an extra packet,
  // so every neutron still arrives and each fault lands in exactly one known counter.
  void inject_fault(unsigned index, std::span<const std::uint8_t> good, std::uint64_t pulse_ns,
                    std::uint64_t prev_ns) {
    const Fault kind = faults_[below(faults_.size())];
    std::vector<std::uint8_t> junk(good.begin(), good.end());
    switch (kind) {
      case Fault::kCookie:
        junk[3] = 'X';
        ++fault_counts_["cookie"];
        break;
      case Fault::kVersion:
        junk[1] = 5;
        ++fault_counts_["version"];
        break;
      case Fault::kTruncated:
        junk.resize(1 + below(junk.size() - 1));
        ++fault_counts_["truncated"];
        break;
      case Fault::kCorrupt: {
        // A well-formed packet in the sequence whose readouts are each broken in one known way.
        const char* const reasons[] = {"readout_length", "readout_fiber", "readout_vmm",
                                       "readout_channel", "readout_time_fraction"};
        const ess::EssTime t = ess::to_ess(pulse_ns + 1000);
        for (int k = 0; k < 5; ++k) {
          const unsigned reason = static_cast<unsigned>(below(5));
          Vmm3Readout r{0, 0, kReadoutSize, t.high, t.low, 0, 500, 0, 0, 0, 0};
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
          write_readout(packets_.append(index, kReadoutSize), r);
          ++fault_counts_[reasons[reason]];
        }
        const std::span<const std::uint8_t> corrupt =
            packets_.finish(index, ess::to_ess(pulse_ns), ess::to_ess(prev_ns));
        junk.assign(corrupt.begin(), corrupt.end());
        ++fault_counts_["corrupt"];
        break;
      }
    }
    send(junk);
  }

  void send(std::span<const std::uint8_t> bytes) {
    if (!sender_.send(bytes.data(), static_cast<std::uint32_t>(bytes.size()))) {
      throw std::runtime_error(sender_.error());
    }
    ++sent_packets_;
  }

  const Settings& s_;
  const Geometry& g_;
  std::mt19937_64 rng_;
  gen::Pacer pacer_;
  gen::PacketSender sender_;
  ess::PacketAssembler packets_;
  std::vector<Fault> faults_;
  std::ofstream truth_;
  std::chrono::steady_clock::time_point start_;
  std::uint64_t spacing_ = 0;
  std::uint64_t window_ = 0;
  std::vector<Held> held_;
  std::vector<std::uint8_t> shuffled_;
  std::uint64_t delayed_ = 0;
  std::uint64_t sent_packets_ = 0, data_packets_ = 0, readouts_ = 0, neutrons_ = 0;
  std::uint64_t noise_[2] = {0, 0};
  std::map<std::string, std::uint64_t> fault_counts_;
};

}  // namespace
}  // namespace efu::multiblade

int main(int argc, char** argv) {
  using efu::multiblade::Settings;
  Settings s;
  CLI::App app{"Simulated Multi-Blade neutrons as ESS VMM3a readout over UDP"};
  app.add_option("--host", s.host, "Destination host name or IPv4/IPv6 address")
      ->capture_default_str();
  app.add_option("--port", s.port, "Destination UDP port")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  app.add_option("--geometry", s.geometry,
                 "The facility's instrument config JSON (default: the shipped configs/freia.json)");
  app.add_option("--detector", s.instrument,
                 "auto (from InstrumentGeometry), freia, estia, amor or tblmb: the ESS type byte")
      ->check(CLI::IsMember({"auto", "freia", "estia", "amor", "tblmb"}))
      ->capture_default_str();
  app.add_flag("--shuffle", s.shuffle, "Send the readouts of each packet in random order");
  app.add_option("--delay-fraction", s.delay_fraction,
                 "Hold back this fraction of readouts into later packets (0..1)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--max-delay-ns", s.max_delay_ns,
                 "A held-back readout is sent up to this much generator time later")
      ->capture_default_str();
  app.add_flag("--random-time", s.random_time,
               "Each neutron at a random time in its pulse, in no order (overlaps possible: the "
               "ground truth is then not exact)");
  app.add_option("--neutrons-per-pulse", s.neutrons_per_pulse, "Neutrons per 14 Hz pulse")
      ->capture_default_str();
  app.add_option("--pulses", s.pulses, "Stop after this many pulses (0: no limit)");
  app.add_option("--count", s.count, "Stop at the first pulse end after this many packets");
  app.add_option("--duration", s.duration_s, "Stop at the first pulse end after this many seconds");
  app.add_option("--rate-pps", s.rate_pps, "Packets per second (0: as fast as possible)");
  app.add_option("--rate-gbps", s.rate_gbps, "Gbit/s of UDP payload (instead of --rate-pps)");
  app.add_flag("--gso", s.gso,
               "UDP GSO: consecutive same-size packets leave as one message (UDP_SEGMENT)");
  app.add_option("--size", s.size, "Largest packet, bytes")
      ->check(CLI::Range(52, 8972))
      ->capture_default_str();
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
  app.add_option("--queues", s.queues, "ESS output queues (a cassette's ring % queues)")
      ->check(CLI::Range(1, 12))
      ->capture_default_str();
  app.add_option("--header-version", s.header_version, "ESS header version")
      ->check(CLI::Range(0, 1))
      ->capture_default_str();
  app.add_option("--seed", s.seed, "Random seed")->capture_default_str();
  app.add_option("--start-time-ns", s.start_time_ns, "First pulse time (default: now)");
  app.add_option("--ground-truth", s.ground_truth, "Write one line per neutron here");
  app.add_option("--summary", s.summary, "Write what was sent here, as JSON");
  app.add_option("--fault-fraction", s.fault_fraction,
                 "Extra damaged packet after this fraction of packets")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--fault-kinds", s.fault_kinds, "Comma list: cookie,truncated,version,corrupt")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    if (s.pulses == 0 && s.count == 0 && s.duration_s <= 0) {
      throw efu::ConfigError(
          "--pulses/--count/--duration: none given; expected at least one limit");
    }
    if (s.noise_per_pulse > s.neutrons_per_pulse) {
      throw efu::ConfigError(
          "--noise-per-pulse: '" + std::to_string(s.noise_per_pulse) +
          "' is more than --neutrons-per-pulse; expected at most one per neutron");
    }
    const std::string path =
        s.geometry.empty() ? efu::multiblade::default_geometry_path() : s.geometry;
    efu::multiblade::MultibladeConfig config;
    config.geometry_path = path;
    config.instrument = s.instrument;
    const auto geometry = efu::multiblade::load_geometry(config);
    efu::multiblade::Generator generator(s, geometry);
    generator.run();
    generator.write_summary();
    generator.print_summary();
  } catch (const efu::ConfigError& e) {
    std::fprintf(stderr, "efu-multiblade-gen: %s\n", e.what());
    return efu::kExitConfigError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "efu-multiblade-gen: %s\n", e.what());
    return 1;
  }
  return 0;
}
