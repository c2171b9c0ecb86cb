// Broker faults: efu's outputs against a broker of their own (EFU_KAFKA_FAULT_PORT) that the
// test starts and stops. Whatever the outputs report as delivered is what a consumer reads.
#include <cstdlib>
#include <fstream>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "efu/outputs.h"
#include "efu/schemas/ev44_events_generated.h"
#include "test_consumer.h"

namespace efu {
namespace {

using kafka::testing::consume;
using kafka::testing::unique_topic;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

/// scripts/kafka start|stop for the fault port; the script bounds its own waits.
int broker(const std::string& command) {
  const std::string cmd = "EFU_KAFKA_PORT=" + env("EFU_KAFKA_FAULT_PORT") + " " +
                          env("EFU_SOURCE_DIR") + "/scripts/kafka " + command + " >&2";
  return std::system(cmd.c_str());
}

class KafkaFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(env("EFU_KAFKA_FAULT_PORT").empty());
    bootstrap_ = "127.0.0.1:" + env("EFU_KAFKA_FAULT_PORT");
    settings_.broker = bootstrap_;
    settings_.events_topic = unique_topic("detector");
    settings_.samples_topic = unique_topic("samples");
    settings_.status_topic = unique_topic("status");
    settings_.source_name = "efufault";
    settings_.service_id = "efufault-1";
    settings_.ev44_max_bytes = 100'000;
    settings_.threads = 1;
    // Messages must outlive the broker restart (a few seconds) within the test's bound.
    config_path_ = ::testing::TempDir() + "fault_kafka_" + settings_.events_topic + ".json";
    std::ofstream(config_path_) << R"({"message.timeout.ms": 120000})";
    settings_.kafka_config_file = config_path_;
  }
  void TearDown() override { broker("stop"); }

  /// n messages of 100 events each, flushed one by one.
  void produce(Outputs& outputs, int n) {
    for (int m = 0; m < n; ++m) {
      for (int e = 0; e < 100; ++e) {
        outputs.events(0).add(1'000'000 + static_cast<std::uint64_t>(produced_),
                              static_cast<std::uint32_t>(e), static_cast<std::uint32_t>(e));
      }
      outputs.events(0).flush();
      ++produced_;
    }
  }

  /// Polls like the publisher thread for `duration`, or until every message is reported.
  void poll_for(Outputs& outputs, std::chrono::milliseconds duration, bool until_reported) {
    const auto end = std::chrono::steady_clock::now() + duration;
    while (std::chrono::steady_clock::now() < end) {
      outputs.poll();
      if (until_reported && reported() == counters_.value("kafka.produce.messages")) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  std::uint64_t reported() const {
    return counters_.value("kafka.delivery.ok") + counters_.value("kafka.delivery.failed");
  }

  /// The consumer's view must equal the outputs' delivery reports, ids without duplicates.
  void expect_consumer_matches_delivered() {
    const std::uint64_t delivered = counters_.value("kafka.delivery.ok");
    const auto msgs = consume(bootstrap_, settings_.events_topic, delivered,
                              std::chrono::seconds(60), std::chrono::seconds(2));
    EXPECT_EQ(msgs.size(), delivered);
    std::set<std::int64_t> ids;
    for (const auto& bytes : msgs) ids.insert(GetEvent44Message(bytes.data())->message_id());
    EXPECT_EQ(ids.size(), msgs.size());
  }

  std::string bootstrap_;
  std::string config_path_;
  OutputSettings settings_;
  CounterRegistry counters_;
  int produced_ = 0;
};

TEST_F(KafkaFaultTest, BrokerUnavailableAtStartThenAppears) {
  ASSERT_EQ(broker("stop"), 0);
  auto outputs = make_kafka_outputs(settings_, counters_);  // must not need the broker
  counters_.freeze();
  produce(*outputs, 20);
  EXPECT_EQ(counters_.value("kafka.produce.messages"), 20U);  // queued locally
  poll_for(*outputs, std::chrono::seconds(2), false);
  EXPECT_GT(counters_.value("kafka.errors"), 0U);  // the outage is counted
  EXPECT_EQ(counters_.value("kafka.delivery.ok"), 0U);
  EXPECT_EQ(counters_.value("kafka.queue.depth"), 20U);

  ASSERT_EQ(broker("start"), 0);
  poll_for(*outputs, std::chrono::seconds(90), true);
  EXPECT_EQ(outputs->flush(std::chrono::seconds(10)), 0U);
  EXPECT_EQ(counters_.value("kafka.delivery.ok"), 20U);
  EXPECT_EQ(counters_.value("kafka.delivery.failed"), 0U);
  expect_consumer_matches_delivered();
}

TEST_F(KafkaFaultTest, BrokerStoppedMidRunThenRestarted) {
  ASSERT_EQ(broker("start"), 0);
  auto outputs = make_kafka_outputs(settings_, counters_);
  counters_.freeze();
  produce(*outputs, 10);
  poll_for(*outputs, std::chrono::seconds(60), true);
  ASSERT_EQ(counters_.value("kafka.delivery.ok"), 10U);
  const std::uint64_t errors_before = counters_.value("kafka.errors");

  ASSERT_EQ(broker("stop"), 0);
  produce(*outputs, 10);  // while the broker is down: queued, then delivered after restart
  poll_for(*outputs, std::chrono::seconds(2), false);
  EXPECT_GT(counters_.value("kafka.errors"), errors_before);
  EXPECT_LT(counters_.value("kafka.delivery.ok"), 20U);

  ASSERT_EQ(broker("start"), 0);
  produce(*outputs, 10);
  poll_for(*outputs, std::chrono::seconds(90), true);
  EXPECT_EQ(outputs->flush(std::chrono::seconds(10)), 0U);
  EXPECT_EQ(reported(), 30U);
  EXPECT_EQ(counters_.value("ev44.messages"), 30U);
  EXPECT_EQ(counters_.value("kafka.delivery.ok"), 30U);  // nothing lost within the bound
  expect_consumer_matches_delivered();
}

}  // namespace
}  // namespace efu
