// Runs efu as a child process for lifecycle tests (output captured to files, bounded waits), and
// the UDP senders of the host tests.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace efu::test {

class Child {
 public:
  /// Starts `args` (args[0] is the program) with stdout/stderr redirected to temp files.
  Child(const std::vector<std::string>& args, const std::vector<std::string>& extra_env = {});
  ~Child();
  /// Exit code, or nullopt if it has not exited within `timeout` (or died from a signal: -signo).
  std::optional<int> wait(std::chrono::milliseconds timeout);
  void signal(int sig);
  pid_t pid() const noexcept { return pid_; }
  std::string out() const;
  std::string err() const;
  /// Waits until stderr contains `text` (or timeout). True if found.
  bool wait_for_stderr(const std::string& text, std::chrono::milliseconds timeout) const;

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  std::string out_path_;
  std::string err_path_;
};

/// A UDP port on 127.0.0.1 that was free a moment ago.
int free_udp_port();

/// Sends `count` datagrams of `size` bytes, each starting with a 64-bit sequence number from
/// `first`, to 127.0.0.1:port, pacing lightly so loopback does not drop.
void send_sequence(int port, std::uint64_t first, std::uint64_t count, std::size_t size);

/// Sends one buffer of `count` datagrams with UDP GSO (UDP_SEGMENT): each datagram `size` bytes
/// except the last, `last_size` bytes (0: `size`), starting with 64-bit sequence numbers from
/// `first`. From `fd`, a UDP socket the caller owns (so its source port stays one flow).
void send_gso(int fd, int port, std::uint64_t first, unsigned count, std::size_t size,
              std::size_t last_size = 0);

/// A UDP socket bound to 127.0.0.1 on an ephemeral port, for senders of one flow each.
int udp_sender_socket();
/// Sends one datagram of `size` bytes starting with `seq` from `fd` to 127.0.0.1:port.
void send_one(int fd, int port, std::uint64_t seq, std::size_t size);
/// `senders` flows (sockets of their own, so their own source ports) each send sequence numbers
/// 0 .. each-1 in datagrams of `size` bytes to 127.0.0.1:port, interleaved, with a 1 ms pause
/// every `pause_every` rounds.
void send_from_flows(int port, int senders, std::uint64_t each, std::size_t size,
                     std::uint64_t pause_every);

/// CPU time (user + system) the process has used, in seconds, from /proc/<pid>/stat.
double process_cpu_seconds(pid_t pid);

std::string read_text(const std::string& path);

}  // namespace efu::test
