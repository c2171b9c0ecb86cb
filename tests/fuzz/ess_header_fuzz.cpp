// libFuzzer target for the ESS readout header parser and the readout block walker (common/):
// the input is one datagram. The parser must accept or reject it by exactly one counter, and the
// walker must frame the bytes after an accepted header without reading outside them.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "efu/counters.h"
#include "efu/ess/readout_blocks.h"
#include "efu/ess/readout_header.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || size > 65535) return 0;
  efu::CounterRegistry counters;
  // The first byte picks the settings, so both the type check and MaxPulseTimeNS are reached.
  const efu::ess::HeaderSettings settings{static_cast<std::uint8_t>(0x40 | (data[0] & 0x0f)),
                                          (data[0] & 0x80) != 0 ? 1'000'000'000ULL : 0};
  efu::ess::HeaderParser parser(counters, settings);
  efu::ess::ReadoutBlockWalker fixed(counters, 20, "fixed.");
  efu::ess::ReadoutBlockWalker varying(counters, 0, "varying.");
  const std::uint8_t* packet = data + 1;
  const auto packet_size = static_cast<std::uint32_t>(size - 1);
  // The same bytes twice: the second parse exercises the per-queue sequence state.
  for (int round = 0; round < 2; ++round) {
    efu::ess::PacketHeader header{};
    const auto status = parser.parse(packet, packet_size, header);
    // Exactly one of: accepted, or one rejection counter (sequence errors do not reject).
    std::uint64_t rejected = 0;
    for (const char* name : efu::ess::kHeaderErrorNames) {
      if (std::string_view(name) != "sequence") {
        rejected += counters.value(std::string("parser.essheader.errors.") + name);
      }
    }
    if (counters.value("parser.essheader.packets") + rejected != static_cast<unsigned>(round + 1)) {
      std::abort();
    }
    if (status == efu::ess::HeaderStatus::kRejected) continue;
    if (header.header_size > packet_size) std::abort();  // accepted: must lie inside the packet
    const std::uint8_t* body = packet + header.header_size;
    const std::uint32_t body_size = packet_size - header.header_size;
    std::uint64_t framed = 0;
    auto check = [&](const efu::ess::ReadoutBlock& b) {
      if (b.data < body || b.data + b.length > body + body_size) std::abort();
      framed += b.length;
    };
    fixed.walk(body, body_size, check);
    varying.walk(body, body_size, check);
    if (framed > 2ULL * body_size) std::abort();
  }
  return 0;
}
