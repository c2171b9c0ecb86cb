// efu-udpgen → a plain UDP socket on 127.0.0.1: every sequence number arrives, filler verifies,
// and --skip-every leaves out exactly the documented numbers.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "run_command.h"
#include "sequence_tracker.h"

namespace efu::udp::test {
namespace {

class Receiver {
 public:
  Receiver() {
    fd_ = socket(AF_INET, SOCK_DGRAM, 0);
    int rcvbuf = 32 << 20;
    // As root the forced size passes net.core.rmem_max; otherwise the capped one is fine at
    // the paced rates used here.
    if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) != 0) {
      setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;  // an ephemeral port: no clash with other tests
    bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~Receiver() { close(fd_); }
  Receiver(const Receiver&) = delete;
  Receiver& operator=(const Receiver&) = delete;

  std::uint16_t port() const { return port_; }

  /// Receives until `want` datagrams arrived or nothing came for 5 s.
  /// `sizes`, if given, gets the size of every datagram; `source_ports` their source ports.
  void receive(std::uint64_t want, SequenceTracker& tracker, std::set<std::uint64_t>* seqs,
               std::set<std::uint32_t>* sizes = nullptr,
               std::set<std::uint16_t>* source_ports = nullptr) {
    std::vector<std::uint8_t> buffer(65536);
    while (tracker.stats().packets < want) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 5000) <= 0) return;
      sockaddr_in from{};
      socklen_t from_len = sizeof from;
      const ssize_t n = recvfrom(fd_, buffer.data(), buffer.size(), 0,
                                 reinterpret_cast<sockaddr*>(&from), &from_len);
      if (n < 0) return;
      if (sizes != nullptr) sizes->insert(static_cast<std::uint32_t>(n));
      if (source_ports != nullptr) source_ports->insert(ntohs(from.sin_port));
      tracker.on_packet(buffer.data(), static_cast<std::uint32_t>(n));
      if (seqs != nullptr && n >= 4) seqs->insert(read_seq(tracker.format(), buffer.data()));
    }
  }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

std::uint64_t summary_field(const std::string& output, const std::string& name) {
  const std::regex re(name + "=([0-9]+)");
  std::smatch m;
  if (!std::regex_search(output, m, re)) return ~0ULL;
  return std::stoull(m[1]);
}

TEST(UdpgenLoopback, EverySequenceNumberArrivesWithValidFiller) {
  Receiver rx;
  SequenceTracker tracker(SeqFormat::kEfu64, true);
  FILE* gen =
      start_command(udpgen_path() + " --host 127.0.0.1 --port " + std::to_string(rx.port()) +
                    " --count 20000 --size 1000 --rate-pps 100000 --stats-interval 0");
  std::set<std::uint64_t> seqs;
  rx.receive(20000, tracker, &seqs);
  const CommandResult r = finish_command(gen);
  tracker.flush();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(summary_field(r.output, "packets"), 20000U) << r.output;
  EXPECT_EQ(summary_field(r.output, "bytes"), 20000U * 1000U) << r.output;
  EXPECT_EQ(tracker.stats().packets, 20000U);
  EXPECT_EQ(tracker.stats().lost, 0U);
  EXPECT_EQ(tracker.stats().corrupted, 0U);
  ASSERT_EQ(seqs.size(), 20000U);
  EXPECT_EQ(*seqs.begin(), 0U);
  EXPECT_EQ(*seqs.rbegin(), 19999U);
}

TEST(UdpgenLoopback, GsoSendsFewerMessagesButTheSameDatagrams) {
  // A plain socket without UDP_GRO: the kernel delivers each GSO segment as its own datagram.
  // 10 007 datagrams of 1472 B in batches of 64: 44 per message (64 KB), so each batch is two
  // messages, and the last batch (23 datagrams) one.
  Receiver rx;
  SequenceTracker tracker(SeqFormat::kEfu64, true);
  FILE* gen = start_command(udpgen_path() + " --port " + std::to_string(rx.port()) +
                            " --gso --count 10007 --size 1472 --skip-every 1000"
                            " --rate-pps 100000 --stats-interval 0");
  std::set<std::uint64_t> seqs;
  std::set<std::uint32_t> sizes;
  std::set<std::uint16_t> ports;
  rx.receive(10007, tracker, &seqs, &sizes, &ports);
  const CommandResult r = finish_command(gen);
  tracker.flush();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(summary_field(r.output, "packets"), 10007U) << r.output;
  EXPECT_EQ(summary_field(r.output, "bytes"), 10007U * 1472U) << r.output;
  EXPECT_EQ(summary_field(r.output, "messages"), 156U * 2 + 1) << r.output;
  const std::uint64_t skipped = summary_field(r.output, "skipped");
  EXPECT_EQ(skipped, 10U) << r.output;  // range 10 017: floor(10 017 / 1000)
  EXPECT_EQ(sizes, std::set<std::uint32_t>{1472}) << "every datagram on its own, none merged";
  ASSERT_EQ(ports.size(), 1U);
  EXPECT_EQ(*ports.begin(), summary_field(r.output, "source_port")) << r.output;
  EXPECT_EQ(tracker.stats().packets, 10007U);
  EXPECT_EQ(tracker.stats().expected, 10007U + skipped);
  EXPECT_EQ(tracker.stats().lost, skipped);
  EXPECT_EQ(tracker.stats().out_of_order, 0U);
  EXPECT_EQ(tracker.stats().corrupted, 0U);
  EXPECT_EQ(seqs.size(), 10007U);
}

TEST(UdpgenLoopback, SkipEveryLeavesOutEveryKthNumberExactly) {
  Receiver rx;
  SequenceTracker tracker(SeqFormat::kEfu64, true);
  // K = 7 and 1000 datagrams: the range is 0..1165 (1166 numbers); the 166 numbers whose
  // index i has (i + 1) % 7 == 0 (6, 13, 20, ...) are skipped; floor(1166 / 7) = 166.
  FILE* gen = start_command(udpgen_path() + " --port " + std::to_string(rx.port()) +
                            " --count 1000 --size 64 --skip-every 7 --rate-pps 50000"
                            " --stats-interval 0");
  std::set<std::uint64_t> seqs;
  rx.receive(1000, tracker, &seqs);
  const CommandResult r = finish_command(gen);
  tracker.flush();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(summary_field(r.output, "skipped"), 166U) << r.output;
  ASSERT_EQ(seqs.size(), 1000U);
  EXPECT_EQ(*seqs.rbegin(), 1165U);
  for (std::uint64_t s = 0; s <= 1165; ++s) {
    EXPECT_EQ(seqs.count(s), (s + 1) % 7 == 0 ? 0U : 1U) << s;
  }
  EXPECT_EQ(tracker.stats().lost, 166U);
  EXPECT_EQ(tracker.stats().expected, 1166U);
  EXPECT_EQ(tracker.stats().corrupted, 0U);
}

TEST(UdpgenLoopback, UdptxFormatStartsAtOneWithFourByteField) {
  Receiver rx;
  SequenceTracker tracker(SeqFormat::kUdptx32, true);
  FILE* gen = start_command(udpgen_path() + " --port " + std::to_string(rx.port()) +
                            " --count 500 --size 4 --udptx-format --rate-pps 50000"
                            " --stats-interval 0");
  std::set<std::uint64_t> seqs;
  rx.receive(500, tracker, &seqs);
  const CommandResult r = finish_command(gen);
  tracker.flush();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(seqs.size(), 500U);
  EXPECT_EQ(*seqs.begin(), 1U);
  EXPECT_EQ(*seqs.rbegin(), 500U);
  EXPECT_EQ(tracker.stats().lost, 0U);
  EXPECT_EQ(tracker.stats().runts, 0U);
}

TEST(UdpgenLoopback, IPv6LoopbackWorks) {
  const int probe = socket(AF_INET6, SOCK_DGRAM, 0);
  if (probe < 0) GTEST_SKIP() << "no IPv6 on this machine";
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_addr = in6addr_loopback;
  if (bind(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(probe);
    GTEST_SKIP() << "::1 not bindable";
  }
  socklen_t len = sizeof addr;
  getsockname(probe, reinterpret_cast<sockaddr*>(&addr), &len);
  FILE* gen =
      start_command(udpgen_path() + " --host ::1 --port " + std::to_string(ntohs(addr.sin6_port)) +
                    " --count 100 --size 100 --rate-pps 10000 --stats-interval 0");
  std::uint64_t got = 0;
  std::uint8_t buffer[2048];
  while (got < 100) {
    pollfd p{probe, POLLIN, 0};
    if (poll(&p, 1, 5000) <= 0) break;
    if (recv(probe, buffer, sizeof buffer, 0) == 100) ++got;
  }
  const CommandResult r = finish_command(gen);
  close(probe);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(got, 100U);
}

}  // namespace
}  // namespace efu::udp::test
