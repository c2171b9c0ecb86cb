// libFuzzer target for the af_xdp frame parser (tests/efu/receive/af_xdp/CMakeLists.txt says how to build
// it; seeds in tests/fuzz/corpus/af_xdp_frame_parser/): any bytes, as a whole frame or as the first
// buffer of a longer multi-buffer frame, with any filter. The parser must never read outside
// the bytes it is given, and what it accepts must lie inside the frame.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "receive/af_xdp/frame_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace efu::xdp;
  if (size < 4) return 0;
  // Two control bytes: filter flags and how much longer the whole frame is than this buffer.
  const std::uint8_t flags = data[0];
  const std::uint32_t extra = static_cast<std::uint32_t>(data[1]) * 64u * ((flags >> 7) & 1u);
  FrameFilter filter;
  filter.port = static_cast<std::uint16_t>(data[2] << 8 | data[3]);
  filter.ipv4 = (flags & 1) != 0;
  filter.ipv6 = (flags & 2) != 0;
  filter.match_addr4 = (flags & 4) != 0;
  filter.match_addr6 = (flags & 8) != 0;
  filter.verify_ip_checksum = (flags & 16) != 0;
  const std::span<const std::uint8_t> head(data + 4, size - 4);
  const auto frame_size = static_cast<std::uint32_t>(head.size()) + extra;

  const ParsedFrame f = parse_frame(head, frame_size, filter);
  if (f.error != FrameError::kNone) {
    if (static_cast<std::size_t>(f.error) >= kFrameErrorCount) std::abort();
    return 0;
  }
  // What was accepted lies inside the frame, and every header inside the first buffer.
  if (f.payload_offset > head.size() || f.udp_offset + 8u != f.payload_offset ||
      f.ip_offset >= f.udp_offset ||
      f.payload_offset + std::uint64_t{f.payload_size} > frame_size ||
      (f.ip_version != 4 && f.ip_version != 6)) {
    std::abort();
  }
  // The checksum over a payload that is all in this buffer; over a short one it must say no.
  const std::span<const std::uint8_t> rest = head.subspan(f.payload_offset);
  const bool ok = udp_checksum_valid(head, f, rest);
  if (rest.size() < f.payload_size && ok) std::abort();
  return 0;
}
