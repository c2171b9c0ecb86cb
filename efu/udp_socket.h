// The receive socket: IPv4/IPv6, unicast or multicast, a large SO_RCVBUF and kernel drop counts.
#pragma once

#include <cstddef>
#include <string>

namespace efu {

struct UdpSocketConfig {
  std::string bind_address = "0.0.0.0";
  int port = 9000;
  std::string multicast_interface;     // interface name for the join; "" lets the kernel choose
  std::size_t rcvbuf_bytes = 12'000'000;
  int receive_timeout_ms = 100;        // recvmmsg returns at least this often, to see a stop
};

/// A bound UDP socket. Throws ConfigError when the address is bad or bind() fails (port in use,
/// permission denied).
class UdpSocket {
 public:
  explicit UdpSocket(const UdpSocketConfig& config);
  ~UdpSocket();
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;

  int fd() const noexcept { return fd_; }
  /// The usable receive buffer the kernel granted (it reports twice that; this is halved).
  std::size_t granted_rcvbuf() const noexcept { return granted_rcvbuf_; }
  /// The port actually bound (differs from the config when it asked for port 0).
  int bound_port() const noexcept { return bound_port_; }

 private:
  int fd_ = -1;
  std::size_t granted_rcvbuf_ = 0;
  int bound_port_ = 0;
};

}  // namespace efu
