#include "udpgen_options.h"

#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "efu/errors.h"

namespace efu::udp {
namespace {

constexpr std::uint32_t kMaxUserData = 65507;  // 65535 - 20 (IPv4) - 8 (UDP)
constexpr double kMaxGbps = 100;
constexpr double kMaxPps = 1e9;            // one datagram per ns
constexpr std::uint32_t kMaxBatch = 1024;  // UIO_MAXIOV: the most sendmmsg takes

std::string format_number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// --size against the sequence format's minimum (--udptx-format picks the format).
void validate_size(UdpgenOptions& o, bool udptx) {
  if (udptx) o.format = SeqFormat::kUdptx32;
  const std::uint32_t min_size = seq_size(o.format);
  if (o.size < min_size || o.size > kMaxUserData) {
    throw ConfigError("--size: '" + std::to_string(o.size) + "' is out of range; expected " +
                      std::to_string(min_size) + ".." + std::to_string(kMaxUserData) +
                      " user data bytes for the " + seq_format_name(o.format) + " format");
  }
}

// --count and --duration; without either the run ends after kDefaultCount datagrams.
void validate_extent(const CLI::App& app, UdpgenOptions& o) {
  if (app.count("--count") && o.count == 0) {
    throw ConfigError("--count: '0' is out of range; expected at least 1 datagram");
  }
  if (app.count("--duration") && !(o.duration_s > 0)) {
    throw ConfigError("--duration: '" + format_number(o.duration_s) +
                      "' is out of range; expected seconds > 0");
  }
  if (o.count == 0 && o.duration_s == 0) o.count = kDefaultCount;
}

// --rate-gbps, converted to datagrams/s at --size.
void set_rate_gbps(UdpgenOptions& o, double rate_gbps) {
  if (!(rate_gbps > 0) || rate_gbps > kMaxGbps) {
    throw ConfigError("--rate-gbps: '" + format_number(rate_gbps) +
                      "' is out of range; expected > 0 and <= " + format_number(kMaxGbps));
  }
  o.pps = rate_gbps * 1e9 / (8.0 * o.size);
  if (o.pps > kMaxPps) {
    throw ConfigError("--rate-gbps: '" + format_number(rate_gbps) + "' at --size " +
                      std::to_string(o.size) + " needs " + format_number(o.pps) +
                      " datagrams/s; expected at most 1e9 (one per ns)");
  }
}

void set_rate_pps(UdpgenOptions& o, double rate_pps) {
  if (!(rate_pps > 0) || rate_pps > kMaxPps) {
    throw ConfigError("--rate-pps: '" + format_number(rate_pps) +
                      "' is out of range; expected > 0 and <= 1e9 (one per ns)");
  }
  o.pps = rate_pps;
  const double gbps = rate_pps * 8.0 * o.size / 1e9;
  if (gbps > kMaxGbps) {
    throw ConfigError("--rate-pps: '" + format_number(rate_pps) + "' at --size " +
                      std::to_string(o.size) + " is " + format_number(gbps) +
                      " Gb/s; expected at most " + format_number(kMaxGbps));
  }
}

// At most one of --rate-gbps and --rate-pps; neither leaves the sender unthrottled.
void validate_rate(const CLI::App& app, UdpgenOptions& o, double rate_gbps, double rate_pps) {
  if (app.count("--rate-gbps") && app.count("--rate-pps")) {
    throw ConfigError("--rate-gbps and --rate-pps were both given; expected at most one");
  }
  if (app.count("--rate-gbps")) set_rate_gbps(o, rate_gbps);
  if (app.count("--rate-pps")) set_rate_pps(o, rate_pps);
}

// The sending details: --batch, --skip-every, --sndbuf, --cpu, --stats-interval.
void validate_sending(const CLI::App& app, const UdpgenOptions& o) {
  if (o.batch < 1 || o.batch > kMaxBatch) {
    throw ConfigError("--batch: '" + std::to_string(o.batch) + "' is out of range; expected 1.." +
                      std::to_string(kMaxBatch));
  }
  if (o.skip_every == 1) {
    throw ConfigError("--skip-every: '1' would skip every datagram; expected 0 (off) or >= 2");
  }
  if (o.sndbuf < 0) {
    throw ConfigError("--sndbuf: '" + std::to_string(o.sndbuf) + "' is negative; expected bytes");
  }
  if (app.count("--cpu") && o.cpu < 0) {
    throw ConfigError("--cpu: '" + std::to_string(o.cpu) + "' is negative; expected a core number");
  }
  if (!(o.stats_interval_s >= 0)) {
    throw ConfigError("--stats-interval: '" + format_number(o.stats_interval_s) +
                      "' is negative; expected seconds (0 = off)");
  }
}

// The checks run in this order and the first failure is the one reported.
void validate(const CLI::App& app, UdpgenOptions& o, double rate_gbps, double rate_pps,
              bool udptx) {
  validate_size(o, udptx);
  validate_extent(app, o);
  validate_rate(app, o, rate_gbps, rate_pps);
  validate_sending(app, o);
}

}  // namespace

UdpgenParse parse_udpgen_options(int argc, char** argv) {
  UdpgenOptions o;
  double rate_gbps = 0;
  double rate_pps = 0;
  bool udptx = false;
  long port = o.port;
  CLI::App app{"efu-udpgen: paced UDP link-test generator for efu --module udp"};
  app.add_option("--host", o.host, "destination name or IPv4/IPv6 address")->capture_default_str();
  app.add_option("--port", port, "destination UDP port")->capture_default_str();
  app.add_option("--size", o.size,
                 "user data bytes per datagram (1..65507; >= 8 efu64, >= 4 udptx32)")
      ->capture_default_str();
  app.add_option("--count", o.count, "datagrams to send (default 1000000 if no --duration)");
  app.add_option("--duration", o.duration_s, "seconds to send (ends at --count too if both)");
  app.add_option("--rate-gbps", rate_gbps,
                 "paced rate in Gb/s of user data (default: unthrottled)");
  app.add_option("--rate-pps", rate_pps, "paced rate in datagrams/s (default: unthrottled)");
  app.add_option("--batch", o.batch, "datagrams per sendmmsg call (1..1024)")
      ->capture_default_str();
  app.add_flag("--gso", o.gso,
               "UDP GSO: up to 64 datagrams (64 KB) per message, cut by the kernel (UDP_SEGMENT)");
  app.add_option("--sndbuf", o.sndbuf, "socket send buffer bytes (default: kernel default)");
  app.add_option("--cpu", o.cpu, "pin the sender to this core");
  app.add_option("--skip-every", o.skip_every,
                 "leave out every K-th sequence number (0 = off): injects known loss")
      ->capture_default_str();
  app.add_flag("--udptx-format", udptx,
               "32-bit host-order sequence from 1 (as the udptx tool sends)");
  app.add_option("--stats-interval", o.stats_interval_s, "seconds between rate lines (0 = off)")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
    if (port < 1 || port > 65535) {
      throw ConfigError("--port: '" + std::to_string(port) +
                        "' is out of range; expected 1..65535");
    }
    o.port = static_cast<std::uint16_t>(port);
    validate(app, o, rate_gbps, rate_pps, udptx);
  } catch (const CLI::CallForHelp& e) {
    return {std::nullopt, app.exit(e)};
  } catch (const CLI::ParseError& e) {
    // CLI11's own messages name the option and the bad text; keep them to one line.
    std::string what = e.what();
    for (char& c : what) {
      if (c == '\n') c = ' ';
    }
    std::cerr << "efu-udpgen: " << what << "\n";
    return {std::nullopt, kExitConfigError};
  } catch (const ConfigError& e) {
    std::cerr << "efu-udpgen: " << e.what() << "\n";
    return {std::nullopt, kExitConfigError};
  }
  return {o, 0};
}

}  // namespace efu::udp
