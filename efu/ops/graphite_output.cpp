#include "ops/graphite_output.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "efu/log_limiter.h"
#include "ops/service_thread.h"
#include "startup/threads.h"

namespace efu {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kConnectTimeout = std::chrono::seconds(1);
constexpr auto kWriteTimeout = std::chrono::seconds(1);
constexpr auto kFirstBackoff = std::chrono::seconds(1);
constexpr auto kMaxBackoff = std::chrono::seconds(30);

int poll_ms(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<std::int64_t>(0, left.count()));
}

/// A connected TCP socket (non-blocking), or -1 with `error` set.
int connect_to(const std::string& host, int port, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string port_text = std::to_string(port);
  if (const int rc = getaddrinfo(host.c_str(), port_text.c_str(), &hints, &res); rc != 0) {
    error = gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = res; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = ::poll(&p, 1, poll_ms(Clock::now() + kConnectTimeout));
      int so_error = ETIMEDOUT;
      socklen_t len = sizeof(so_error);
      if (rc == 1) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len);
      errno = so_error;
      rc = so_error == 0 ? 0 : -1;
    }
    if (rc != 0) {
      error = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  return fd;
}

/// Carbon never sends: a readable socket means the peer closed it (or reset it).
bool peer_closed(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  char sink[256];
  const ssize_t n = ::recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) ||
         (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

/// Writes all of `data` (one send() when the socket buffer has room) before `deadline`.
bool send_all(int fd, std::string_view data, Clock::time_point deadline, std::string& error) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      error = std::strerror(errno);
      return false;
    }
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, poll_ms(deadline)) <= 0) {
      error = "write timed out";
      return false;
    }
  }
  return true;
}

}  // namespace

std::string format_graphite(const StatsSnapshot& snapshot, const std::string& prefix) {
  const std::string when = " " + std::to_string(snapshot.time_ns / 1'000'000'000) + "\n";
  std::string out;
  out.reserve(snapshot.counters.size() * (prefix.size() + 48));
  for (const RateSample& c : snapshot.counters) {
    out += prefix;
    out += c.name;
    out += ' ';
    out += std::to_string(c.value);
    out += when;
  }
  return out;
}

GraphiteOutput::GraphiteOutput(GraphiteConfig config, CounterRegistry& counters)
    : config_(std::move(config)),
      sent_intervals_(counters.counter("graphite.sent.intervals")),
      sent_bytes_(counters.counter("graphite.sent.bytes")),
      connects_(counters.counter("graphite.connects")),
      failed_connect_(counters.counter("graphite.failed.connect")),
      failed_write_(counters.counter("graphite.failed.write")),
      dropped_intervals_(counters.counter("graphite.dropped.intervals")) {}

GraphiteOutput::~GraphiteOutput() { stop(); }

void GraphiteOutput::publish(const StatsSnapshot& snapshot) {
  std::string lines = format_graphite(snapshot, config_.prefix);
  {
    std::lock_guard lock(mutex_);
    if (pending_.size() >= kMaxQueued) {
      pending_.pop_front();
      ++overflowed_;
    }
    pending_.push_back(std::move(lines));
  }
  wake_.notify_one();
}

void GraphiteOutput::start() {
  thread_ = start_service_thread([this] { run(); });
}

void GraphiteOutput::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void GraphiteOutput::run() {
  set_thread_name("efu-graphite");
  const std::string where = config_.host + ":" + std::to_string(config_.port);
  LogLimiter connect_log;
  int fd = -1;
  auto backoff = std::chrono::duration_cast<Clock::duration>(kFirstBackoff);
  auto next_attempt = Clock::now();
  std::string payload;
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return !pending_.empty() || stopping_; });
    if (pending_.empty()) break;  // stopping, nothing left to write
    payload.swap(pending_.front());
    pending_.pop_front();
    const std::uint64_t overflowed = overflowed_;
    overflowed_ = 0;
    const bool stopping = stopping_;
    lock.unlock();

    dropped_intervals_.add(overflowed);
    const auto now = Clock::now();
    if (fd >= 0 && peer_closed(fd)) {
      spdlog::warn("graphite: {} closed the connection", where);
      ::close(fd);
      fd = -1;
      next_attempt = now;
    }
    if (fd < 0 && !stopping && now >= next_attempt) {
      std::string error;
      fd = connect_to(config_.host, config_.port, error);
      if (fd < 0) {
        failed_connect_.add();
        if (connect_log.allow()) {
          spdlog::warn("graphite: cannot connect to {}: {}; retrying in {} s", where, error,
                       std::chrono::duration_cast<std::chrono::seconds>(backoff).count());
        }
        next_attempt = now + backoff;
        backoff = std::min<Clock::duration>(backoff * 2, kMaxBackoff);
      } else {
        connects_.add();
        spdlog::info("graphite: connected to {}", where);
        backoff = kFirstBackoff;
      }
    }
    if (fd < 0) {
      dropped_intervals_.add();
    } else if (std::string error; !send_all(fd, payload, now + kWriteTimeout, error)) {
      failed_write_.add();
      dropped_intervals_.add();
      spdlog::warn("graphite: writing to {} failed: {}; reconnecting", where, error);
      ::close(fd);
      fd = -1;
    } else {
      sent_intervals_.add();
      sent_bytes_.add(payload.size());
    }
    lock.lock();
  }
  lock.unlock();
  if (fd >= 0) ::close(fd);
}

}  // namespace efu
