// Command line of efu-udpgen: parsing and validation, separate from the sending loop.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "payload.h"

namespace efu::udp {

struct UdpgenOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 9000;
  std::uint32_t size = 8972;  // user data bytes per datagram
  std::uint64_t count = 0;    // 0: no packet limit (a duration is then set)
  double duration_s = 0;      // 0: no time limit (a count is then set)
  double pps = 0;             // 0: unthrottled; --rate-gbps is converted to this
  std::uint32_t batch = 64;
  bool gso = false;  // UDP GSO: same-size datagrams leave as one message each up to 64
  int sndbuf = 0;    // 0: leave the kernel default
  int cpu = -1;      // -1: no pinning
  std::uint64_t skip_every = 0;
  SeqFormat format = SeqFormat::kEfu64;
  double stats_interval_s = 1;
};

/// Without --count and --duration the generator sends this many datagrams, so it always ends.
inline constexpr std::uint64_t kDefaultCount = 1'000'000;

struct UdpgenParse {
  std::optional<UdpgenOptions> options;  // set: go ahead and send
  int exit_code = 0;                     // otherwise exit with this (0 after --help)
};

/// Parses and validates argv. Bad input prints one line "efu-udpgen: ..." naming the value and
/// what is expected to stderr and yields exit code 2.
UdpgenParse parse_udpgen_options(int argc, char** argv);

}  // namespace efu::udp
