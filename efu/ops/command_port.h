// The command port: a small TCP server on its own thread that answers the reference EFU's
// protocol (command_protocol.h). Bounded in every direction, so no client can hold up the data
// path, the stats or shutdown: a few clients at once, one request per read of at most
// CommandProtocol::kMaxRequestBytes, a reply is queued only while the previous one is written,
// and a client that neither sends nor reads for the idle timeout is closed.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include "ops/command_protocol.h"
#include "efu/counters.h"

namespace efu {

struct CommandPortConfig {
  std::string bind_address = "127.0.0.1";
  int port = 0;  // 0: any free port (the log names it)
  std::chrono::milliseconds idle_timeout{60'000};
  std::size_t max_clients = 8;
};

class CommandPort {
 public:
  /// Binds and listens (throws ConfigError naming --command-bind/--command-port) and registers
  /// the command.* counters; call before the registry is frozen. No thread runs yet.
  CommandPort(const CommandPortConfig& config, const CommandProtocol& protocol,
              CounterRegistry& counters);
  ~CommandPort();
  CommandPort(const CommandPort&) = delete;
  CommandPort& operator=(const CommandPort&) = delete;

  int bound_port() const { return bound_port_; }
  const std::string& address_text() const { return address_text_; }

  /// Starts the server thread. `on_exit` is called (once, on that thread) after the reply to
  /// EXIT has been written.
  void start(std::function<void()> on_exit);
  /// Closes every client and the listening socket; returns within a poll period.
  void stop();

 private:
  struct Client;
  struct Loop;
  using TimePoint = std::chrono::steady_clock::time_point;

  void run();
  bool wait_for_events(Loop& loop);
  void serve_clients(Loop& loop, TimePoint now);
  void serve_client(Loop& loop, Client& client, short revents, TimePoint now);
  void answer(Loop& loop, Client& client, std::string_view request, TimePoint now);
  void count_outcome(RequestOutcome outcome);
  void accept_clients(Loop& loop, TimePoint now);
  void close_expired(Loop& loop, TimePoint now);
  bool flush(Client& client, TimePoint now) const;

  CommandPortConfig config_;
  const CommandProtocol& protocol_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: stop() wakes the poll
  int bound_port_ = 0;
  std::string address_text_;
  std::function<void()> on_exit_;
  std::thread thread_;

  Counter& requests_;
  Counter& bad_command_;
  Counter& bad_args_;
  Counter& too_long_;
  Counter& accepted_;
  Counter& rejected_;
  Counter& closed_idle_;
  Counter& closed_slow_;
  Counter& connected_;  // gauge
};

}  // namespace efu
