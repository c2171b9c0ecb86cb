// The generators' pacer and sender.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "efu/errors.h"
#include "efu/gen/pacer.h"
#include "efu/gen/packet_sender.h"
#include "udp_receiver.h"

namespace efu::gen {
namespace {

using namespace std::chrono_literals;

TEST(Pacer, TheScheduleIsAbsoluteInPacketsOrBytes) {
  const Pacer pps(Rate{1000, 0});
  EXPECT_EQ(pps.due(0, 0), pps.start());
  EXPECT_EQ(pps.due(250, 123456) - pps.start(), 250ms);
  const Pacer gbps(Rate{0, 8});  // 8 Gb/s = 1 byte per ns
  EXPECT_EQ(gbps.due(7, 1'000'000) - gbps.start(), 1ms);
  const Pacer free(Rate{});
  EXPECT_FALSE(free.throttled());
  EXPECT_TRUE(pps.throttled());
}

TEST(Pacer, NeverLetsADatagramLeaveBeforeItIsDue) {
  const Pacer pacer(Rate{20'000, 0});
  for (std::uint64_t n = 0; n < 200; n += 17) {
    pacer.wait_for(n, 0);
    EXPECT_GE(Pacer::Clock::now(), pacer.due(n, 0)) << n;
  }
}

TEST(Pacer, AStopRequestEndsTheWait) {
  const Pacer pacer(Rate{1, 0});  // the 1000th datagram is due in 1000 s
  const std::atomic<bool> stop{true};
  pacer.wait_for(1000, 0, &stop);
  EXPECT_LT(Pacer::Clock::now(), pacer.due(1000, 0));
}

using Receiver = test::UdpReceiver;

TEST(PacketSender, SendsEveryDatagramInBatchesAndCountsThem) {
  Receiver rx;
  const Pacer pacer(Rate{});
  SenderSettings s;
  s.host = "127.0.0.1";
  s.port = rx.port();
  s.batch = 4;
  s.max_size = 300;
  PacketSender sender(s, pacer);
  std::uint64_t bytes = 0;
  for (std::uint32_t i = 0; i < 10; ++i) {
    const std::uint32_t size = 100 + 20 * i;
    std::memset(sender.buffer(), static_cast<int>(i), size);
    ASSERT_TRUE(sender.commit(size));
    bytes += size;
  }
  EXPECT_EQ(sender.packets(), 8U);  // two full batches went out; two datagrams are queued
  ASSERT_TRUE(sender.flush());
  EXPECT_EQ(sender.packets(), 10U);
  EXPECT_EQ(sender.bytes(), bytes);
  EXPECT_EQ(sender.send_errors(), 0U);
  for (std::uint32_t i = 0; i < 10; ++i) {
    const auto d = rx.next();
    ASSERT_EQ(d.size(), 100 + 20 * i);
    EXPECT_EQ(d.front(), i);
    EXPECT_EQ(d.back(), i);
  }
  // send() copies a datagram.
  const std::uint8_t tiny[3] = {7, 8, 9};
  ASSERT_TRUE(sender.send(tiny, 3));
  ASSERT_TRUE(sender.flush());
  EXPECT_EQ(rx.next(), (std::vector<std::uint8_t>{7, 8, 9}));
}

TEST(PacketSender, WithGsoAnEmptyDatagramIsSentOnItsOwn) {
  // GSO lets one shorter datagram close a message of same-size ones; an empty one there would be
  // no segment at all. Each datagram arrives, in order: a vanished empty one shifts the sizes.
  Receiver rx;
  const Pacer pacer(Rate{});
  SenderSettings s;
  s.host = "127.0.0.1";
  s.port = rx.port();
  s.max_size = 300;
  s.gso = true;
  PacketSender sender(s, pacer);
  const std::vector<std::uint32_t> sizes{100, 100, 0, 100, 100, 0, 100};
  for (const std::uint32_t size : sizes) {
    std::memset(sender.buffer(), 0x5a, size);
    ASSERT_TRUE(sender.commit(size));
  }
  ASSERT_TRUE(sender.flush());
  EXPECT_EQ(sender.packets(), sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) EXPECT_EQ(rx.next().size(), sizes[i]) << i;
}

TEST(PacketSender, SendsToIpv6) {
  const int fd = socket(AF_INET6, SOCK_DGRAM, 0);
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const Pacer pacer(Rate{});
  SenderSettings s;
  s.host = "::1";
  s.port = ntohs(a.sin6_port);
  PacketSender sender(s, pacer);
  ASSERT_TRUE(sender.send(reinterpret_cast<const std::uint8_t*>("hello"), 5));
  ASSERT_TRUE(sender.flush());
  char buf[16] = {};
  timeval tv{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  EXPECT_EQ(recv(fd, buf, sizeof buf, 0), 5);
  EXPECT_STREQ(buf, "hello");
  close(fd);
}

TEST(PacketSender, AHostThatDoesNotResolveIsAConfigError) {
  const Pacer pacer(Rate{});
  SenderSettings s;
  s.host = "no such host.invalid";
  try {
    PacketSender sender(s, pacer);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--host: 'no such host.invalid' does not resolve", 0), 0U)
        << e.what();
  }
}

}  // namespace
}  // namespace efu::gen
