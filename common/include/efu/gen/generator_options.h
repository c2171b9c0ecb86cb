// The command line every ESS detector generator shares (efu-multiblade-gen, efu-caen-gen):
// destination, pulses and limits, rate, packet size, output queues, header version, seed, start
// time, ground truth, summary and faults. Each generator adds its detector's own options between
// these groups (the help lists options in the order they are added) and checks its own.
//
//   gen::GeneratorOptions o;
//   CLI::App app{"..."};
//   gen::add_destination_options(app, o);
//   ... detector options ...
//   gen::add_pulse_options(app, o, /*min_size=*/52);
//   gen::add_stream_options(app, o, "ESS output queues (ring % queues)", "Write ...", kFaults);
//   CLI11_PARSE(app, argc, argv);
//   return gen::run_main("efu-mygen", [&] { gen::check_options(o); ... });
#pragma once

#include <cstdint>
#include <cstdio>
#include <exception>
#include <span>
#include <string>

#include "efu/errors.h"
#include "efu/gen/faults.h"
#include "efu/gen/pacer.h"
#include "efu/gen/packet_sender.h"

namespace CLI {
class App;
}

namespace efu::gen {

struct GeneratorOptions {
  std::string host = "127.0.0.1";
  int port = 9000;
  std::uint64_t neutrons_per_pulse = 1000;
  std::uint64_t pulses = 0;
  std::uint64_t replay_pulses = 0;  // 0: every pulse generated; N: the first N, then replayed
  std::uint64_t count = 0;
  double duration_s = 0;
  double rate_pps = 0;
  double rate_gbps = 0;
  bool gso = false;
  unsigned batch = 64;  // datagrams per send call; 1: one by one, each on its own schedule slot
  std::uint32_t size = 8972;
  std::uint64_t noise_per_pulse = 0;  // registered by the detector (what its noise is)
  unsigned queues = 1;
  unsigned header_version = 1;
  std::uint64_t seed = 1;
  std::uint64_t start_time_ns = 0;  // 0: now
  std::string ground_truth;
  std::string summary;
  double fault_fraction = 0;
  std::string fault_kinds;  // default: every kind the generator accepts
};

/// How a VMM3a generator reorders its readouts (efu-multiblade-gen, efu-nmx-gen, efu-trex-gen):
/// --shuffle mixes the readouts within each packet, --delay-fraction holds readouts back into a
/// later packet of their queue (gen::draw_delay_ns(), gen::HeldReadouts). A detector's settings
/// derive from it next to GeneratorOptions.
struct ReorderOptions {
  bool shuffle = false;
  double delay_fraction = 0;
  std::uint64_t max_delay_ns = 200'000;
};

/// --host, --port.
void add_destination_options(CLI::App& app, GeneratorOptions& o);
/// --neutrons-per-pulse, --pulses, --replay-pulses, --count, --duration, --rate-pps,
/// --rate-gbps, --gso, --batch (1..kMaxSendBatch), --size (min_size..8972: a header and one
/// readout at least).
void add_pulse_options(CLI::App& app, GeneratorOptions& o, std::uint32_t min_size);
/// --queues, --header-version, --seed, --start-time-ns, --ground-truth, --summary,
/// --fault-fraction, --fault-kinds (the kinds `faults`, all by default).
void add_stream_options(CLI::App& app, GeneratorOptions& o, const std::string& queues_help,
                        const std::string& truth_help, std::span<const Fault> faults);

/// --shuffle, --delay-fraction (0..1), --max-delay-ns.
void add_reorder_options(CLI::App& app, ReorderOptions& o);

/// Throws ConfigError when no limit is given, when there is more than one noise hit per
/// neutron, or when --replay-pulses comes with --ground-truth (a replay repeats neutrons the
/// ground truth lists once).
void check_options(const GeneratorOptions& o);

SenderSettings sender_settings(const GeneratorOptions& o, const std::string& program);
/// --rate-pps if given, else --rate-gbps.
inline Rate rate_of(const GeneratorOptions& o) {
  return Rate{o.rate_pps, o.rate_pps > 0 ? 0 : o.rate_gbps};
}

/// Runs `body` and turns its exceptions into "<program>: <message>" on stderr and the exit code:
/// 2 for a ConfigError, 1 for anything else, 0 when it returns.
template <typename Body>
int run_main(const char* program, Body&& body) {
  try {
    body();
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return kExitConfigError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
  return 0;
}

}  // namespace efu::gen
