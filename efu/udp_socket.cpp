#include "udp_socket.h"

#include <arpa/inet.h>
#include <linux/sock_diag.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include <spdlog/spdlog.h>

#include "efu/errors.h"

namespace efu {
namespace {

std::string sockaddr_text(const sockaddr_storage& sa) {
  char host[INET6_ADDRSTRLEN] = {};
  if (sa.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(sa).sin_addr, host, sizeof(host));
  } else {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(sa).sin6_addr, host, sizeof(host));
  }
  return host;
}

bool is_multicast(const sockaddr_storage& sa) {
  if (sa.ss_family == AF_INET) {
    return IN_MULTICAST(ntohl(reinterpret_cast<const sockaddr_in&>(sa).sin_addr.s_addr));
  }
  return IN6_IS_ADDR_MULTICAST(&reinterpret_cast<const sockaddr_in6&>(sa).sin6_addr);
}

long read_rmem_max() {
  std::ifstream in("/proc/sys/net/core/rmem_max");
  long v = -1;
  in >> v;
  return v;
}

/// setsockopt() that must succeed: a failure stops start-up naming the option, because efu
/// would otherwise run without it (no drop counts, a receiver that never sees a stop, ...).
void require_sockopt(int fd, int level, int name, const void* value, socklen_t size,
                     const char* what, const char* consequence) {
  if (setsockopt(fd, level, name, value, size) != 0) {
    const int err = errno;
    ::close(fd);
    throw ConfigError(std::string("receive: setsockopt(") + what +
                      ") failed: " + std::strerror(err) + "; " + consequence);
  }
}

}  // namespace

int read_socket_kernel_drops(int fd, std::uint32_t& drops) noexcept {
  // SO_MEMINFO fills as many of the kernel's SK_MEMINFO_VARS values as the buffer holds; the
  // drop count is one of them (sk_drops, what /proc/net/udp shows as "drops").
  std::uint32_t meminfo[SK_MEMINFO_VARS] = {};
  socklen_t len = sizeof(meminfo);
  if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, meminfo, &len) != 0) return errno;
  if (len < (SK_MEMINFO_DROPS + 1) * sizeof(std::uint32_t)) return ENOPROTOOPT;
  drops = meminfo[SK_MEMINFO_DROPS];
  return 0;
}

std::int64_t socket_kernel_drops(int fd) noexcept {
  std::uint32_t drops = 0;
  return read_socket_kernel_drops(fd, drops) == 0 ? std::int64_t{drops} : -1;
}

UdpSocket::UdpSocket(const UdpSocketConfig& config) {
  if (config.port < 0 || config.port > 65535) {
    throw ConfigError("--port: " + std::to_string(config.port) +
                      " is out of range; expected 0..65535");
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string port_text = std::to_string(config.port);
  if (const int rc = getaddrinfo(config.bind_address.c_str(), port_text.c_str(), &hints, &res);
      rc != 0 || res == nullptr) {
    throw ConfigError("--bind: '" + config.bind_address + "' is not an address (" +
                      gai_strerror(rc) + "); expected a numeric IPv4 or IPv6 address");
  }
  sockaddr_storage addr{};
  std::memcpy(&addr, res->ai_addr, res->ai_addrlen);
  const socklen_t addr_len = res->ai_addrlen;
  freeaddrinfo(res);

  fd_ = ::socket(addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw ConfigError(std::string("socket(): ") + std::strerror(errno));

  const bool multicast = is_multicast(addr);
  unsigned ifindex = 0;
  if (multicast && !config.multicast_interface.empty()) {
    ifindex = if_nametoindex(config.multicast_interface.c_str());
    if (ifindex == 0) {
      ::close(fd_);
      fd_ = -1;
      throw ConfigError("--multicast-interface: '" + config.multicast_interface +
                        "' is not an interface of this host; expected a name as in `ip link`");
    }
  }
  // A link-local IPv6 group is only meaningful on one interface: bind needs its scope.
  if (multicast && addr.ss_family == AF_INET6) {
    reinterpret_cast<sockaddr_in6&>(addr).sin6_scope_id = ifindex;
  }
  const int one = 1;
  if (multicast) {
    require_sockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one), "SO_REUSEADDR",
                    "expected to share a multicast group's port");
  }
  if (config.reuse_port) {
    require_sockopt(fd_, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one), "SO_REUSEPORT",
                    "expected a kernel that spreads one port over several sockets "
                    "(--receive-threads above 1)");
  }
  if (config.gro) {
    require_sockopt(fd_, IPPROTO_UDP, UDP_GRO, &one, sizeof(one), "UDP_GRO",
                    "expected Linux 5.0 or later for --gro on");
  }

  // The study's lesson: a large receive buffer absorbs bursts while the receiver is descheduled.
  const int requested = static_cast<int>(config.rcvbuf_bytes);
  setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &requested, sizeof(requested));
  int granted = 0;
  socklen_t len = sizeof(granted);
  getsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &granted, &len);
  granted_rcvbuf_ = static_cast<std::size_t>(granted) / 2;  // the kernel doubles for overhead
  spdlog::info("receive: SO_RCVBUF requested {} B, granted {} B", config.rcvbuf_bytes,
               granted_rcvbuf_);
  if (granted_rcvbuf_ < config.rcvbuf_bytes) {
    spdlog::warn(
        "receive: SO_RCVBUF capped at {} B by net.core.rmem_max ({}); fix with: "
        "sysctl -w net.core.rmem_max={}",
        granted_rcvbuf_, read_rmem_max(), config.rcvbuf_bytes);
  }
  // Kernel drops are read from the socket's SO_MEMINFO (Receiver::poll_kernel_drops), not
  // asked for per datagram with SO_RXQ_OVFL, which costs the kernel a control message check on
  // every datagram (docs/host.md "Kernel drops"). It must work: without it drops go uncounted.
  std::uint32_t drops = 0;
  if (const int err = read_socket_kernel_drops(fd_, drops); err != 0) {
    ::close(fd_);
    fd_ = -1;
    throw ConfigError(std::string("receive: getsockopt(SO_MEMINFO) failed: ") + std::strerror(err) +
                      "; expected a kernel that reports socket drops (else they go uncounted)");
  }
  timeval tv{};
  tv.tv_sec = config.receive_timeout_ms / 1000;
  tv.tv_usec = (config.receive_timeout_ms % 1000) * 1000;
  require_sockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv), "SO_RCVTIMEO",
                  "expected a receive timeout (else a stop could wait forever)");

  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), addr_len) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    std::string hint = "expected a free port and an address of this host";
    if (err == EADDRINUSE) hint = "expected a port no other process uses";
    if (err == EACCES) hint = "expected a port >= 1024 or the privilege to bind below it";
    throw ConfigError("--port: cannot bind " + sockaddr_text(addr) + " port " + port_text + ": " +
                      std::strerror(err) + "; " + hint);
  }
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof(bound);
  getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &bound_len);
  bound_port_ =
      ntohs(bound.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in&>(bound).sin_port
                                       : reinterpret_cast<const sockaddr_in6&>(bound).sin6_port);

  if (multicast) {
    int rc = 0;
    if (addr.ss_family == AF_INET) {
      ip_mreqn mreq{};
      mreq.imr_multiaddr = reinterpret_cast<const sockaddr_in&>(addr).sin_addr;
      mreq.imr_ifindex = static_cast<int>(ifindex);
      rc = setsockopt(fd_, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof(mreq));
    } else {
      ipv6_mreq mreq{};
      mreq.ipv6mr_multiaddr = reinterpret_cast<const sockaddr_in6&>(addr).sin6_addr;
      mreq.ipv6mr_interface = ifindex;
      rc = setsockopt(fd_, IPPROTO_IPV6, IPV6_JOIN_GROUP, &mreq, sizeof(mreq));
    }
    if (rc != 0) {
      const int err = errno;
      ::close(fd_);
      fd_ = -1;
      throw ConfigError("--bind: cannot join multicast group " + config.bind_address + ": " +
                        std::strerror(err) + "; expected an interface with multicast enabled");
    }
    spdlog::info("receive: joined multicast group {}", config.bind_address);
  }
  spdlog::info("receive: listening on {} port {}", sockaddr_text(addr), bound_port_);
}

UdpSocket::~UdpSocket() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace efu
