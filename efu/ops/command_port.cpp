#include "ops/command_port.h"

#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

#include <spdlog/spdlog.h>

#include "efu/errors.h"
#include "ops/service_thread.h"
#include "receive/socket_address.h"
#include "startup/threads.h"

namespace efu {
namespace {

using Clock = std::chrono::steady_clock;

// Requests answered per second over all clients: enough for the efushell scripts (efustats.py
// asks one request per counter), low enough that a client hammering the port takes only a
// small share of a core from the data path.
constexpr double kRequestsPerSecond = 5000;
constexpr double kRequestBurst = 500;
// How long a client that sent an over-long request gets to read the error before it is closed.
constexpr auto kDrainTime = std::chrono::seconds(2);
constexpr std::string_view kBusyReply = "Error: <BUSY>";
// Per-client kernel send buffer (the kernel doubles it): bounds what a client that never reads
// can make efu hold, and lets the idle time-out find it soon.
constexpr int kClientSendBuffer = 16384;

}  // namespace

struct CommandPort::Client {
  int fd = -1;
  std::string out;  // reply bytes not yet written
  Clock::time_point deadline;
  bool draining = false;  // over-long request: reply, then discard input until EOF
  bool closed = false;

  void close() {
    if (!closed) ::close(fd);
    closed = true;
  }
};

// What the server thread keeps from one poll round to the next.
struct CommandPort::Loop {
  std::vector<Client> clients;
  std::vector<pollfd> fds;  // the eventfd, the listening socket, then one per client
  std::array<char, CommandProtocol::kMaxRequestBytes + 1> buffer{};
  double tokens = kRequestBurst;  // requests that may be answered now (a token bucket)
  Clock::time_point refilled = Clock::now();
  bool exit_requested = false;

  // Adds the tokens earned since the last refill, up to the burst; true if a request may be
  // read now.
  bool refill(Clock::time_point now) {
    tokens =
        std::min(kRequestBurst, tokens + kRequestsPerSecond *
                                             std::chrono::duration<double>(now - refilled).count());
    refilled = now;
    return tokens >= 1;
  }
};

CommandPort::CommandPort(const CommandPortConfig& config, const CommandProtocol& protocol,
                         CounterRegistry& counters)
    : config_(config),
      protocol_(protocol),
      requests_(counters.counter("command.requests")),
      bad_command_(counters.counter("command.malformed.bad_command")),
      bad_args_(counters.counter("command.malformed.bad_args")),
      too_long_(counters.counter("command.malformed.too_long")),
      accepted_(counters.counter("command.clients.accepted")),
      rejected_(counters.counter("command.clients.rejected")),
      closed_idle_(counters.counter("command.clients.closed_idle")),
      closed_slow_(counters.counter("command.clients.closed_slow")),
      connected_(counters.gauge("command.clients.connected")) {
  const SocketAddress addr =
      numeric_address(config.bind_address, config.port, SOCK_STREAM, "--command-bind");
  listen_fd_ = ::socket(addr.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int on = 1;
  if (listen_fd_ < 0 || ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
      ::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr.storage), addr.length) != 0 ||
      ::listen(listen_fd_, 16) != 0) {
    const std::string err = std::strerror(errno);
    if (listen_fd_ >= 0) ::close(listen_fd_);
    throw ConfigError("--command-port: cannot listen on " + addr.text() + ": " + err +
                      "; expected a free TCP port on a local address");
  }
  bound_port_ = local_port(listen_fd_);
  address_text_ = SocketAddress::format(config.bind_address, bound_port_);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    ::close(listen_fd_);
    throw ConfigError(std::string("--command-port: eventfd(): ") + std::strerror(errno));
  }
}

CommandPort::~CommandPort() {
  stop();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void CommandPort::start(std::function<void()> on_exit) {
  on_exit_ = std::move(on_exit);
  thread_ = start_service_thread([this] { run(); });
}

void CommandPort::stop() {
  if (!thread_.joinable()) return;
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof(one));
  thread_.join();
}

void CommandPort::run() {
  set_thread_name("efu-command");
  Loop loop;
  while (wait_for_events(loop)) {
    const auto now = Clock::now();
    serve_clients(loop, now);
    if (loop.fds[1].revents & POLLIN) accept_clients(loop, now);
    close_expired(loop, now);
  }
  for (Client& c : loop.clients) c.close();
  connected_.set(0);
}

// Polls the eventfd, the listening socket and every client until one is ready or the nearest
// client deadline; false when stop() was called or poll() failed. While the rate limit has no
// token left, clients are not polled for reading and the wait is short, so reading resumes
// as soon as a token is earned.
bool CommandPort::wait_for_events(Loop& loop) {
  const auto now = Clock::now();
  const bool may_read = loop.refill(now);
  loop.fds.clear();
  loop.fds.push_back({wake_fd_, POLLIN, 0});
  loop.fds.push_back({listen_fd_, POLLIN, 0});
  auto timeout = std::chrono::milliseconds(1000);
  for (const Client& c : loop.clients) {
    short events = 0;
    if (!c.out.empty())
      events = POLLOUT;
    else if (may_read || c.draining)
      events = POLLIN;
    loop.fds.push_back({c.fd, events, 0});
    timeout = std::min(timeout, std::chrono::ceil<std::chrono::milliseconds>(
                                    std::max(c.deadline - now, Clock::duration::zero())));
  }
  if (!may_read) timeout = std::min(timeout, std::chrono::milliseconds(1));
  if (::poll(loop.fds.data(), loop.fds.size(), static_cast<int>(timeout.count())) < 0 &&
      errno != EINTR) {
    spdlog::error("command port: poll(): {}", std::strerror(errno));
    return false;
  }
  return loop.fds[0].revents == 0;  // set: stop()
}

void CommandPort::serve_clients(Loop& loop, TimePoint now) {
  for (std::size_t i = 0; i < loop.clients.size(); ++i) {
    const short revents = loop.fds[i + 2].revents;
    if (revents != 0) serve_client(loop, loop.clients[i], revents, now);
  }
}

// One client that poll() reported: write what is pending, or read one request and answer it.
void CommandPort::serve_client(Loop& loop, Client& c, short revents, TimePoint now) {
  if (revents & POLLOUT) {
    if (!flush(c, now)) c.close();
    return;
  }
  if (!(revents & (POLLIN | POLLHUP | POLLERR))) return;
  const ssize_t n = ::recv(c.fd, loop.buffer.data(), loop.buffer.size(), MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n <= 0) {  // the peer closed, or the connection failed
    c.close();
    return;
  }
  if (c.draining) return;  // discarding the rest of an over-long request
  loop.tokens -= 1;
  answer(loop, c, std::string_view(loop.buffer.data(), static_cast<std::size_t>(n)), now);
}

void CommandPort::answer(Loop& loop, Client& c, std::string_view request, TimePoint now) {
  const CommandReply reply = protocol_.handle(request);
  requests_.add();
  count_outcome(reply.outcome);
  if (reply.outcome == RequestOutcome::kTooLong) c.draining = true;
  c.out = reply.text;
  c.deadline = now + (c.draining ? std::min<Clock::duration>(config_.idle_timeout, kDrainTime)
                                 : Clock::duration(config_.idle_timeout));
  if (!flush(c, now)) c.close();
  if (reply.outcome == RequestOutcome::kExit && !loop.exit_requested) {
    loop.exit_requested = true;
    spdlog::info("command port: EXIT from a client: stopping");
    if (on_exit_) on_exit_();
  }
}

void CommandPort::count_outcome(RequestOutcome outcome) {
  switch (outcome) {
    case RequestOutcome::kOk:
    case RequestOutcome::kExit:
      break;
    case RequestOutcome::kBadCommand:
      bad_command_.add();
      break;
    case RequestOutcome::kBadArgs:
      bad_args_.add();
      break;
    case RequestOutcome::kTooLong:
      too_long_.add();
      break;
  }
}

// Takes every pending connection; beyond max_clients each is told it is busy and closed.
void CommandPort::accept_clients(Loop& loop, TimePoint now) {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) break;
    if (loop.clients.size() >= config_.max_clients) {
      (void)::send(fd, kBusyReply.data(), kBusyReply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      ::close(fd);
      rejected_.add();
      continue;
    }
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &kClientSendBuffer, sizeof(kClientSendBuffer));
    Client c;
    c.fd = fd;
    c.deadline = now + config_.idle_timeout;
    loop.clients.push_back(std::move(c));
    accepted_.add();
  }
}

// Closes the clients past their deadline (idle, or too slow to read a reply) and forgets every
// closed one.
void CommandPort::close_expired(Loop& loop, TimePoint now) {
  for (Client& c : loop.clients) {
    if (c.closed || now < c.deadline) continue;
    if (!c.draining) (c.out.empty() ? closed_idle_ : closed_slow_).add();
    c.close();
  }
  std::erase_if(loop.clients, [](const Client& c) { return c.closed; });
  connected_.set(loop.clients.size());
}

// Writes what is pending in one send(); false if the client is gone. A reply must be written
// completely within the idle time-out from when it was queued (partial progress does not
// extend it); after that the client has the idle time-out to send its next request.
bool CommandPort::flush(Client& c, TimePoint now) const {
  if (c.out.empty()) return true;
  const ssize_t n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  c.out.erase(0, static_cast<std::size_t>(n));
  if (c.out.empty()) {
    if (c.draining)
      ::shutdown(c.fd, SHUT_WR);
    else
      c.deadline = now + config_.idle_timeout;
  }
  return true;
}

}  // namespace efu
