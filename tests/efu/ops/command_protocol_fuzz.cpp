// libFuzzer target: any bytes as one command-port request. The reply must be one of the
// documented shapes, never longer than a request allows, and never contain a newline.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ops/command_protocol.h"

namespace {

efu::StatsSnapshot fixture() {
  efu::StatsSnapshot s{};
  s.counters = {{"main.uptime", efu::CounterKind::kGauge, 7, 0},
                {"process.packets", efu::CounterKind::kCounter, 1, 1.0},
                {"receive.packets", efu::CounterKind::kCounter, 18446744073709551615ull, 2.0}};
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static efu::LatestStats stats;
  static const efu::CommandProtocol protocol = [] {
    stats.publish(fixture());
    return efu::CommandProtocol(stats, "efu.fuzz.0.", "fuzz", efu::this_build());
  }();
  const efu::CommandReply reply =
      protocol.handle(std::string_view(reinterpret_cast<const char*>(data), size));
  // A reply echoes at most one request word (STAT_GET_NAME) plus a fixed part.
  if (reply.text.empty() || reply.text.size() > efu::CommandProtocol::kMaxRequestBytes + 64 ||
      reply.text.find('\n') != std::string::npos) {
    std::abort();
  }
  const bool error = reply.text.starts_with("Error: <");
  if (error !=
      (reply.outcome != efu::RequestOutcome::kOk && reply.outcome != efu::RequestOutcome::kExit)) {
    std::abort();
  }
  return 0;
}
