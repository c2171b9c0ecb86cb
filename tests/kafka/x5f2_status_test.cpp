#include "efu/kafka/x5f2_status.h"

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "efu/schemas/x5f2_status_generated.h"

namespace efu::kafka {
namespace {

StatsSnapshot snapshot() {
  StatsSnapshot s;
  s.time_ns = 1'700'000'000'000'000'000ULL;
  s.interval_s = 1.0;
  s.counters = {{"receive.packets", CounterKind::kCounter, 1000, 250.5},
                {"kafka.queue.depth", CounterKind::kGauge, 7, 0.0}};
  s.threads = {{"receiver", 12.5, 40.0}};
  s.host_softirq_pct = 3.5;
  s.host_system_pct = 9.0;
  return s;
}

TEST(X5f2Status, JsonHoldsCountersRatesThreadsAndHost) {
  const auto doc = nlohmann::json::parse(status_json(snapshot()));
  EXPECT_EQ(doc["counters"]["receive.packets"], 1000);
  EXPECT_EQ(doc["counters"]["kafka.queue.depth"], 7);
  EXPECT_DOUBLE_EQ(doc["rates"]["receive.packets"].get<double>(), 250.5);
  EXPECT_FALSE(doc["rates"].contains("kafka.queue.depth"));  // a gauge has no rate
  ASSERT_EQ(doc["threads"].size(), 1U);
  EXPECT_EQ(doc["threads"][0]["name"], "receiver");
  EXPECT_DOUBLE_EQ(doc["threads"][0]["user_pct"].get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(doc["threads"][0]["system_pct"].get<double>(), 40.0);
  EXPECT_DOUBLE_EQ(doc["host"]["softirq_pct"].get<double>(), 3.5);
  EXPECT_DOUBLE_EQ(doc["host"]["system_pct"].get<double>(), 9.0);
}

TEST(X5f2Status, RoundTripsThroughTheSchema) {
  const StatusIdentity id = this_process_identity("efu-loki-1", 1000);
  const std::string json = status_json(snapshot());
  const auto bytes = serialize_x5f2(id, json);
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  ASSERT_TRUE(VerifyStatusBuffer(verifier));
  const Status* m = GetStatus(bytes.data());
  EXPECT_EQ(m->software_name()->str(), "efu");
  EXPECT_FALSE(m->software_version()->str().empty());
  EXPECT_EQ(m->service_id()->str(), "efu-loki-1");
  EXPECT_FALSE(m->host_name()->str().empty());
  EXPECT_EQ(m->process_id(), static_cast<std::uint32_t>(getpid()));
  EXPECT_EQ(m->update_interval(), 1000U);
  EXPECT_EQ(m->status_json()->str(), json);
}

}  // namespace
}  // namespace efu::kafka
