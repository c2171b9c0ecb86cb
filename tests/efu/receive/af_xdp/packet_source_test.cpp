// The sender that the af_xdp backend hands to plugins: the same PacketSource the socket backend
// gets from recvmmsg (family, address, port; link-local IPv6 scoped to the interface).
#include <arpa/inet.h>

#include <cstring>

#include <gtest/gtest.h>

#include "receive/af_xdp/frame_parser.h"
#include "receive/af_xdp/xdp_receiver.h"
#include "test_frames.h"

namespace efu::xdp {
namespace {

using namespace test;

ParsedFrame parsed(const Bytes& frame) {
  const ParsedFrame f =
      parse_frame(frame, static_cast<std::uint32_t>(frame.size()), port_9000_any_address());
  EXPECT_EQ(f.error, FrameError::kNone);
  return f;
}

TEST(PacketSource, Ipv4Sender) {
  const PacketSource s = packet_source(parsed(kIpv4Frame), 7);
  ASSERT_EQ(s.family(), AF_INET);
  EXPECT_EQ(s.port(), 12345);
  EXPECT_EQ(ntohl(s.v4.sin_addr.s_addr), 0x0A630001u);  // 10.99.0.1
}

TEST(PacketSource, Ipv6Sender) {
  const PacketSource s = packet_source(parsed(kIpv6Frame), 7);
  ASSERT_EQ(s.family(), AF_INET6);
  EXPECT_EQ(s.port(), 12345);
  const std::uint8_t fd00_1[16] = {0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  EXPECT_EQ(std::memcmp(s.v6.sin6_addr.s6_addr, fd00_1, 16), 0);
  EXPECT_EQ(s.v6.sin6_scope_id, 0u);  // a global address has no scope
}

TEST(PacketSource, LinkLocalIpv6SenderIsScopedToTheInterface) {
  Bytes link_local = kIpv6Frame;
  link_local[22] = 0xFE;  // source fe80::1
  link_local[23] = 0x80;
  // The UDP checksum is not checked here; only the sender matters.
  const PacketSource s = packet_source(parsed(link_local), 7);
  ASSERT_EQ(s.family(), AF_INET6);
  EXPECT_EQ(s.v6.sin6_scope_id, 7u);
}

TEST(PacketSource, FlowHashSeparatesSendersAndKeepsOneFlowTogether) {
  Bytes other_port = kIpv4Frame;
  other_port[35] = 0x3A;  // source port 12346
  const PacketSource a = packet_source(parsed(kIpv4Frame), 7);
  const PacketSource b = packet_source(parsed(other_port), 7);
  EXPECT_EQ(a.flow_hash(), packet_source(parsed(kIpv4Frame), 7).flow_hash());
  EXPECT_NE(a.flow_hash(), b.flow_hash());
}

}  // namespace
}  // namespace efu::xdp
