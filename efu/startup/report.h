// What efu prints and writes once it has stopped (docs/architecture.md §8.2, step 5): the final
// counters, the summary lines and the --stats-json file.
#pragma once

#include <string>

#include "efu/counters.h"
#include "ops/loss.h"

namespace efu {

/// Prints every counter, then the summary lines: packets (with `loss`, the final values of the
/// loss gauges, docs/architecture.md §4.4) and where the events and Kafka messages went
/// (docs/architecture.md §6.3).
void print_final(const CounterRegistry& counters, const LossTotals& loss);

/// Writes every counter to `path` as one JSON object; logs an error if it cannot.
void write_stats_json(const std::string& path, const CounterRegistry& counters);

}  // namespace efu
