#include "receive/receiver.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <fstream>
#include <vector>

#include <gtest/gtest.h>

#include "efu/errors.h"
#include "receive/udp_socket.h"
#include "subprocess.h"

namespace efu {
namespace {

class Sender {
 public:
  Sender(int family, int port) : family_(family) {
    fd_ = socket(family, SOCK_DGRAM, 0);
    if (family == AF_INET) {
      auto& a = reinterpret_cast<sockaddr_in&>(addr_);
      a.sin_family = AF_INET;
      a.sin_port = htons(static_cast<std::uint16_t>(port));
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      len_ = sizeof(sockaddr_in);
    } else {
      auto& a = reinterpret_cast<sockaddr_in6&>(addr_);
      a.sin6_family = AF_INET6;
      a.sin6_port = htons(static_cast<std::uint16_t>(port));
      a.sin6_addr = in6addr_loopback;
      len_ = sizeof(sockaddr_in6);
    }
  }
  ~Sender() { close(fd_); }
  /// The port the kernel gave this sender (after its first send).
  std::uint16_t local_port() const {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    return family_ == AF_INET ? ntohs(reinterpret_cast<sockaddr_in&>(a).sin_port)
                              : ntohs(reinterpret_cast<sockaddr_in6&>(a).sin6_port);
  }
  void send_seq(std::uint64_t seq, std::size_t size) {
    std::vector<std::uint8_t> buf(size, 0xab);
    if (size != 0) std::memcpy(buf.data(), &seq, std::min(size, sizeof(seq)));  // empty: no data
    ASSERT_EQ(sendto(fd_, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&addr_), len_),
              static_cast<ssize_t>(size));
  }

 private:
  int family_;
  int fd_;
  sockaddr_storage addr_{};
  socklen_t len_ = 0;
};

struct Rig {
  explicit Rig(const std::string& bind, std::size_t ring = 4096, std::uint32_t max_datagram = 2000,
               bool sender = true)
      : Rig(bind, ReceiverConfig{64, max_datagram, false, sender}, ring) {}
  Rig(const std::string& bind, const ReceiverConfig& config, std::size_t ring = 4096)
      : socket(UdpSocketConfig{bind, 0, "", 4'000'000, 50}),
        pool(pool_slots_needed(1, ring, 64, 64), config.max_datagram),
        lane(ring, pool),
        receiver(socket.fd(), config, pool, {&lane}, nullptr, counters) {}
  // Receives until `n` packets are accounted for or 5 s pass.
  void receive_until(std::uint64_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (counters.value("receive.packets") + counters.value("receive.truncated") < n &&
           std::chrono::steady_clock::now() < deadline) {
      receiver.receive_batch();
    }
  }
  CounterRegistry counters;
  UdpSocket socket;
  PacketPool pool;
  Lane lane;
  Receiver receiver;
};

TEST(Receiver, DatagramsArriveInOrderAndAreCounted) {
  Rig rig("127.0.0.1");
  Sender tx(AF_INET, rig.socket.bound_port());
  constexpr std::uint64_t kCount = 500;
  for (std::uint64_t i = 0; i < kCount; ++i) tx.send_seq(i, 100 + i % 50);
  rig.receive_until(kCount);
  EXPECT_EQ(rig.counters.value("receive.packets"), kCount);
  std::uint64_t expected_bytes = 0;
  for (std::uint64_t i = 0; i < kCount; ++i) expected_bytes += 100 + i % 50;
  EXPECT_EQ(rig.counters.value("receive.bytes"), expected_bytes);
  std::array<PacketRef, 1000> refs{};
  const std::size_t n = rig.lane.packets.pop_bulk(std::span(refs));
  ASSERT_EQ(n, kCount);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t seq = 0;
    std::memcpy(&seq, rig.pool.data(refs[i].slot), sizeof(seq));
    EXPECT_EQ(seq, i);
    EXPECT_EQ(refs[i].size, 100 + i % 50);
  }
}

TEST(Receiver, Ipv6LoopbackWorks) {
  Rig rig("::1");
  Sender tx(AF_INET6, rig.socket.bound_port());
  for (std::uint64_t i = 0; i < 10; ++i) tx.send_seq(i, 64);
  rig.receive_until(10);
  EXPECT_EQ(rig.counters.value("receive.packets"), 10u);
}

TEST(Receiver, TheSendersAddressAndPortTravelWithTheSlot) {
  Rig rig4("127.0.0.1");
  Sender tx4(AF_INET, rig4.socket.bound_port());
  tx4.send_seq(0, 64);
  rig4.receive_until(1);
  std::array<PacketRef, 4> refs{};
  ASSERT_EQ(rig4.lane.packets.pop_bulk(std::span(refs)), 1u);
  const PacketSource& s4 = rig4.pool.source(refs[0].slot);
  ASSERT_EQ(s4.family(), AF_INET);
  EXPECT_EQ(ntohl(s4.v4.sin_addr.s_addr), INADDR_LOOPBACK);
  EXPECT_EQ(s4.port(), tx4.local_port());

  Rig rig6("::1");
  Sender tx6(AF_INET6, rig6.socket.bound_port());
  tx6.send_seq(0, 64);
  rig6.receive_until(1);
  ASSERT_EQ(rig6.lane.packets.pop_bulk(std::span(refs)), 1u);
  const PacketSource& s6 = rig6.pool.source(refs[0].slot);
  ASSERT_EQ(s6.family(), AF_INET6);
  EXPECT_EQ(std::memcmp(&s6.v6.sin6_addr, &in6addr_loopback, sizeof(in6_addr)), 0);
  EXPECT_EQ(s6.port(), tx6.local_port());
  // Two senders are two flows.
  Sender other(AF_INET6, rig6.socket.bound_port());
  other.send_seq(1, 64);
  rig6.receive_until(2);
  ASSERT_EQ(rig6.lane.packets.pop_bulk(std::span(refs)), 1u);
  const PacketSource& o6 = rig6.pool.source(refs[0].slot);
  EXPECT_EQ(o6.port(), other.local_port());
  EXPECT_NE(o6.flow_hash(), s6.flow_hash());
  EXPECT_EQ(kUnknownSource.family(), AF_UNSPEC);
  EXPECT_EQ(kUnknownSource.port(), 0);
}

// A plugin whose descriptor says uses_source = false: recvmmsg is not asked for the sender
// (ReceiverConfig::sender), the datagrams arrive as before, and every source is the unknown one.
TEST(Receiver, WithoutSenderTheDatagramsArriveAndTheSourceIsUnknown) {
  for (const char* bind : {"127.0.0.1", "::1"}) {
    Rig rig(bind, 4096, 2000, /*sender=*/false);
    Sender tx(std::string(bind) == "::1" ? AF_INET6 : AF_INET, rig.socket.bound_port());
    constexpr std::uint64_t kCount = 200;
    for (std::uint64_t i = 0; i < kCount; ++i) tx.send_seq(i, 64 + i % 7);
    rig.receive_until(kCount);
    EXPECT_EQ(rig.counters.value("receive.packets"), kCount) << bind;
    std::array<PacketRef, 256> refs{};
    const std::size_t n = rig.lane.packets.pop_bulk(std::span(refs));
    ASSERT_EQ(n, kCount) << bind;
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t seq = 0;
      std::memcpy(&seq, rig.pool.data(refs[i].slot), sizeof(seq));
      EXPECT_EQ(seq, i) << bind;
      EXPECT_EQ(refs[i].size, 64 + i % 7) << bind;
      EXPECT_EQ(rig.pool.source(refs[i].slot).family(), AF_UNSPEC) << bind;
      EXPECT_EQ(rig.pool.source(refs[i].slot).port(), 0) << bind;
    }
  }
}

TEST(Receiver, OversizeDatagramsAreCountedAsTruncatedAndNotPassedOn) {
  Rig rig("127.0.0.1", 4096, 1000);
  Sender tx(AF_INET, rig.socket.bound_port());
  tx.send_seq(0, 500);
  tx.send_seq(1, 1001);
  tx.send_seq(2, 8000);
  tx.send_seq(3, 1000);
  rig.receive_until(4);
  EXPECT_EQ(rig.counters.value("receive.truncated"), 2u);
  EXPECT_EQ(rig.counters.value("receive.packets"), 2u);
  EXPECT_EQ(rig.lane.packets.size(), 2u);
}

// A rejected datagram (truncated, empty, larger than --max-datagram) must cost no other datagram
// of its batch, nor change one: each valid datagram arrives once, in order, with its own bytes
// and size. Sent in chunks so that rejected and valid datagrams share recvmmsg() calls; with
// GRO the valid datagrams are also coalesced around the rejected ones. (Before the fix, a
// rejected slot went back on top of the free stack at once, and the next message of the batch
// was read from it.)
void expect_malformed_neighbours_cost_nothing(bool gro) {
  constexpr std::uint32_t kMax = 2000;
  CounterRegistry counters;
  UdpSocketConfig socket_config{"127.0.0.1", 0, "", 8'000'000, 50};
  socket_config.gro = gro;
  UdpSocket sock(socket_config);
  ReceiverConfig config{64, kMax};
  config.gro = gro;
  PacketPool pool(pool_slots_needed(1, 8192, 64, gro ? 64 : 1), receive_slot_size(config));
  Lane lane(8192, pool);
  Receiver rx(sock.fd(), config, pool, {&lane}, nullptr, counters);
  Sender tx(AF_INET, sock.bound_port());
  // The malformed kinds, in turn: empty, one byte past the limit, the largest UDP datagram.
  const std::array<std::size_t, 3> bad_sizes{0, kMax + 1, 65507};
  std::array<std::uint64_t, 3> bad_sent{};
  constexpr std::uint64_t kValid = 600;
  std::uint64_t valid_sent = 0;
  auto accounted = [&] {
    return counters.value("receive.packets") + counters.value("receive.truncated") +
           counters.value("receive.dropped.empty") + counters.value("receive.dropped.kernel");
  };
  std::uint64_t expected = 0;
  while (valid_sent < kValid) {
    for (int k = 0; k < 24 && valid_sent < kValid; ++k) {
      tx.send_seq(valid_sent, 100 + valid_sent % 3);  // a few sizes: GRO coalesces runs of one
      ++valid_sent;
      ++expected;
      if (k % 3 == 1) {
        const std::size_t kind = (valid_sent / 3) % bad_sizes.size();
        tx.send_seq(0xbadbadbadULL, bad_sizes[kind]);
        ++bad_sent[kind];
        ++expected;
      }
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (accounted() < expected && std::chrono::steady_clock::now() < deadline) {
      rx.receive_batch(true);
    }
  }
  ASSERT_EQ(accounted(), expected);
  ASSERT_EQ(counters.value("receive.dropped.kernel"), 0u) << "the socket buffer overflowed";
  EXPECT_EQ(counters.value("receive.dropped.empty"), bad_sent[0]);
  EXPECT_EQ(counters.value("receive.truncated"), bad_sent[1] + bad_sent[2]);
  EXPECT_EQ(counters.value("receive.packets"), kValid);
  std::vector<PacketRef> refs(kValid + 1);
  ASSERT_EQ(lane.packets.pop_bulk(std::span(refs)), kValid);
  for (std::uint64_t i = 0; i < kValid; ++i) {
    std::uint64_t seq = 0;
    std::memcpy(&seq, pool.data(refs[i].slot) + refs[i].offset, sizeof(seq));
    ASSERT_EQ(seq, i) << "datagram " << i << (gro ? " (GRO)" : "");
    ASSERT_EQ(refs[i].size, 100 + i % 3) << "datagram " << i << (gro ? " (GRO)" : "");
    ASSERT_EQ(pool.data(refs[i].slot)[refs[i].offset + refs[i].size - 1], 0xab)
        << "datagram " << i << (gro ? " (GRO)" : "");
  }
}

TEST(Receiver, MalformedNeighboursNeverCostOrAlterAValidDatagram) {
  expect_malformed_neighbours_cost_nothing(false);
}

TEST(Receiver, MalformedNeighboursNeverCostOrAlterAValidDatagramWithGro) {
  expect_malformed_neighbours_cost_nothing(true);
}

TEST(Receiver, FullRingDropsAreCountedAndTheReceiverKeepsGoing) {
  ReceiverConfig config{64, 2000, false, true};
  config.full_ring = FullRing::kDrop;
  Rig rig("127.0.0.1", config, 16);
  Sender tx(AF_INET, rig.socket.bound_port());
  for (std::uint64_t i = 0; i < 40; ++i) tx.send_seq(i, 64);
  rig.receive_until(40);
  EXPECT_EQ(rig.counters.value("receive.packets"), 40u);
  EXPECT_EQ(rig.counters.value("receive.dropped.ring_full"), 24u);
  EXPECT_EQ(rig.counters.value("receive.full_ring.waits"), 0u);
  EXPECT_EQ(rig.lane.packets.size(), 16u);
}

// FullRing::kHold (the default): a full ring is not read into. The datagrams wait in the socket
// buffer, the ring drops none, and each one the kernel kept arrives, in order, once the
// processing side frees room (received + kernel drops = sent).
TEST(Receiver, AFullRingHoldsTheRestInTheSocketUntilThereIsRoom) {
  ReceiverConfig config{64, 2000, false, true};
  config.full_ring_wait_ns = 100'000;
  ASSERT_EQ(config.full_ring, FullRing::kHold);
  Rig rig("127.0.0.1", config, 16);
  Sender tx(AF_INET, rig.socket.bound_port());
  constexpr std::uint64_t kCount = 40;
  for (std::uint64_t i = 0; i < kCount; ++i) tx.send_seq(i, 64);
  std::vector<std::uint64_t> seen;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  auto accounted = [&] {
    rig.receiver.poll_kernel_drops();
    return seen.size() + rig.counters.value("receive.dropped.kernel");
  };
  while (accounted() < kCount && std::chrono::steady_clock::now() < deadline) {
    // Fill the ring as far as it goes: after a full ring's wait, the receiver reads no more.
    for (int i = 0; i < 8; ++i) rig.receiver.receive_batch(true);
    EXPECT_LE(rig.lane.packets.size(), 16u);
    if (rig.lane.packets.size() == 16u) {
      const std::uint64_t waits = rig.counters.value("receive.full_ring.waits");
      EXPECT_EQ(rig.receiver.receive_batch(true), 0);  // full: it waits and reads nothing
      EXPECT_EQ(rig.counters.value("receive.full_ring.waits"), waits + 1);
      EXPECT_EQ(rig.lane.packets.size(), 16u);
    }
    // The processing side: take 10, give their slots back.
    std::array<PacketRef, 10> refs{};
    const std::size_t n = rig.lane.packets.pop_bulk(std::span(refs));
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t seq = 0;
      std::memcpy(&seq, rig.pool.data(refs[i].slot), sizeof(seq));
      seen.push_back(seq);
      rig.lane.returned.try_push(refs[i].slot);
    }
  }
  rig.receiver.receive_batch(true);  // adds the last polled kernel drops
  ASSERT_EQ(seen.size() + rig.counters.value("receive.dropped.kernel"), kCount);
  EXPECT_EQ(rig.counters.value("receive.packets"), seen.size());
  for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_LT(seen[i - 1], seen[i]);  // in order
  EXPECT_EQ(rig.counters.value("receive.dropped.ring_full"), 0u);
  EXPECT_GT(rig.counters.value("receive.full_ring.waits"), 0u);
}

TEST(Receiver, FullRingPolicyNamesAreParsedAndABadOneIsNamed) {
  EXPECT_EQ(parse_full_ring("hold"), FullRing::kHold);
  EXPECT_EQ(parse_full_ring("drop"), FullRing::kDrop);
  try {
    parse_full_ring("block");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--full-ring: 'block'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("expected hold or drop"), std::string::npos) << e.what();
  }
}

// ReceiverConfig::batch_bytes: after a call of large datagrams the next asks for only as many as
// fit the byte budget (at least one), after small ones for the whole batch_size again; with 0
// it always asks for batch_size. Every datagram still arrives once and in order.
TEST(Receiver, LargeDatagramsMakeTheNextBatchSmallerAndEveryDatagramStillArrives) {
  ReceiverConfig config{64, 9000};
  config.batch_bytes = 32 * 1024;
  Rig rig("127.0.0.1", config);
  Receiver& rx = rig.receiver;
  EXPECT_EQ(rx.next_batch(), 64u);
  Sender tx(AF_INET, rig.socket.bound_port());
  constexpr std::uint64_t kLarge = 100;
  for (std::uint64_t i = 0; i < kLarge; ++i) tx.send_seq(i, 8000);
  ASSERT_EQ(rx.receive_batch(), 64);  // the first call asks for batch_size
  EXPECT_EQ(rx.next_batch(), 4u);     // 32768 / 8000
  ASSERT_EQ(rx.receive_batch(), 4);
  for (std::uint64_t i = kLarge; i < kLarge + 8; ++i) tx.send_seq(i, 40000);
  rig.receive_until(kLarge + 8);
  // Truncated 40000 B datagrams: the kernel copied 9000 B of each, 32768 / 9000 = 3.
  EXPECT_EQ(rig.counters.value("receive.truncated"), 8u);
  EXPECT_EQ(rx.next_batch(), 3u);
  for (std::uint64_t i = 0; i < 3; ++i) tx.send_seq(kLarge + 8 + i, 100);
  ASSERT_EQ(rx.receive_batch(), 3);
  EXPECT_EQ(rx.next_batch(), 64u);  // 32768 / 100, at most batch_size
  EXPECT_EQ(rig.counters.value("receive.packets"), kLarge + 3);
  std::array<PacketRef, 256> refs{};
  const std::size_t n = rig.lane.packets.pop_bulk(std::span(refs));
  ASSERT_EQ(n, kLarge + 3);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t seq = 0;
    std::memcpy(&seq, rig.pool.data(refs[i].slot), sizeof(seq));
    EXPECT_EQ(seq, i < kLarge ? i : i + 8);
    EXPECT_EQ(refs[i].size, i < kLarge ? 8000u : 100u);
  }

  // batch_bytes 0: always batch_size.
  config.batch_bytes = 0;
  Rig rig0("127.0.0.1", config);
  Sender tx0(AF_INET, rig0.socket.bound_port());
  for (std::uint64_t i = 0; i < 10; ++i) tx0.send_seq(i, 8000);
  ASSERT_EQ(rig0.receiver.receive_batch(), 10);
  EXPECT_EQ(rig0.receiver.next_batch(), 64u);
}

TEST(Receiver, KernelDropsArePolledAndCountedByTheReceiveThreadAtItsNextCall) {
  // A tiny socket buffer and no receiving while sending: the kernel must drop. The receive
  // thread learns the drop count only from poll_kernel_drops() (the stats thread's job in efu),
  // and counts it at its next call.
  CounterRegistry counters;
  UdpSocket sock(UdpSocketConfig{"127.0.0.1", 0, "", 1, 50});
  PacketPool pool(pool_slots_needed(1, 4096, 64, 64), 2000);
  Lane lane(4096, pool);
  Receiver rx(sock.fd(), ReceiverConfig{64, 2000}, pool, {&lane}, nullptr, counters);
  Sender tx(AF_INET, sock.bound_port());
  constexpr std::uint64_t kSent = 200;
  for (std::uint64_t i = 0; i < kSent; ++i) tx.send_seq(i, 1400);
  auto drain = [&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < deadline && rx.receive_batch() != 0) {
    }
  };
  drain();
  const std::uint64_t got = counters.value("receive.packets");
  ASSERT_LT(got, kSent) << "the kernel dropped nothing: the test proves nothing";
  EXPECT_EQ(counters.value("receive.dropped.kernel"), 0u) << "counted before any poll";
  rx.poll_kernel_drops();
  EXPECT_EQ(counters.value("receive.dropped.kernel"), 0u) << "counted by the poller's thread";
  rx.receive_batch();  // nothing to receive: returns after the 50 ms receive timeout
  EXPECT_EQ(got + counters.value("receive.dropped.kernel"), kSent);
  EXPECT_EQ(counters.value("receive.dropped.kernel"),
            static_cast<std::uint64_t>(sock.kernel_drops()));
  // A second poll with no new drops adds nothing.
  rx.poll_kernel_drops();
  rx.receive_batch();
  EXPECT_EQ(got + counters.value("receive.dropped.kernel"), kSent);
  EXPECT_EQ(rx.poll_failures(), 0u);
}

TEST(Receiver, FinishReceivesWhatTheSocketHoldsAndCountsDropsNoDatagramReported) {
  // A burst into a tiny buffer while nobody receives: the kernel drops most of it, and no later
  // datagram carries the drop count. finish() (as at stop) must still account for every one.
  CounterRegistry counters;
  UdpSocket sock(UdpSocketConfig{"127.0.0.1", 0, "", 1, 50});
  PacketPool pool(pool_slots_needed(1, 4096, 64, 64), 2000);
  Lane lane(4096, pool);
  Receiver rx(sock.fd(), ReceiverConfig{64, 2000}, pool, {&lane}, nullptr, counters);
  Sender tx(AF_INET, sock.bound_port());
  constexpr std::uint64_t kSent = 300;
  for (std::uint64_t i = 0; i < kSent; ++i) tx.send_seq(i, 1400);
  ASSERT_GT(sock.kernel_drops(), 0) << "the kernel dropped nothing: the test proves nothing";
  rx.finish();
  const std::uint64_t got = counters.value("receive.packets");
  EXPECT_GT(got, 0u);
  EXPECT_GT(counters.value("receive.dropped.kernel"), 0u);
  EXPECT_EQ(
      got + counters.value("receive.dropped.kernel") + counters.value("receive.dropped.at_stop"),
      kSent);
  EXPECT_EQ(lane.packets.size(), got);  // every received datagram was handed on
}

TEST(Receiver, WhatTheDrainCannotTakeInTimeIsCountedAtStop) {
  CounterRegistry counters;
  UdpSocket sock(UdpSocketConfig{"127.0.0.1", 0, "", 1'000'000, 50});
  PacketPool pool(pool_slots_needed(1, 4096, 64, 64), 2000);
  Lane lane(4096, pool);
  ReceiverConfig config{64, 2000};
  config.drain_timeout_ns = 0;  // no time to receive: everything left is discarded and counted
  Receiver rx(sock.fd(), config, pool, {&lane}, nullptr, counters);
  Sender tx(AF_INET, sock.bound_port());
  for (std::uint64_t i = 0; i < 50; ++i) tx.send_seq(i, 100);
  rx.finish();
  EXPECT_EQ(counters.value("receive.packets") + counters.value("receive.dropped.kernel") +
                counters.value("receive.dropped.at_stop"),
            50u);
  EXPECT_EQ(counters.value("receive.dropped.at_stop"), 50u);
}

TEST(Receiver, WhatTheDrainCannotTakeWithGroIsCountedPerDatagram) {
  // With UDP GRO each message left in the socket is a coalesced buffer: at stop it counts as
  // the datagrams it holds, not as one.
  CounterRegistry counters;
  UdpSocketConfig socket_config{"127.0.0.1", 0, "", 1'000'000, 50};
  socket_config.gro = true;
  UdpSocket sock(socket_config);
  PacketPool pool(pool_slots_needed(1, 4096, 64, 64), kGroSlotSize);
  Lane lane(4096, pool);
  ReceiverConfig config{64, 2000};
  config.gro = true;
  config.drain_timeout_ns = 0;
  Receiver rx(sock.fd(), config, pool, {&lane}, nullptr, counters);
  const int fd = test::udp_sender_socket();
  for (unsigned i = 0; i < 5; ++i) test::send_gso(fd, sock.bound_port(), i * 10, 10, 100);
  test::send_one(fd, sock.bound_port(), 50, 100);  // 5 buffers of 10 datagrams, and one alone
  close(fd);
  rx.finish();
  EXPECT_EQ(counters.value("receive.packets") + counters.value("receive.dropped.kernel") +
                counters.value("receive.dropped.at_stop"),
            51u);
  EXPECT_EQ(counters.value("receive.dropped.at_stop"), 51u);
}

TEST(UdpSocket, ReportsTheGrantedReceiveBuffer) {
  long rmem_max = 0;
  std::ifstream("/proc/sys/net/core/rmem_max") >> rmem_max;
  UdpSocket small(UdpSocketConfig{"127.0.0.1", 0, "", 100'000, 50});
  EXPECT_GE(small.granted_rcvbuf(), 100'000u);
  // Asking for more than net.core.rmem_max is capped at it (and efu warns with the sysctl).
  UdpSocket big(
      UdpSocketConfig{"127.0.0.1", 0, "", static_cast<std::size_t>(rmem_max) + 1'000'000, 50});
  EXPECT_EQ(big.granted_rcvbuf(), static_cast<std::size_t>(rmem_max));
}

TEST(UdpSocket, PortInUseIsAConfigErrorNamingThePort) {
  UdpSocket first(UdpSocketConfig{"127.0.0.1", 0, "", 100'000, 50});
  try {
    UdpSocket second(UdpSocketConfig{"127.0.0.1", first.bound_port(), "", 100'000, 50});
    FAIL() << "second bind succeeded";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("Address already in use"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::to_string(first.bound_port())), std::string::npos);
  }
}

TEST(UdpSocket, BadBindAddressIsAConfigError) {
  EXPECT_THROW(UdpSocket(UdpSocketConfig{"not-an-address", 0, "", 100'000, 50}), ConfigError);
}

}  // namespace
}  // namespace efu
