#include "efu/kafka/producer_config.h"

#include <unistd.h>

#include <fstream>
#include <functional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "efu/errors.h"
#include "efu/kafka/producer.h"

namespace efu::kafka {
namespace {

OutputSettings settings() {
  OutputSettings s;
  s.broker = "127.0.0.1:1";  // nothing listens: creating a producer must still succeed
  s.source_name = "loki";
  return s;
}

std::string write_file(const std::string& text) {
  const std::string path = testing::TempDir() + "kafka_config_" + std::to_string(getpid()) + "_" +
                           testing::UnitTest::GetInstance()->current_test_info()->name() + ".json";
  std::ofstream(path) << text;
  return path;
}

std::string config_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ProducerConfig, DefaultsAreThroughputTunedAndSizedForEv44) {
  OutputSettings s = settings();
  s.ev44_max_bytes = 4'000'000;
  const ProducerConfig c = default_producer_config(s);
  EXPECT_EQ(c.get("bootstrap.servers"), "127.0.0.1:1");
  EXPECT_EQ(c.get("linger.ms"), "20");
  EXPECT_GE(std::stoull(c.get("message.max.bytes")), 4'000'000U + 1000);
  EXPECT_GE(std::stoull(c.get("queue.buffering.max.kbytes")) * 1024, 10 * 4'000'000ULL);
  EXPECT_EQ(c.queue_full_wait.count(), 50);
}

TEST(ProducerConfig, DefaultsAreAcceptedByLibrdkafka) {
  CounterRegistry counters;
  EXPECT_NO_THROW(Producer(default_producer_config(settings()), counters));
}

TEST(ProducerConfig, FileOverridesAndAddsProperties) {
  ProducerConfig c = default_producer_config(settings());
  apply_kafka_config_file(
      c, write_file(R"({"linger.ms": 5, "compression.codec": "lz4", "socket.nagle.disable": false,
                        "efu.queue.full.wait.ms": 7, "statistics.interval.ms": 0})"));
  EXPECT_EQ(c.get("linger.ms"), "5");
  EXPECT_EQ(c.get("compression.codec"), "lz4");
  EXPECT_EQ(c.get("socket.nagle.disable"), "false");
  EXPECT_EQ(c.get("statistics.interval.ms"), "0");
  EXPECT_EQ(c.get(kQueueFullWaitKey), "");  // efu's own key is not passed to librdkafka
  EXPECT_EQ(c.queue_full_wait.count(), 7);
  CounterRegistry counters;
  EXPECT_NO_THROW(Producer(c, counters));
}

TEST(ProducerConfig, UnknownPropertyIsAConfigErrorNamingIt) {
  ProducerConfig c = default_producer_config(settings());
  apply_kafka_config_file(c, write_file(R"({"no.such.property": "1"})"));
  CounterRegistry counters;
  const std::string message = config_error([&] { Producer p(c, counters); });
  EXPECT_NE(message.find("no.such.property"), std::string::npos) << message;
}

TEST(ProducerConfig, BadValueIsAConfigErrorNamingIt) {
  ProducerConfig c = default_producer_config(settings());
  apply_kafka_config_file(c, write_file(R"({"linger.ms": "soon"})"));
  CounterRegistry counters;
  const std::string message = config_error([&] { Producer p(c, counters); });
  EXPECT_NE(message.find("linger.ms"), std::string::npos) << message;
  EXPECT_NE(message.find("soon"), std::string::npos) << message;
}

TEST(ProducerConfig, BadFilesAreConfigErrors) {
  ProducerConfig c;
  EXPECT_NE(config_error([&] {
              apply_kafka_config_file(c, "/nonexistent/k.json");
            }).find("/nonexistent/k.json"),
            std::string::npos);
  EXPECT_NE(config_error([&] {
              apply_kafka_config_file(c, write_file("{not json"));
            }).find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(config_error([&] {
              apply_kafka_config_file(c, write_file(R"({"a": {"b": 1}})"));
            }).find("'a'"),
            std::string::npos);
  EXPECT_NE(config_error([&] {
              apply_kafka_config_file(c, write_file(R"({"efu.queue.full.wait.ms": -1})"));
            }).find("efu.queue.full.wait.ms"),
            std::string::npos);
}

// No broker listens: the local queue fills and, after the bounded wait, produce() drops and counts;
// the queued messages then time out and are counted by reason on the polling thread.
TEST(Producer, FullQueueAndTimeoutsAreCountedWithoutABroker) {
  ProducerConfig c = default_producer_config(settings());
  c.set("queue.buffering.max.messages", "2");
  c.set("message.timeout.ms", "300");
  c.queue_full_wait = std::chrono::milliseconds(5);
  CounterRegistry counters;
  Producer p(c, counters);
  const auto topic = p.topic("efu_unit_nowhere");
  ProduceCounters pc(counters);
  const std::vector<std::uint8_t> payload(100, 1);
  int queued = 0;
  for (int i = 0; i < 5; ++i) queued += p.produce(topic, payload, "k", pc) ? 1 : 0;
  EXPECT_EQ(queued, 2);
  EXPECT_EQ(counters.value("kafka.produce.messages"), 2U);
  EXPECT_EQ(counters.value("kafka.produce.bytes"), 200U);
  EXPECT_EQ(counters.value("kafka.produce.failed.queue_full"), 3U);
  // Bounded: 100 polls of at least 50 ms.
  for (int i = 0; i < 100 && counters.value("kafka.delivery.failed") < 2; ++i) {
    p.poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(counters.value("kafka.delivery.failed"), 2U);
  EXPECT_EQ(counters.value("kafka.delivery.failed.timed_out"), 2U);
  EXPECT_EQ(counters.value("kafka.delivery.ok"), 0U);
  EXPECT_EQ(p.flush(std::chrono::milliseconds(100)), 0U);
  EXPECT_EQ(counters.value("kafka.queue.depth"), 0U);
}

}  // namespace
}  // namespace efu::kafka
