#include "ops/loss.h"

namespace efu {
namespace {

template <std::size_t N>
bool counts_in(std::string_view name, const std::array<std::string_view, N>& parts) {
  for (const std::string_view part : parts) {
    if (part.back() == '.' ? name.substr(0, part.size()) == part : name == part) return true;
  }
  return false;
}

}  // namespace

LossTotals loss_totals(const std::vector<CounterSample>& sample) {
  LossTotals t;
  for (const CounterSample& c : sample) {
    if (counts_in(c.name, kLostDatagrams)) t.lost_datagrams += c.value;
    if (counts_in(c.name, kRejectedDatagrams)) t.rejected_datagrams += c.value;
    if (counts_in(c.name, kLostEvents)) t.lost_events += c.value;
  }
  return t;
}

LossGauges::LossGauges(CounterRegistry& counters)
    : counters_(counters),
      lost_datagrams_(counters.gauge("lost.datagrams")),
      rejected_datagrams_(counters.gauge("rejected.datagrams")),
      lost_events_(counters.gauge("lost.events")) {}

LossTotals LossGauges::update() {
  const LossTotals t = loss_totals(counters_.sample());
  lost_datagrams_.set(t.lost_datagrams);
  rejected_datagrams_.set(t.rejected_datagrams);
  lost_events_.set(t.lost_events);
  return t;
}

}  // namespace efu
