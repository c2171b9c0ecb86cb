// The receive socket: IPv4/IPv6, unicast or multicast, a large SO_RCVBUF and kernel drop counts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace efu {

struct UdpSocketConfig {
  std::string bind_address = "0.0.0.0";
  int port = 9000;
  std::string multicast_interface;  // interface name for the join; "" lets the kernel choose
  std::size_t rcvbuf_bytes = 12'000'000;
  int receive_timeout_ms = 100;  // recvmmsg returns at least this often, to see a stop
  bool reuse_port = false;       // SO_REUSEPORT: several receive threads on one port
  bool gro = false;              // UDP_GRO: the kernel coalesces datagrams of one flow
};

/// The kernel's count of datagrams a UDP socket dropped because its buffer was full
/// (SO_MEMINFO's SK_MEMINFO_DROPS, the drops column of /proc/net/udp): cumulative since the
/// socket was made, 32 bits that wrap. 0 and `drops` set, or the errno of the failure.
int read_socket_kernel_drops(int fd, std::uint32_t& drops) noexcept;
/// The same, or -1 if it cannot be read.
std::int64_t socket_kernel_drops(int fd) noexcept;

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
  std::int64_t kernel_drops() const { return socket_kernel_drops(fd_); }

 private:
  int fd_ = -1;
  std::size_t granted_rcvbuf_ = 0;
  int bound_port_ = 0;
};

}  // namespace efu
