#include "efu/gen/packet_sender.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "efu/errors.h"

namespace efu::gen {
namespace {

int connect_udp(const SenderSettings& s) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(s.port);
  if (const int rc = getaddrinfo(s.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    throw ConfigError("--host: '" + s.host + "' does not resolve (" + gai_strerror(rc) +
                      "); expected a host name or IPv4/IPv6 address");
  }
  int fd = -1;
  int error = 0;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    // Connected: the kernel skips the per-datagram route lookup.
    if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      error = errno;
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) {
    throw ConfigError("--host: cannot send to '" + s.host + "' port " + port + " (" +
                      std::strerror(error != 0 ? error : errno) + ")");
  }
  return fd;
}

void request_sndbuf(int fd, const SenderSettings& s) {
  if (s.sndbuf <= 0) return;
  // SO_SNDBUFFORCE passes net.core.wmem_max when privileged; otherwise the capped request.
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &s.sndbuf, sizeof s.sndbuf) != 0) {
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &s.sndbuf, sizeof s.sndbuf);
  }
  int actual = 0;
  socklen_t len = sizeof actual;
  getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &actual, &len);
  if (actual / 2 < s.sndbuf) {  // the kernel reports twice the usable size
    std::fprintf(stderr, "%s: warning: --sndbuf %d capped to %d by net.core.wmem_max\n",
                 s.program.c_str(), s.sndbuf, actual / 2);
  }
}

constexpr std::size_t kControlSpace = CMSG_SPACE(sizeof(std::uint16_t));

/// Fails start-up in one line if the kernel has no UDP GSO (Linux < 4.18): set the socket's
/// default segment size and take it back (0: the per-message control message decides).
void check_gso(int fd) {
  int size = 1000;
  if (setsockopt(fd, SOL_UDP, UDP_SEGMENT, &size, sizeof size) != 0) {
    const int error = errno;
    close(fd);
    throw ConfigError(std::string("--gso: the kernel refuses UDP_SEGMENT (") +
                      std::strerror(error) + "); expected Linux 4.18 or later, or no --gso");
  }
  size = 0;
  setsockopt(fd, SOL_UDP, UDP_SEGMENT, &size, sizeof size);
}

}  // namespace

PacketSender::PacketSender(const SenderSettings& settings, const Pacer& pacer,
                           const std::atomic<bool>* stop)
    : settings_(settings),
      pacer_(pacer),
      stop_(stop),
      stride_((settings.max_size + 63) / 64 * 64),
      buffers_(static_cast<std::size_t>(settings.batch) * stride_),
      iov_(settings.batch),
      msgs_(settings.batch),
      msg_datagrams_(settings.batch),
      msg_bytes_(settings.batch),
      control_(settings.gso ? settings.batch * kControlSpace : 0) {
  if (settings.batch == 0) throw ConfigError("--batch: 0; expected at least 1");
  fd_ = connect_udp(settings_);
  if (settings_.gso) check_gso(fd_);
  request_sndbuf(fd_, settings_);
  for (unsigned i = 0; i < settings.batch; ++i) {
    iov_[i] = iovec{buffers_.data() + i * stride_, 0};
    msgs_[i] = mmsghdr{};
  }
}

PacketSender::~PacketSender() {
  if (fd_ >= 0) close(fd_);
}

bool PacketSender::commit(std::uint32_t size) {
  iov_[queued_].iov_len = size;
  if (++queued_ == settings_.batch) return flush();
  return true;
}

bool PacketSender::send(const std::uint8_t* data, std::uint32_t size) {
  std::memcpy(buffer(), data, size);
  return commit(size);
}

std::uint16_t PacketSender::local_port() const noexcept {
  sockaddr_storage local{};
  socklen_t len = sizeof local;
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&local), &len) != 0) return 0;
  if (local.ss_family == AF_INET)
    return ntohs(reinterpret_cast<const sockaddr_in&>(local).sin_port);
  if (local.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6&>(local).sin6_port);
  }
  return 0;
}

unsigned PacketSender::build_messages() noexcept {
  unsigned count = 0;
  for (unsigned i = 0; i < queued_;) {
    const std::size_t segment = iov_[i].iov_len;
    unsigned n = 1;
    std::size_t bytes = segment;
    if (settings_.gso) {
      // Same-size datagrams join the message; one shorter datagram may close it (the kernel
      // makes the last segment of a GSO message the rest of its payload). An empty datagram
      // never joins: as the rest of a payload it would be no segment at all, and vanish.
      while (i + n < queued_ && n < kMaxGsoSegments) {
        const std::size_t next = iov_[i + n].iov_len;
        if (next == 0 || next > segment || bytes + next > kMaxGsoBytes) break;
        bytes += next;
        ++n;
        if (next < segment) break;
      }
    }
    mmsghdr& m = msgs_[count];
    m = mmsghdr{};
    m.msg_hdr.msg_iov = &iov_[i];
    m.msg_hdr.msg_iovlen = n;
    if (n > 1) {
      std::uint8_t* control = control_.data() + count * kControlSpace;
      std::memset(control, 0, kControlSpace);
      m.msg_hdr.msg_control = control;
      m.msg_hdr.msg_controllen = kControlSpace;
      cmsghdr* c = CMSG_FIRSTHDR(&m.msg_hdr);
      c->cmsg_level = SOL_UDP;
      c->cmsg_type = UDP_SEGMENT;
      c->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
      const auto gso_size = static_cast<std::uint16_t>(segment);
      std::memcpy(CMSG_DATA(c), &gso_size, sizeof gso_size);
    }
    msg_datagrams_[count] = n;
    msg_bytes_[count] = bytes;
    ++count;
    i += n;
  }
  return count;
}

bool PacketSender::flush() {
  if (queued_ == 0) return error_.empty();
  // The batch leaves when its first datagram is due.
  pacer_.wait_for(packets_, bytes_, stop_);
  const unsigned messages = build_messages();
  unsigned done = 0;
  while (done < messages) {
    const int sent = sendmmsg(fd_, msgs_.data() + done, messages - done, 0);
    if (sent < 0) {
      if (stopped()) break;  // unsent datagrams are not counted
      if (errno == EINTR || errno == ECONNREFUSED || errno == ENOBUFS || errno == EAGAIN) {
        ++send_errors_;
        continue;
      }
      const int error = errno;
      error_ = std::string("sendmmsg failed: ") + std::strerror(error);
      if (settings_.gso && (error == EIO || error == EINVAL || error == EMSGSIZE)) {
        error_ += " (with --gso: the route to the receiver may not take UDP GSO messages of " +
                  std::to_string(msg_datagrams_[done]) + " datagrams; try without --gso)";
      }
      break;
    }
    for (int i = 0; i < sent; ++i) {
      const unsigned m = done + static_cast<unsigned>(i);
      bytes_ += msg_bytes_[m];
      packets_ += msg_datagrams_[m];
    }
    messages_ += static_cast<std::uint64_t>(sent);
    ++send_calls_;
    done += static_cast<unsigned>(sent);
  }
  const bool complete = done == messages;
  queued_ = 0;
  return complete && error_.empty();
}

}  // namespace efu::gen
