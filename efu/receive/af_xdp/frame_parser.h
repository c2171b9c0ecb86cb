// The af_xdp backend's frame parser: Ethernet (one optional VLAN tag), IPv4 or IPv6, UDP. A pure
// function over bytes, so it can be unit-tested with literal frames and fuzzed. Every way a frame
// can be unusable has its own FrameError, which the receiver counts as receive.xdp.errors.<name>.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace efu::xdp {

enum class FrameError : std::uint8_t {
  kNone = 0,
  kTruncated,    // the frame ends inside a header it announces
  kEthertype,    // neither IPv4 nor IPv6 (after at most one VLAN tag)
  kIpHeader,     // IPv4 version/IHL or IPv6 version field wrong
  kIpLength,     // IP total (or payload) length longer than the frame, or shorter than its headers
  kFragment,     // an IP fragment: efu does not reassemble datagrams
  kProtocol,     // not UDP (IPv6: any extension header other than one fragment header)
  kUdpLength,    // UDP length field below 8 or beyond the IP payload
  kIpChecksum,   // IPv4 header checksum wrong (only checked when asked)
  kUdpChecksum,  // UDP checksum wrong, or missing on IPv6 (only checked when asked)
  kPort,         // destination port is not efu's
  kAddress,      // destination address is not the one efu receives on
};
inline constexpr std::size_t kFrameErrorCount = 12;

/// Stable counter name suffixes, indexed by FrameError (receive.xdp.errors.<name>).
inline constexpr std::array<const char*, kFrameErrorCount> kFrameErrorNames = {
    "none",     "truncated",  "ethertype",   "ip_header",    "ip_length", "fragment",
    "protocol", "udp_length", "checksum_ip", "checksum_udp", "port",      "address"};

/// Which datagrams are efu's. Addresses are as on the wire (network byte order).
struct FrameFilter {
  std::uint16_t port = 0;    // host byte order
  bool ipv4 = true;          // accept IPv4
  bool ipv6 = false;         // accept IPv6
  bool match_addr4 = false;  // ... only to addr4
  bool match_addr6 = false;  // ... only to addr6
  std::array<std::uint8_t, 4> addr4{};
  std::array<std::uint8_t, 16> addr6{};
  bool verify_ip_checksum = false;
};

/// What a valid frame holds. Offsets count from the frame's first byte.
struct ParsedFrame {
  FrameError error = FrameError::kNone;
  std::uint8_t ip_version = 0;       // 4 or 6
  std::uint16_t ip_offset = 0;       // where the IP header starts
  std::uint16_t udp_offset = 0;      // where the UDP header starts
  std::uint16_t payload_offset = 0;  // where the UDP payload starts
  std::uint32_t payload_size = 0;    // from the UDP length field (Ethernet padding excluded)
  std::uint16_t source_port = 0;     // host byte order
  std::array<std::uint8_t, 16> source_address{};  // IPv4 in the first 4 bytes; wire order
};

/// Parses one received frame. `head` holds the frame's first bytes (the first buffer of a
/// multi-buffer frame: every header must lie in it); `frame_size` is the whole frame's length,
/// at least head.size(). Never reads outside `head`. The UDP checksum is not checked here
/// because the payload may continue past `head`: see udp_checksum_valid().
ParsedFrame parse_frame(std::span<const std::uint8_t> head, std::uint32_t frame_size,
                        const FrameFilter& filter);

/// The ones' complement sum (RFC 1071) of `bytes` added to `sum`, in the machine's byte order.
/// `bytes` must start at an even offset of the summed sequence; an odd last byte is padded.
std::uint64_t ones_complement_add(std::uint64_t sum, std::span<const std::uint8_t> bytes);

/// Checks the UDP checksum of a frame that parse_frame() accepted: pseudo-header and UDP header
/// from `head`, the payload (frame.payload_size bytes) from `payload`, which may be a copy.
/// A zero checksum means "none" for IPv4 (valid) and is invalid for IPv6 (RFC 8200).
bool udp_checksum_valid(std::span<const std::uint8_t> head, const ParsedFrame& frame,
                        std::span<const std::uint8_t> payload);

}  // namespace efu::xdp
