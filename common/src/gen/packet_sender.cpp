#include "efu/gen/packet_sender.h"

#include <netdb.h>
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

}  // namespace

PacketSender::PacketSender(const SenderSettings& settings, const Pacer& pacer,
                           const std::atomic<bool>* stop)
    : settings_(settings),
      pacer_(pacer),
      stop_(stop),
      stride_((settings.max_size + 63) / 64 * 64),
      buffers_(static_cast<std::size_t>(settings.batch) * stride_),
      iov_(settings.batch),
      msgs_(settings.batch) {
  if (settings.batch == 0) throw ConfigError("--batch: 0; expected at least 1");
  fd_ = connect_udp(settings_);
  request_sndbuf(fd_, settings_);
  for (unsigned i = 0; i < settings.batch; ++i) {
    iov_[i] = iovec{buffers_.data() + i * stride_, 0};
    msgs_[i] = mmsghdr{};
    msgs_[i].msg_hdr.msg_iov = &iov_[i];
    msgs_[i].msg_hdr.msg_iovlen = 1;
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

bool PacketSender::flush() {
  if (queued_ == 0) return error_.empty();
  // The batch leaves when its first datagram is due.
  pacer_.wait_for(packets_, bytes_, stop_);
  unsigned done = 0;
  while (done < queued_) {
    const int sent = sendmmsg(fd_, msgs_.data() + done, queued_ - done, 0);
    if (sent < 0) {
      if (stopped()) break;  // unsent datagrams are not counted
      if (errno == EINTR || errno == ECONNREFUSED || errno == ENOBUFS || errno == EAGAIN) {
        ++send_errors_;
        continue;
      }
      error_ = std::string("sendmmsg failed: ") + std::strerror(errno);
      break;
    }
    for (int i = 0; i < sent; ++i) bytes_ += iov_[done + static_cast<unsigned>(i)].iov_len;
    packets_ += static_cast<std::uint64_t>(sent);
    done += static_cast<unsigned>(sent);
  }
  const bool complete = done == queued_;
  queued_ = 0;
  return complete && error_.empty();
}

}  // namespace efu::gen
