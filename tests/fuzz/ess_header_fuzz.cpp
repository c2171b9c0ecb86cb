// libFuzzer target for the ESS readout header parser and the readout block walker (common/):
// the input is one datagram. The parser must accept it or reject it in exactly one counter, and the
// walker must frame the bytes after an accepted header without reading outside them.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include <string>
#include <string_view>

#include "efu/counters.h"
#include "efu/ess/readout_blocks.h"
#include "efu/ess/readout_header.h"

namespace {

// Built once: constructing a registry per input would cost more than the parsing. The parsers
// keep per-queue sequence state across inputs, which only widens what is reached.
struct Parsers {
  efu::CounterRegistry counters;
  // Freia's type byte, and the MaxPulseTimeNS check on (1 s), so every rejection is reachable.
  efu::ess::HeaderParser header{counters, efu::ess::HeaderSettings{0x48, 1'000'000'000ULL}};
  efu::ess::ReadoutBlockWalker fixed{counters, 20, "fixed."};
  efu::ess::ReadoutBlockWalker varying{counters, 0, "varying."};
  std::vector<const efu::Counter*> outcome_counters;
  Parsers() {
    outcome_counters.push_back(counters.find("parser.essheader.packets"));
    for (const char* name : efu::ess::kHeaderErrorNames) {
      if (std::string_view(name) != "sequence") {
        outcome_counters.push_back(counters.find(std::string("parser.essheader.errors.") + name));
      }
    }
  }
  std::uint64_t outcomes() const {
    std::uint64_t n = 0;
    for (const efu::Counter* c : outcome_counters) n += c->get();
    return n;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Parsers p;
  if (size == 0 || size > 65535) return 0;
  efu::ess::HeaderParser& parser = p.header;
  const std::uint8_t* packet = data;
  const auto packet_size = static_cast<std::uint32_t>(size);
  // The same bytes twice: the second parse meets the sequence state the first one left.
  for (int round = 0; round < 2; ++round) {
    const std::uint64_t before = p.outcomes();
    efu::ess::PacketHeader header{};
    const auto status = parser.parse(packet, packet_size, header);
    // Exactly one outcome: accepted, or one rejection counter (sequence errors do not reject).
    if (p.outcomes() != before + 1) std::abort();
    if (status == efu::ess::HeaderStatus::kRejected) continue;
    if (header.header_size > packet_size) std::abort();  // accepted: must lie inside the packet
    const std::uint8_t* body = packet + header.header_size;
    const std::uint32_t body_size = packet_size - header.header_size;
    std::uint64_t framed = 0;
    auto check = [&](const efu::ess::ReadoutBlock& b) {
      if (b.data < body || b.data + b.length > body + body_size) std::abort();
      framed += b.length;
    };
    p.fixed.walk(body, body_size, check);
    p.varying.walk(body, body_size, check);
    if (framed > 2ULL * body_size) std::abort();
  }
  return 0;
}
