// The one definition of loss (docs/architecture.md §4.4): which counters make up what efu lost,
// as three gauges in every stats output, the summary and --stats-json. The summary, the demo,
// the Python tests, the soak and the benchmarks read these gauges instead of adding counters up
// each in their own way.
//
//   lost.datagrams     datagrams that may have been valid and never reached a pipeline:
//                      the kernel's drops, full rings, what was left at stop, and af_xdp
//                      datagrams on a queue without efu's socket
//   rejected.datagrams datagrams the host refused as malformed (larger than --max-datagram,
//                      empty, af_xdp frames that are no usable datagram): no valid data
//   lost.events        events formed that did not reach Kafka (never queued, or not delivered)
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "efu/counters.h"

namespace efu {

/// The counters each total adds up; a name ending in '.' adds every counter under it.
inline constexpr std::array<std::string_view, 4> kLostDatagrams{
    "receive.dropped.kernel", "receive.dropped.ring_full", "receive.dropped.at_stop",
    "receive.xdp.dropped.no_socket"};
inline constexpr std::array<std::string_view, 3> kRejectedDatagrams{
    "receive.truncated", "receive.dropped.empty", "receive.xdp.errors."};
inline constexpr std::array<std::string_view, 2> kLostEvents{"ev44.events.dropped",
                                                             "ev44.events.delivery.failed"};

struct LossTotals {
  std::uint64_t lost_datagrams = 0;
  std::uint64_t rejected_datagrams = 0;
  std::uint64_t lost_events = 0;
};

/// The totals of one sample of the counters.
LossTotals loss_totals(const std::vector<CounterSample>& sample);

/// The three gauges: registered before the registry is frozen, set by update() (the stats
/// thread, each interval, and the main thread once more before the final report).
class LossGauges {
 public:
  explicit LossGauges(CounterRegistry& counters);
  LossTotals update();

 private:
  CounterRegistry& counters_;
  Counter& lost_datagrams_;
  Counter& rejected_datagrams_;
  Counter& lost_events_;
};

}  // namespace efu
