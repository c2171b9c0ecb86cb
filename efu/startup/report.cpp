#include "startup/report.h"

#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

namespace efu {
namespace {

/// Where the events and Kafka messages went, exactly: once flush() has purged what the broker
/// did not take, every event formed is delivered or counted undelivered
///   ev44.events = ev44.events.delivered + ev44.events.dropped + ev44.events.delivery.failed
/// (--broker none: all are events.discarded), and every message efu made is
/// kafka.delivery.ok + kafka.delivery.failed + kafka.produce.failed.*.
void print_delivery(const CounterRegistry& counters) {
  const auto v = [&](const char* name) {
    return static_cast<unsigned long long>(counters.value(name));
  };
  const unsigned long long events = v("ev44.events") + v("events.discarded");
  const unsigned long long not_queued =
      v("kafka.produce.failed.queue_full") + v("kafka.produce.failed.other");
  const unsigned long long messages = v("kafka.produce.messages") + not_queued;
  std::printf(
      "efu: summary: events %llu, delivered %llu, undelivered %llu; kafka messages %llu, "
      "delivered %llu, undelivered %llu\n",
      events, v("ev44.events.delivered"), events - v("ev44.events.delivered"), messages,
      v("kafka.delivery.ok"), messages - v("kafka.delivery.ok"));
  if (events == v("ev44.events.delivered") && messages == v("kafka.delivery.ok")) return;
  std::printf(
      "efu: undelivered: events %llu not queued (queue full or rejected), %llu in failed "
      "deliveries (%llu of them possibly written by the broker), %llu discarded "
      "(--broker none); messages %llu not queued, %llu failed (purged at stop %llu, timed "
      "out %llu, fatal producer error %llu, other reasons %llu)\n",
      v("ev44.events.dropped"), v("ev44.events.delivery.failed"),
      v("ev44.events.delivery.uncertain"), v("events.discarded"), not_queued,
      v("kafka.delivery.failed"), v("kafka.delivery.failed.purged"),
      v("kafka.delivery.failed.timed_out"), v("kafka.delivery.failed.fatal"),
      v("kafka.delivery.failed") - v("kafka.delivery.failed.purged") -
          v("kafka.delivery.failed.timed_out") - v("kafka.delivery.failed.fatal"));
}

}  // namespace

void print_final(const CounterRegistry& counters, const LossTotals& loss) {
  std::printf("efu: final counters\n");
  for (const CounterSample& c : counters.sample()) {
    std::printf("  %-44s %llu\n", c.name.c_str(), static_cast<unsigned long long>(c.value));
  }
  // The loss totals are the gauges lost.datagrams and rejected.datagrams (efu/ops/loss.h).
  std::printf("efu: summary: packets received %llu, processed %llu, lost %llu, rejected %llu\n",
              static_cast<unsigned long long>(counters.value("receive.packets")),
              static_cast<unsigned long long>(counters.value("process.packets")),
              static_cast<unsigned long long>(loss.lost_datagrams),
              static_cast<unsigned long long>(loss.rejected_datagrams));
  print_delivery(counters);
  std::fflush(stdout);
}

void write_stats_json(const std::string& path, const CounterRegistry& counters) {
  nlohmann::json j = nlohmann::json::object();
  for (const CounterSample& c : counters.sample()) j[c.name] = c.value;
  std::ofstream out(path);
  out << j.dump(2) << '\n';
  if (!out) spdlog::error("--stats-json: cannot write '{}'", path);
}

}  // namespace efu
