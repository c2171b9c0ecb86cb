// The Graphite output against a TCP listener of the test's own (a unit test: the real Carbon is
// in graphite_carbon_test.py). Every published interval is either sent or counted as dropped.
#include "ops/graphite_output.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace efu {
namespace {

using namespace std::chrono_literals;

StatsSnapshot snapshot(std::uint64_t seconds, std::uint64_t packets) {
  StatsSnapshot s{};
  s.time_ns = seconds * 1'000'000'000ull + 999'999'999ull;
  s.counters = {{"main.uptime", CounterKind::kGauge, 3, 0},
                {"receive.packets", CounterKind::kCounter, packets, 0}};
  return s;
}

class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    EXPECT_EQ(::listen(fd_, 4), 0);
    socklen_t len = sizeof(a);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~Listener() {
    if (conn_ >= 0) ::close(conn_);
    if (fd_ >= 0) ::close(fd_);
  }
  int port() const { return port_; }
  void close_listener() {
    ::close(fd_);
    fd_ = -1;
  }
  bool accept_within(std::chrono::milliseconds t) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(t.count())) != 1) return false;
    if (conn_ >= 0) ::close(conn_);
    conn_ = ::accept(fd_, nullptr, nullptr);
    return conn_ >= 0;
  }
  void close_connection() {
    ::close(conn_);
    conn_ = -1;
  }
  /// Reads until `n` bytes arrived or the time is up.
  std::string read_bytes(std::size_t n, std::chrono::milliseconds t) {
    std::string out;
    const auto deadline = std::chrono::steady_clock::now() + t;
    while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
      pollfd p{conn_, POLLIN, 0};
      if (::poll(&p, 1, 50) != 1) continue;
      char buf[4096];
      const ssize_t got = ::recv(conn_, buf, sizeof(buf), 0);
      if (got <= 0) break;
      out.append(buf, static_cast<std::size_t>(got));
    }
    return out;
  }

 private:
  int fd_ = -1;
  int conn_ = -1;
  int port_ = 0;
};

TEST(GraphiteFormat, OneLinePerCounterWithWholeSeconds) {
  EXPECT_EQ(format_graphite(snapshot(1763810117, 42), "efu.freia.0."),
            "efu.freia.0.main.uptime 3 1763810117\n"
            "efu.freia.0.receive.packets 42 1763810117\n");
}

TEST(GraphiteOutput, SendsEachIntervalAndAccountsForEveryOne) {
  Listener carbon;
  CounterRegistry reg;
  GraphiteOutput out({"127.0.0.1", carbon.port(), "efu.t.0."}, reg);
  reg.freeze();
  out.start();
  out.publish(snapshot(100, 1));
  ASSERT_TRUE(carbon.accept_within(5000ms));
  const std::string first = format_graphite(snapshot(100, 1), "efu.t.0.");
  EXPECT_EQ(carbon.read_bytes(first.size(), 5000ms), first);
  out.publish(snapshot(101, 2));
  const std::string second = format_graphite(snapshot(101, 2), "efu.t.0.");
  EXPECT_EQ(carbon.read_bytes(second.size(), 5000ms), second);

  // Carbon restarts: the output notices the closed connection and connects again.
  carbon.close_connection();
  std::this_thread::sleep_for(100ms);
  out.publish(snapshot(102, 3));
  ASSERT_TRUE(carbon.accept_within(5000ms));
  const std::string third = format_graphite(snapshot(102, 3), "efu.t.0.");
  EXPECT_EQ(carbon.read_bytes(third.size(), 5000ms), third);
  out.stop();
  EXPECT_EQ(reg.value("graphite.sent.intervals"), 3u);
  EXPECT_EQ(reg.value("graphite.connects"), 2u);
  EXPECT_EQ(reg.value("graphite.sent.bytes"), first.size() + second.size() + third.size());
  EXPECT_EQ(reg.value("graphite.dropped.intervals"), 0u);
}

TEST(GraphiteOutput, DownCarbonIsCountedAndRetriedWithBackoff) {
  Listener carbon;
  const int port = carbon.port();
  carbon.close_listener();  // nothing listens there now
  CounterRegistry reg;
  GraphiteOutput out({"127.0.0.1", port, "efu.t.0."}, reg);
  reg.freeze();
  out.start();
  constexpr int kIntervals = 5;
  for (int i = 0; i < kIntervals; ++i) {
    out.publish(snapshot(200 + i, i));
    std::this_thread::sleep_for(20ms);
  }
  out.stop();
  // The first attempt fails; the next ones fall within the 1 s backoff and are not tried.
  EXPECT_EQ(reg.value("graphite.failed.connect"), 1u);
  EXPECT_EQ(reg.value("graphite.sent.intervals"), 0u);
  EXPECT_EQ(reg.value("graphite.dropped.intervals"), static_cast<std::uint64_t>(kIntervals));
}

TEST(GraphiteOutput, AReceiverThatNeverReadsCostsOnlyTheGraphiteThread) {
  Listener carbon;
  CounterRegistry reg;
  GraphiteOutput out({"127.0.0.1", carbon.port(), "efu.t.0."}, reg);
  reg.freeze();
  out.start();
  // Large intervals (~3 MB each) to a peer that accepts and never reads: the socket buffers
  // fill, writes time out, and publish() keeps returning at once.
  StatsSnapshot big{};
  big.time_ns = 1;
  for (int i = 0; i < 60000; ++i) {
    big.counters.push_back({"some.long.counter.name.number." + std::to_string(i),
                            CounterKind::kCounter, 1234567890123ull, 0});
  }
  out.publish(big);
  ASSERT_TRUE(carbon.accept_within(5000ms));
  constexpr int kPublishes = 12;
  for (int i = 1; i < kPublishes; ++i) {
    out.publish(big);
    std::this_thread::sleep_for(50ms);
  }
  out.stop();
  const std::uint64_t sent = reg.value("graphite.sent.intervals");
  const std::uint64_t dropped = reg.value("graphite.dropped.intervals");
  EXPECT_EQ(sent + dropped, static_cast<std::uint64_t>(kPublishes));
  EXPECT_GT(dropped, 0u);
  EXPECT_GT(reg.value("graphite.failed.write"), 0u);
}

}  // namespace
}  // namespace efu
