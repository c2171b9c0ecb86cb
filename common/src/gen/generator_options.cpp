#include "efu/gen/generator_options.h"

#include <CLI/CLI.hpp>

namespace efu::gen {

void add_destination_options(CLI::App& app, GeneratorOptions& o) {
  app.add_option("--host", o.host, "Destination host name or IPv4/IPv6 address")
      ->capture_default_str();
  app.add_option("--port", o.port, "Destination UDP port")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
}

void add_pulse_options(CLI::App& app, GeneratorOptions& o, std::uint32_t min_size) {
  app.add_option("--neutrons-per-pulse", o.neutrons_per_pulse, "Neutrons per 14 Hz pulse")
      ->capture_default_str();
  app.add_option("--pulses", o.pulses, "Stop after this many pulses (0: no limit)");
  app.add_option("--replay-pulses", o.replay_pulses,
                 "Generate only the first N pulses, then send their packets again, pulse by pulse, "
                 "until the limit: a sender limited by sending alone, for throughput benchmarks "
                 "(the summary's readouts and neutrons count the generated pulses; 0: off)");
  app.add_option("--count", o.count, "Stop at the first pulse end after this many packets");
  app.add_option("--duration", o.duration_s, "Stop at the first pulse end after this many seconds");
  app.add_option("--rate-pps", o.rate_pps, "Packets per second (0: as fast as possible)");
  app.add_option("--rate-gbps", o.rate_gbps, "Gbit/s of UDP payload (instead of --rate-pps)");
  app.add_flag("--gso", o.gso,
               "UDP GSO: consecutive same-size packets leave as one message (UDP_SEGMENT)");
  app.add_option("--batch", o.batch,
                 "Packets per send call, sent when the first is due; 1: one by one, evenly "
                 "spaced, as a detector's electronics send")
      ->check(CLI::Range(1U, kMaxSendBatch))
      ->capture_default_str();
  app.add_option("--size", o.size, "Largest packet, bytes")
      ->check(CLI::Range(static_cast<int>(min_size), 8972))
      ->capture_default_str();
}

void add_stream_options(CLI::App& app, GeneratorOptions& o, const std::string& queues_help,
                        const std::string& truth_help, std::span<const Fault> faults) {
  app.add_option("--queues", o.queues, queues_help)
      ->check(CLI::Range(1, 12))
      ->capture_default_str();
  app.add_option("--header-version", o.header_version, "ESS header version")
      ->check(CLI::Range(0, 1))
      ->capture_default_str();
  app.add_option("--seed", o.seed, "Random seed")->capture_default_str();
  app.add_option("--start-time-ns", o.start_time_ns, "First pulse time (default: now)");
  app.add_option("--ground-truth", o.ground_truth, truth_help);
  app.add_option("--summary", o.summary, "Write what was sent here, as JSON");
  app.add_option("--fault-fraction", o.fault_fraction,
                 "Extra damaged packet after this fraction of packets")
      ->check(CLI::Range(0.0, 1.0));
  o.fault_kinds = fault_list(faults);
  app.add_option("--fault-kinds", o.fault_kinds, "Comma list: " + o.fault_kinds)
      ->capture_default_str();
}

void add_reorder_options(CLI::App& app, ReorderOptions& o) {
  app.add_flag("--shuffle", o.shuffle, "Send the readouts of each packet in random order");
  app.add_option("--delay-fraction", o.delay_fraction,
                 "Hold back this fraction of readouts into later packets (0..1)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--max-delay-ns", o.max_delay_ns,
                 "A held-back readout is sent up to this much generator time later")
      ->capture_default_str();
}

void check_options(const GeneratorOptions& o) {
  if (o.pulses == 0 && o.count == 0 && o.duration_s <= 0) {
    throw ConfigError("--pulses/--count/--duration: none given; expected at least one limit");
  }
  if (o.replay_pulses != 0 && !o.ground_truth.empty()) {
    throw ConfigError("--replay-pulses: '" + std::to_string(o.replay_pulses) +
                      "' with --ground-truth; expected one of them (a replay sends neutrons "
                      "again that the ground truth lists once)");
  }
  if (o.noise_per_pulse > o.neutrons_per_pulse) {
    throw ConfigError("--noise-per-pulse: '" + std::to_string(o.noise_per_pulse) +
                      "' is more than --neutrons-per-pulse; expected at most one per neutron");
  }
}

SenderSettings sender_settings(const GeneratorOptions& o, const std::string& program) {
  SenderSettings out;
  out.program = program;
  out.host = o.host;
  out.port = static_cast<std::uint16_t>(o.port);
  out.max_size = o.size;
  out.gso = o.gso;
  out.batch = o.batch;
  return out;
}

}  // namespace efu::gen
