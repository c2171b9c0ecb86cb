#include "efu/kafka/x5f2_status.h"

#include <unistd.h>

#include <climits>

#include <flatbuffers/flatbuffers.h>
#include <nlohmann/json.hpp>

#include "efu/schemas/x5f2_status_generated.h"

// efu_common does not define the project version for its sources (see docs/kafka.md).
#ifndef EFU_VERSION
#define EFU_VERSION "0.1.0"
#endif

namespace efu::kafka {

StatusIdentity this_process_identity(std::string service_id, std::uint32_t update_interval_ms) {
  StatusIdentity id;
  id.software_version = EFU_VERSION;
  id.service_id = std::move(service_id);
  char host[HOST_NAME_MAX + 1] = {};
  if (gethostname(host, sizeof host - 1) == 0) id.host_name = host;
  id.process_id = static_cast<std::uint32_t>(getpid());
  id.update_interval_ms = update_interval_ms;
  return id;
}

std::string status_json(const StatsSnapshot& snapshot) {
  nlohmann::ordered_json counters = nlohmann::ordered_json::object();
  nlohmann::ordered_json rates = nlohmann::ordered_json::object();
  for (const RateSample& c : snapshot.counters) {
    counters[c.name] = c.value;
    if (c.kind == CounterKind::kCounter) rates[c.name] = c.rate_per_s;
  }
  nlohmann::ordered_json threads = nlohmann::ordered_json::array();
  for (const ThreadCpu& t : snapshot.threads) {
    threads.push_back({{"name", t.name}, {"user_pct", t.user_pct}, {"system_pct", t.system_pct}});
  }
  nlohmann::ordered_json doc;
  doc["time_ns"] = snapshot.time_ns;
  doc["interval_s"] = snapshot.interval_s;
  doc["counters"] = std::move(counters);
  doc["rates"] = std::move(rates);
  doc["threads"] = std::move(threads);
  doc["host"] = {{"softirq_pct", snapshot.host_softirq_pct},
                 {"system_pct", snapshot.host_system_pct}};
  return doc.dump();
}

std::vector<std::uint8_t> serialize_x5f2(const StatusIdentity& identity, const std::string& json) {
  flatbuffers::FlatBufferBuilder fbb(1024 + json.size());
  const auto root =
      CreateStatusDirect(fbb, identity.software_name.c_str(), identity.software_version.c_str(),
                         identity.service_id.c_str(), identity.host_name.c_str(),
                         identity.process_id, identity.update_interval_ms, json.c_str());
  FinishStatusBuffer(fbb, root);
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

}  // namespace efu::kafka
