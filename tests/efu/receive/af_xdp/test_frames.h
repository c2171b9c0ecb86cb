// Frames written byte by byte from the formats' definitions (IEEE 802.3/802.1Q, RFC 791,
// RFC 8200, RFC 768), for the frame parser's and the XDP program's tests. Checksums were
// computed by hand from RFC 1071.
#pragma once

#include <cstdint>
#include <vector>

#include "receive/af_xdp/frame_parser.h"

namespace efu::xdp::test {

using Bytes = std::vector<std::uint8_t>;

// clang-format off

// Ethernet: destination 02:00:00:00:00:02, source 02:00:00:00:00:01.
#define EFU_TEST_MACS 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01

// 10.99.0.1:12345 -> 10.99.0.2:9000, DF, TTL 64, payload "efu!".
inline const Bytes kIpv4Frame = {
    EFU_TEST_MACS, 0x08, 0x00,                          // Ethernet, type IPv4
    0x45, 0x00, 0x00, 0x20, 0x12, 0x34, 0x40, 0x00,     // v4 IHL 5, total 32, id, DF
    0x40, 0x11, 0x13, 0xD1,                             // TTL 64, UDP, header checksum
    0x0A, 0x63, 0x00, 0x01, 0x0A, 0x63, 0x00, 0x02,     // source, destination
    0x30, 0x39, 0x23, 0x28, 0x00, 0x0C, 0xBD, 0x24,     // 12345 -> 9000, length 12, checksum
    'e', 'f', 'u', '!'};

// The same with an odd payload "efu!!".
inline const Bytes kIpv4OddFrame = {
    EFU_TEST_MACS, 0x08, 0x00,
    0x45, 0x00, 0x00, 0x21, 0x12, 0x34, 0x40, 0x00,
    0x40, 0x11, 0x13, 0xD0,
    0x0A, 0x63, 0x00, 0x01, 0x0A, 0x63, 0x00, 0x02,
    0x30, 0x39, 0x23, 0x28, 0x00, 0x0D, 0x9C, 0x22,
    'e', 'f', 'u', '!', '!'};

// A one-byte payload "e", padded with zeros to Ethernet's 60-byte minimum.
inline const Bytes kIpv4PaddedFrame = {
    EFU_TEST_MACS, 0x08, 0x00,
    0x45, 0x00, 0x00, 0x1D, 0x12, 0x34, 0x40, 0x00,
    0x40, 0x11, 0x13, 0xD4,
    0x0A, 0x63, 0x00, 0x01, 0x0A, 0x63, 0x00, 0x02,
    0x30, 0x39, 0x23, 0x28, 0x00, 0x09, 0x32, 0xB2,
    'e',
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

// fd00::1:12345 -> fd00::2:9000, payload "efu!".
inline const Bytes kIpv6Frame = {
    EFU_TEST_MACS, 0x86, 0xDD,                          // Ethernet, type IPv6
    0x60, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x11, 0x40,     // v6, payload 12, next UDP, hops 64
    0xFD, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,  // source fd00::1
    0xFD, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02,  // destination fd00::2
    0x30, 0x39, 0x23, 0x28, 0x00, 0x0C, 0xD7, 0xE8,     // 12345 -> 9000, length 12, checksum
    'e', 'f', 'u', '!'};

// The IPv6 frame with a fragment header in front of UDP; the two bytes are its offset/M field.
inline Bytes ipv6_with_fragment_header(std::uint8_t offset_hi, std::uint8_t offset_lo_m) {
  return {
      EFU_TEST_MACS, 0x86, 0xDD,
      0x60, 0x00, 0x00, 0x00, 0x00, 0x14, 0x2C, 0x40,   // payload 20, next: fragment header
      0xFD, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
      0xFD, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02,
      0x11, 0x00, offset_hi, offset_lo_m, 0x00, 0x00, 0x00, 0x07,  // next UDP, id 7
      0x30, 0x39, 0x23, 0x28, 0x00, 0x0C, 0xD7, 0xE8,
      'e', 'f', 'u', '!'};
}

// clang-format on

/// efu's datagrams in these frames: port 9000, IPv4 and IPv6, any address.
inline FrameFilter port_9000_any_address() {
  FrameFilter f;
  f.port = 9000;
  f.ipv4 = true;
  f.ipv6 = true;
  return f;
}

}  // namespace efu::xdp::test
