#include "receive/udp_socket.h"

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
    throw ConfigError(std::string("receive: setsockopt(") + what +
                      ") failed: " + std::strerror(err) + "; " + consequence);
  }
}

/// The address to bind, from --bind and --port (numeric only: no name lookup at start-up).
struct BindAddress {
  sockaddr_storage addr{};
  socklen_t length = 0;
  std::string port_text;
};

BindAddress resolve_bind_address(const UdpSocketConfig& config) {
  if (config.port < 0 || config.port > 65535) {
    throw ConfigError("--port: " + std::to_string(config.port) +
                      " is out of range; expected 0..65535");
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  BindAddress bind;
  bind.port_text = std::to_string(config.port);
  if (const int rc = getaddrinfo(config.bind_address.c_str(), bind.port_text.c_str(), &hints, &res);
      rc != 0 || res == nullptr) {
    throw ConfigError("--bind: '" + config.bind_address + "' is not an address (" +
                      gai_strerror(rc) + "); expected a numeric IPv4 or IPv6 address");
  }
  std::memcpy(&bind.addr, res->ai_addr, res->ai_addrlen);
  bind.length = res->ai_addrlen;
  freeaddrinfo(res);
  return bind;
}

/// The index of --multicast-interface, or 0 (the kernel chooses) when it is not set.
unsigned multicast_interface_index(const std::string& name) {
  if (name.empty()) return 0;
  const unsigned index = if_nametoindex(name.c_str());
  if (index == 0) {
    throw ConfigError("--multicast-interface: '" + name +
                      "' is not an interface of this host; expected a name as in `ip link`");
  }
  return index;
}

void set_sharing_options(int fd, const UdpSocketConfig& config, bool multicast) {
  const int one = 1;
  if (multicast) {
    require_sockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one), "SO_REUSEADDR",
                    "expected to share a multicast group's port");
  }
  if (config.reuse_port) {
    require_sockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one), "SO_REUSEPORT",
                    "expected a kernel that spreads one port over several sockets "
                    "(--receive-threads above 1)");
  }
  if (config.gro) {
    require_sockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one), "UDP_GRO",
                    "expected Linux 5.0 or later for --gro on");
  }
}

/// Asks for `bytes` of receive buffer and returns the usable size the kernel granted.
std::size_t set_receive_buffer(int fd, std::size_t bytes) {
  // A lesson of the UDP measurements in docs/architecture.md §9: a large receive buffer absorbs
  // bursts while the receiver is descheduled.
  const int requested = static_cast<int>(bytes);
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &requested, sizeof(requested));
  int granted = 0;
  socklen_t len = sizeof(granted);
  getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &granted, &len);
  // The kernel doubles the request for its overhead and reports the doubled size.
  const std::size_t usable = static_cast<std::size_t>(granted) / 2;
  spdlog::info("receive: SO_RCVBUF requested {} B, granted {} B", bytes, usable);
  if (usable < bytes) {
    spdlog::warn(
        "receive: SO_RCVBUF capped at {} B by net.core.rmem_max ({}); fix with: "
        "sysctl -w net.core.rmem_max={}",
        usable, read_rmem_max(), bytes);
  }
  return usable;
}

/// Kernel drops are read from the socket's SO_MEMINFO (Receiver::poll_kernel_drops), not asked
/// for per datagram with SO_RXQ_OVFL, which costs the kernel a control message check on every
/// datagram (docs/host.md "Kernel drops"). It must work: without it drops go uncounted.
void require_drop_counts(int fd) {
  std::uint32_t drops = 0;
  if (const int err = read_socket_kernel_drops(fd, drops); err != 0) {
    throw ConfigError(std::string("receive: getsockopt(SO_MEMINFO) failed: ") + std::strerror(err) +
                      "; expected a kernel that reports socket drops (else they go uncounted)");
  }
}

void set_receive_timeout(int fd, int timeout_ms) {
  timeval tv{};
  tv.tv_sec = timeout_ms / 1000;
  tv.tv_usec = (timeout_ms % 1000) * 1000;
  require_sockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv), "SO_RCVTIMEO",
                  "expected a receive timeout (else a stop could wait forever)");
}

/// Binds and returns the port actually bound.
int bind_socket(int fd, const BindAddress& bind) {
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&bind.addr), bind.length) != 0) {
    const int err = errno;
    std::string hint = "expected a free port and an address of this host";
    if (err == EADDRINUSE) hint = "expected a port no other process uses";
    if (err == EACCES) hint = "expected a port >= 1024 or the privilege to bind below it";
    throw ConfigError("--port: cannot bind " + sockaddr_text(bind.addr) + " port " +
                      bind.port_text + ": " + std::strerror(err) + "; " + hint);
  }
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &bound_len);
  return ntohs(bound.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in&>(bound).sin_port
                                          : reinterpret_cast<const sockaddr_in6&>(bound).sin6_port);
}

void join_group(int fd, const sockaddr_storage& group, unsigned ifindex, const std::string& text) {
  int rc = 0;
  if (group.ss_family == AF_INET) {
    ip_mreqn mreq{};
    mreq.imr_multiaddr = reinterpret_cast<const sockaddr_in&>(group).sin_addr;
    mreq.imr_ifindex = static_cast<int>(ifindex);
    rc = setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof(mreq));
  } else {
    ipv6_mreq mreq{};
    mreq.ipv6mr_multiaddr = reinterpret_cast<const sockaddr_in6&>(group).sin6_addr;
    mreq.ipv6mr_interface = ifindex;
    rc = setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &mreq, sizeof(mreq));
  }
  if (rc != 0) {
    const int err = errno;
    throw ConfigError("--bind: cannot join multicast group " + text + ": " + std::strerror(err) +
                      "; expected an interface with multicast enabled");
  }
  spdlog::info("receive: joined multicast group {}", text);
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
  BindAddress bind = resolve_bind_address(config);
  fd_ = ::socket(bind.addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw ConfigError(std::string("socket(): ") + std::strerror(errno));
  // Every step below throws ConfigError naming what failed; the socket is then closed here, as
  // the destructor of a half-made object does not run.
  try {
    const bool multicast = is_multicast(bind.addr);
    const unsigned ifindex = multicast ? multicast_interface_index(config.multicast_interface) : 0;
    // A link-local IPv6 group is only meaningful on one interface: bind needs its scope.
    if (multicast && bind.addr.ss_family == AF_INET6) {
      reinterpret_cast<sockaddr_in6&>(bind.addr).sin6_scope_id = ifindex;
    }
    set_sharing_options(fd_, config, multicast);
    granted_rcvbuf_ = set_receive_buffer(fd_, config.rcvbuf_bytes);
    require_drop_counts(fd_);
    set_receive_timeout(fd_, config.receive_timeout_ms);
    bound_port_ = bind_socket(fd_, bind);
    if (multicast) join_group(fd_, bind.addr, ifindex, config.bind_address);
  } catch (...) {
    ::close(fd_);
    fd_ = -1;
    throw;
  }
  spdlog::info("receive: listening on {} port {}", sockaddr_text(bind.addr), bound_port_);
}

UdpSocket::~UdpSocket() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace efu
