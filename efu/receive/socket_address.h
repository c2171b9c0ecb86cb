// Addresses of the operator interfaces' TCP sockets: "HOST:PORT" options, numeric binds.
#pragma once

#include <sys/socket.h>

#include <string>

namespace efu {

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  /// "127.0.0.1:8888" or "[::1]:8888".
  std::string text() const;
  static std::string format(const std::string& host, int port);
};

/// A numeric IPv4 or IPv6 address and a port, for bind(). Throws ConfigError naming `option`.
SocketAddress numeric_address(const std::string& host, int port, int socktype, const char* option);

/// The port a bound socket got (for port 0).
int local_port(int fd);

struct HostPort {
  std::string host;  // without the brackets of an IPv6 literal
  int port = 0;
};

/// Splits "HOST:PORT" or "[IPV6]:PORT"; the port must be 1..65535 (0 too if `allow_zero`).
/// Throws ConfigError naming `option` and the expected form.
HostPort split_host_port(const std::string& text, const char* option, bool allow_zero);

}  // namespace efu
