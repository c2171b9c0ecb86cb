// The af_xdp frame parser against frames written byte by byte from the formats' definitions
// (test_frames.h).
#include "receive/af_xdp/frame_parser.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "test_frames.h"

namespace efu::xdp {
namespace {

using namespace test;

FrameFilter v4_filter() {
  FrameFilter f;
  f.port = 9000;
  return f;
}

FrameFilter any_filter() { return port_9000_any_address(); }

ParsedFrame parse(const Bytes& frame, const FrameFilter& filter) {
  return parse_frame(frame, static_cast<std::uint32_t>(frame.size()), filter);
}

FrameError error_of(const Bytes& frame, const FrameFilter& filter = any_filter()) {
  return parse(frame, filter).error;
}

TEST(FrameParser, Ipv4Datagram) {
  const ParsedFrame f = parse(kIpv4Frame, v4_filter());
  ASSERT_EQ(f.error, FrameError::kNone);
  EXPECT_EQ(f.ip_version, 4);
  EXPECT_EQ(f.ip_offset, 14);
  EXPECT_EQ(f.udp_offset, 34);
  EXPECT_EQ(f.payload_offset, 42);
  EXPECT_EQ(f.payload_size, 4u);
  EXPECT_EQ(f.source_port, 12345);
  EXPECT_EQ(f.source_address[0], 10);
  EXPECT_EQ(f.source_address[1], 99);
  EXPECT_EQ(f.source_address[2], 0);
  EXPECT_EQ(f.source_address[3], 1);
  EXPECT_EQ(kIpv4Frame[f.payload_offset], 'e');
}

TEST(FrameParser, EthernetPaddingIsNotPayload) {
  const ParsedFrame f = parse(kIpv4PaddedFrame, v4_filter());
  ASSERT_EQ(f.error, FrameError::kNone);
  EXPECT_EQ(kIpv4PaddedFrame.size(), 60u);
  EXPECT_EQ(f.payload_size, 1u);
}

TEST(FrameParser, VlanTaggedIpv4) {
  Bytes tagged(kIpv4Frame.begin(), kIpv4Frame.begin() + 12);
  for (std::uint8_t b : {0x81, 0x00, 0x00, 0x2A}) tagged.push_back(b);  // 802.1Q, VLAN 42
  tagged.insert(tagged.end(), kIpv4Frame.begin() + 12, kIpv4Frame.end());
  const ParsedFrame f = parse(tagged, v4_filter());
  ASSERT_EQ(f.error, FrameError::kNone);
  EXPECT_EQ(f.ip_offset, 18);
  EXPECT_EQ(f.payload_offset, 46);
  EXPECT_EQ(f.payload_size, 4u);
}

TEST(FrameParser, Ipv6Datagram) {
  const ParsedFrame f = parse(kIpv6Frame, any_filter());
  ASSERT_EQ(f.error, FrameError::kNone);
  EXPECT_EQ(f.ip_version, 6);
  EXPECT_EQ(f.udp_offset, 54);
  EXPECT_EQ(f.payload_offset, 62);
  EXPECT_EQ(f.payload_size, 4u);
  EXPECT_EQ(f.source_port, 12345);
  EXPECT_EQ(f.source_address[0], 0xFD);
  EXPECT_EQ(f.source_address[15], 0x01);
}

TEST(FrameParser, Ipv6AtomicFragmentIsWholeDatagram) {
  const Bytes frame = ipv6_with_fragment_header(0x00, 0x00);
  const ParsedFrame f = parse(frame, any_filter());
  ASSERT_EQ(f.error, FrameError::kNone);
  EXPECT_EQ(f.payload_offset, 70);
  EXPECT_EQ(f.payload_size, 4u);
}

TEST(FrameParser, FragmentsAreCounted) {
  EXPECT_EQ(error_of(ipv6_with_fragment_header(0x00, 0x01)), FrameError::kFragment);  // M set
  EXPECT_EQ(error_of(ipv6_with_fragment_header(0x00, 0xB8)), FrameError::kFragment);  // offset 23
  Bytes more = kIpv4Frame;
  more[20] = 0x20;  // MF flag
  EXPECT_EQ(error_of(more), FrameError::kFragment);
  Bytes later = kIpv4Frame;
  later[20] = 0x00;
  later[21] = 0xB9;  // offset 185 * 8
  EXPECT_EQ(error_of(later), FrameError::kFragment);
}

TEST(FrameParser, FamilyAndAddressFilter) {
  EXPECT_EQ(error_of(kIpv6Frame, v4_filter()), FrameError::kAddress);  // IPv6 not accepted
  FrameFilter only6 = any_filter();
  only6.ipv4 = false;
  EXPECT_EQ(error_of(kIpv4Frame, only6), FrameError::kAddress);

  FrameFilter to_addr = any_filter();
  to_addr.match_addr4 = true;
  to_addr.addr4 = {10, 99, 0, 2};
  EXPECT_EQ(error_of(kIpv4Frame, to_addr), FrameError::kNone);
  to_addr.addr4 = {10, 99, 0, 3};
  EXPECT_EQ(error_of(kIpv4Frame, to_addr), FrameError::kAddress);

  FrameFilter to_addr6 = any_filter();
  to_addr6.match_addr6 = true;
  to_addr6.addr6 = {0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02};
  EXPECT_EQ(error_of(kIpv6Frame, to_addr6), FrameError::kNone);
  to_addr6.addr6[15] = 0x01;
  EXPECT_EQ(error_of(kIpv6Frame, to_addr6), FrameError::kAddress);
}

TEST(FrameParser, PortFilter) {
  FrameFilter other = any_filter();
  other.port = 9001;
  EXPECT_EQ(error_of(kIpv4Frame, other), FrameError::kPort);
  EXPECT_EQ(error_of(kIpv6Frame, other), FrameError::kPort);
}

TEST(FrameParser, EveryTruncationIsCountedNeverRead) {
  // Every prefix of a valid frame is rejected without reading past it (ASan checks the reads).
  for (const Bytes* frame : {&kIpv4Frame, &kIpv6Frame}) {
    for (std::size_t n = 0; n < frame->size(); ++n) {
      const Bytes prefix(frame->begin(), frame->begin() + static_cast<std::ptrdiff_t>(n));
      const FrameError e = error_of(prefix);
      EXPECT_NE(e, FrameError::kNone) << "prefix of " << n << " bytes";
      EXPECT_TRUE(e == FrameError::kTruncated || e == FrameError::kIpLength)
          << "prefix of " << n << " bytes: " << kFrameErrorNames[static_cast<int>(e)];
    }
  }
}

TEST(FrameParser, HeadersInFirstBufferOfLongerFrame) {
  // A multi-buffer frame: the parser sees only the first buffer but knows the whole length.
  Bytes head = kIpv4Frame;
  head[16] = 0x03;  // total length 1000
  head[17] = 0xE8;
  head[38] = 0x03;  // UDP length 980
  head[39] = 0xD4;
  const ParsedFrame f = parse_frame(head, 1014, v4_filter());
  ASSERT_EQ(f.error, FrameError::kNone);
  EXPECT_EQ(f.payload_size, 972u);
  EXPECT_EQ(parse_frame(head, 1013, v4_filter()).error, FrameError::kIpLength);
  EXPECT_EQ(parse_frame(head, 10, v4_filter()).error, FrameError::kTruncated);  // < head
}

TEST(FrameParser, MalformedHeaders) {
  Bytes arp = kIpv4Frame;
  arp[12] = 0x08;
  arp[13] = 0x06;
  EXPECT_EQ(error_of(arp), FrameError::kEthertype);

  Bytes short_ihl = kIpv4Frame;
  short_ihl[14] = 0x44;
  EXPECT_EQ(error_of(short_ihl), FrameError::kIpHeader);
  Bytes wrong_version = kIpv4Frame;
  wrong_version[14] = 0x65;
  EXPECT_EQ(error_of(wrong_version), FrameError::kIpHeader);
  Bytes wrong_version6 = kIpv6Frame;
  wrong_version6[14] = 0x40;
  EXPECT_EQ(error_of(wrong_version6), FrameError::kIpHeader);

  Bytes too_long = kIpv4Frame;
  too_long[17] = 0x21;  // total 33 > 32 available
  EXPECT_EQ(error_of(too_long), FrameError::kIpLength);
  Bytes below_header = kIpv4Frame;
  below_header[17] = 0x13;  // total 19 < IHL 20
  EXPECT_EQ(error_of(below_header), FrameError::kIpLength);
  Bytes too_long6 = kIpv6Frame;
  too_long6[19] = 0x0D;
  EXPECT_EQ(error_of(too_long6), FrameError::kIpLength);

  Bytes tcp = kIpv4Frame;
  tcp[23] = 0x06;
  EXPECT_EQ(error_of(tcp), FrameError::kProtocol);
  Bytes hop_by_hop = kIpv6Frame;
  hop_by_hop[20] = 0x00;
  EXPECT_EQ(error_of(hop_by_hop), FrameError::kProtocol);

  Bytes udp_short = kIpv4Frame;
  udp_short[39] = 0x07;
  EXPECT_EQ(error_of(udp_short), FrameError::kUdpLength);
  Bytes udp_long = kIpv4Frame;
  udp_long[39] = 0x0D;  // 13 > the IP payload of 12
  EXPECT_EQ(error_of(udp_long), FrameError::kUdpLength);
  Bytes ip_no_room = kIpv4Frame;
  ip_no_room[17] = 0x1B;  // total 27: 7 bytes after the IP header, less than a UDP header
  EXPECT_EQ(error_of(ip_no_room), FrameError::kUdpLength);
}

TEST(FrameParser, Ipv4HeaderChecksumOnlyWhenAsked) {
  Bytes bad = kIpv4Frame;
  bad[25] ^= 0x01;
  FrameFilter verify = v4_filter();
  verify.verify_ip_checksum = true;
  EXPECT_EQ(error_of(kIpv4Frame, verify), FrameError::kNone);
  EXPECT_EQ(error_of(bad, verify), FrameError::kIpChecksum);
  EXPECT_EQ(error_of(bad, v4_filter()), FrameError::kNone);
}

bool checksum_ok(const Bytes& frame) {
  const ParsedFrame f = parse(frame, any_filter());
  EXPECT_EQ(f.error, FrameError::kNone);
  return udp_checksum_valid(frame, f, std::span(frame).subspan(f.payload_offset));
}

TEST(FrameParser, UdpChecksum) {
  EXPECT_TRUE(checksum_ok(kIpv4Frame));
  EXPECT_TRUE(checksum_ok(kIpv4OddFrame));
  EXPECT_TRUE(checksum_ok(kIpv4PaddedFrame));  // the padding is not summed
  EXPECT_TRUE(checksum_ok(kIpv6Frame));
  for (const Bytes* good : {&kIpv4Frame, &kIpv4OddFrame, &kIpv6Frame}) {
    Bytes flipped = *good;
    flipped.back() ^= 0x10;  // one payload bit
    EXPECT_FALSE(checksum_ok(flipped));
    Bytes source = *good;
    source[good == &kIpv6Frame ? 37 : 29] ^= 0x01;  // the pseudo-header's source address
    EXPECT_FALSE(checksum_ok(source));
  }
  Bytes none4 = kIpv4Frame;
  none4[40] = none4[41] = 0;  // "no checksum" is allowed on IPv4 ...
  EXPECT_TRUE(checksum_ok(none4));
  Bytes none6 = kIpv6Frame;
  none6[60] = none6[61] = 0;  // ... and not on IPv6
  EXPECT_FALSE(checksum_ok(none6));
}

TEST(FrameParser, UdpChecksumOverCopiedPayload) {
  const ParsedFrame f = parse(kIpv4Frame, v4_filter());
  const Bytes copy = {'e', 'f', 'u', '!'};
  EXPECT_TRUE(udp_checksum_valid(kIpv4Frame, f, copy));
  const Bytes other = {'e', 'f', 'u', '?'};
  EXPECT_FALSE(udp_checksum_valid(kIpv4Frame, f, other));
  EXPECT_FALSE(udp_checksum_valid(kIpv4Frame, f, std::span(copy).first(3)));  // too short
}

TEST(FrameParser, ErrorNamesAreStable) {
  EXPECT_STREQ(kFrameErrorNames[static_cast<int>(FrameError::kTruncated)], "truncated");
  EXPECT_STREQ(kFrameErrorNames[static_cast<int>(FrameError::kFragment)], "fragment");
  EXPECT_STREQ(kFrameErrorNames[static_cast<int>(FrameError::kUdpChecksum)], "checksum_udp");
  EXPECT_STREQ(kFrameErrorNames[static_cast<int>(FrameError::kAddress)], "address");
  EXPECT_EQ(static_cast<std::size_t>(FrameError::kAddress) + 1, kFrameErrorCount);
}

}  // namespace
}  // namespace efu::xdp
