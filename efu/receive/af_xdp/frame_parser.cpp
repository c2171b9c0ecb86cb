#include "receive/af_xdp/frame_parser.h"

#include <cstring>

namespace efu::xdp {
namespace {

constexpr std::size_t kEthernetHeader = 14;
constexpr std::size_t kVlanTag = 4;
constexpr std::size_t kIpv4MinHeader = 20;
constexpr std::size_t kIpv6Header = 40;
constexpr std::size_t kIpv6FragmentHeader = 8;
constexpr std::size_t kUdpHeader = 8;
constexpr std::uint16_t kEthertypeIpv4 = 0x0800;
constexpr std::uint16_t kEthertypeIpv6 = 0x86DD;
constexpr std::uint16_t kEthertypeVlan = 0x8100;
constexpr std::uint16_t kEthertypeQinQ = 0x88A8;
constexpr std::uint8_t kProtocolUdp = 17;
constexpr std::uint8_t kIpv6NextFragment = 44;

std::uint16_t be16(const std::uint8_t* p) { return static_cast<std::uint16_t>((p[0] << 8) | p[1]); }

ParsedFrame fail(FrameError e) {
  ParsedFrame f;
  f.error = e;
  return f;
}

// Folds a ones' complement sum to 16 bits.
std::uint16_t fold(std::uint64_t sum) {
  while ((sum >> 16) != 0) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<std::uint16_t>(sum);
}

// The UDP header at `udp` of an IP payload of `ip_payload` bytes: checks lengths and the port,
// fills the UDP part of `f`.
FrameError parse_udp(std::span<const std::uint8_t> head, std::size_t udp, std::size_t ip_payload,
                     const FrameFilter& filter, ParsedFrame& f) {
  if (ip_payload < kUdpHeader) return FrameError::kUdpLength;
  if (head.size() < udp + kUdpHeader) return FrameError::kTruncated;
  const std::uint8_t* h = head.data() + udp;
  const std::uint16_t length = be16(h + 4);
  if (length < kUdpHeader || length > ip_payload) return FrameError::kUdpLength;
  if (be16(h + 2) != filter.port) return FrameError::kPort;
  f.udp_offset = static_cast<std::uint16_t>(udp);
  f.payload_offset = static_cast<std::uint16_t>(udp + kUdpHeader);
  f.payload_size = length - kUdpHeader;
  f.source_port = be16(h);
  return FrameError::kNone;
}

FrameError parse_ipv4(std::span<const std::uint8_t> head, std::size_t ip, std::uint32_t frame_size,
                      const FrameFilter& filter, ParsedFrame& f) {
  if (head.size() < ip + kIpv4MinHeader) return FrameError::kTruncated;
  const std::uint8_t* h = head.data() + ip;
  const std::size_t header = (h[0] & 0x0F) * 4u;
  if ((h[0] >> 4) != 4 || header < kIpv4MinHeader) return FrameError::kIpHeader;
  if (head.size() < ip + header) return FrameError::kTruncated;
  const std::size_t total = be16(h + 2);
  if (total < header || total > frame_size - ip) return FrameError::kIpLength;
  if (filter.verify_ip_checksum && fold(ones_complement_add(0, std::span(h, header))) != 0xFFFF) {
    return FrameError::kIpChecksum;
  }
  if (h[9] != kProtocolUdp) return FrameError::kProtocol;
  if (!filter.ipv4 || (filter.match_addr4 && std::memcmp(h + 16, filter.addr4.data(), 4) != 0)) {
    return FrameError::kAddress;
  }
  if ((be16(h + 6) & 0x3FFF) != 0) return FrameError::kFragment;  // MF flag or an offset
  f.ip_version = 4;
  std::memcpy(f.source_address.data(), h + 12, 4);
  return parse_udp(head, ip + header, total - header, filter, f);
}

FrameError parse_ipv6(std::span<const std::uint8_t> head, std::size_t ip, std::uint32_t frame_size,
                      const FrameFilter& filter, ParsedFrame& f) {
  if (head.size() < ip + kIpv6Header) return FrameError::kTruncated;
  const std::uint8_t* h = head.data() + ip;
  if ((h[0] >> 4) != 6) return FrameError::kIpHeader;
  std::size_t payload = be16(h + 4);
  if (payload > frame_size - ip - kIpv6Header) return FrameError::kIpLength;
  std::uint8_t next = h[6];
  std::size_t l4 = ip + kIpv6Header;
  if (next == kIpv6NextFragment) {
    if (payload < kIpv6FragmentHeader) return FrameError::kIpLength;
    if (head.size() < l4 + kIpv6FragmentHeader) return FrameError::kTruncated;
    const std::uint8_t* frag = head.data() + l4;
    // Offset (13 bits) and the M flag; an "atomic fragment" (both zero) is a whole datagram.
    if ((be16(frag + 2) & 0xFFF9) != 0) return FrameError::kFragment;
    next = frag[0];
    l4 += kIpv6FragmentHeader;
    payload -= kIpv6FragmentHeader;
  }
  if (next != kProtocolUdp) return FrameError::kProtocol;
  if (!filter.ipv6 || (filter.match_addr6 && std::memcmp(h + 24, filter.addr6.data(), 16) != 0)) {
    return FrameError::kAddress;
  }
  f.ip_version = 6;
  std::memcpy(f.source_address.data(), h + 8, 16);
  return parse_udp(head, l4, payload, filter, f);
}

}  // namespace

ParsedFrame parse_frame(std::span<const std::uint8_t> head, std::uint32_t frame_size,
                        const FrameFilter& filter) {
  if (frame_size < head.size()) return fail(FrameError::kTruncated);
  if (head.size() < kEthernetHeader) return fail(FrameError::kTruncated);
  std::size_t ip = kEthernetHeader;
  std::uint16_t ethertype = be16(head.data() + 12);
  if (ethertype == kEthertypeVlan || ethertype == kEthertypeQinQ) {
    if (head.size() < kEthernetHeader + kVlanTag) return fail(FrameError::kTruncated);
    ethertype = be16(head.data() + 16);
    ip += kVlanTag;
  }
  ParsedFrame f;
  f.ip_offset = static_cast<std::uint16_t>(ip);
  if (ethertype == kEthertypeIpv4) {
    f.error = parse_ipv4(head, ip, frame_size, filter, f);
  } else if (ethertype == kEthertypeIpv6) {
    f.error = parse_ipv6(head, ip, frame_size, filter, f);
  } else {
    f.error = FrameError::kEthertype;
  }
  return f.error == FrameError::kNone ? f : fail(f.error);
}

std::uint64_t ones_complement_add(std::uint64_t sum, std::span<const std::uint8_t> bytes) {
  const std::uint8_t* p = bytes.data();
  std::size_t n = bytes.size();
  // 32-bit words in machine order: the ones' complement sum does not depend on byte order as
  // long as every word is read the same way (RFC 1071 §2(B)); the caller folds at the end.
  for (; n >= 4; p += 4, n -= 4) {
    std::uint32_t w;
    std::memcpy(&w, p, 4);
    sum += w;
  }
  if (n >= 2) {
    std::uint16_t w;
    std::memcpy(&w, p, 2);
    sum += w;
    p += 2;
    n -= 2;
  }
  if (n == 1) {
    const std::uint8_t last[2] = {*p, 0};
    std::uint16_t w;
    std::memcpy(&w, last, 2);
    sum += w;
  }
  return sum;
}

bool udp_checksum_valid(std::span<const std::uint8_t> head, const ParsedFrame& frame,
                        std::span<const std::uint8_t> payload) {
  if (frame.error != FrameError::kNone || head.size() < frame.payload_offset ||
      payload.size() < frame.payload_size) {
    return false;
  }
  const std::uint8_t* udp = head.data() + frame.udp_offset;
  const bool checksum_absent = udp[6] == 0 && udp[7] == 0;
  if (checksum_absent) return frame.ip_version == 4;
  const std::uint32_t udp_length = frame.payload_size + kUdpHeader;
  const std::uint8_t* ip = head.data() + frame.ip_offset;
  std::uint64_t sum = 0;
  if (frame.ip_version == 4) {
    sum = ones_complement_add(sum, std::span(ip + 12, 8));  // source and destination
    const std::uint8_t rest[4] = {0, kProtocolUdp, static_cast<std::uint8_t>(udp_length >> 8),
                                  static_cast<std::uint8_t>(udp_length)};
    sum = ones_complement_add(sum, rest);
  } else {
    sum = ones_complement_add(sum, std::span(ip + 8, 32));
    const std::uint8_t rest[8] = {static_cast<std::uint8_t>(udp_length >> 24),
                                  static_cast<std::uint8_t>(udp_length >> 16),
                                  static_cast<std::uint8_t>(udp_length >> 8),
                                  static_cast<std::uint8_t>(udp_length),
                                  0,
                                  0,
                                  0,
                                  kProtocolUdp};
    sum = ones_complement_add(sum, rest);
  }
  sum = ones_complement_add(sum, std::span(udp, kUdpHeader));
  sum = ones_complement_add(sum, payload.first(frame.payload_size));
  return fold(sum) == 0xFFFF;
}

}  // namespace efu::xdp
