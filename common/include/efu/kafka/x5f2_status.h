// The x5f2 Status message that carries efu's periodic stats (docs/architecture.md §4.3, §5.3).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "efu/outputs.h"

namespace efu::kafka {

/// Who is reporting: the fields of x5f2 that do not change between messages.
struct StatusIdentity {
  std::string software_name = "efu";
  std::string software_version;
  std::string service_id;
  std::string host_name;
  std::uint32_t process_id = 0;
  std::uint32_t update_interval_ms = 1000;
};

/// The identity of this process: host name, pid and efu's version filled in.
StatusIdentity this_process_identity(std::string service_id, std::uint32_t update_interval_ms);

/// {"counters": {name: value}, "rates": {name: per_s}, "threads": [{"name", "user_pct",
/// "system_pct"}], "host": {"softirq_pct", "system_pct"}, "time_ns", "interval_s"}.
/// Rates are given for counters only; gauges are levels.
std::string status_json(const StatsSnapshot& snapshot);

std::vector<std::uint8_t> serialize_x5f2(const StatusIdentity& identity,
                                         const std::string& status_json);

}  // namespace efu::kafka
