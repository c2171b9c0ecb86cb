#include "efu/kafka/producer_config.h"

#include <unistd.h>

#include <fstream>
#include <functional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "efu/errors.h"
#include "efu/kafka/producer.h"
#include "efu/kafka/queue_watch.h"

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

// In a broker outage memory, not time, decides what is lost: no message timeout, and the
// idempotent producer (ordering, no duplicates after retries) stays on with it.
TEST(ProducerConfig, DefaultsLetMessagesWaitForRoomNotForATime) {
  const ProducerConfig c = default_producer_config(settings());
  EXPECT_EQ(c.get("message.timeout.ms"), "0");  // librdkafka: 0 is infinite
  EXPECT_EQ(c.get("enable.idempotence"), "true");
  EXPECT_EQ(c.get("acks"), "all");
  EXPECT_EQ(c.get("queue.buffering.max.kbytes"), "262144");  // the bound that decides instead
  CounterRegistry counters;
  Producer p(c, counters);  // librdkafka accepts an infinite timeout with idempotence
  EXPECT_EQ(p.queue_limits().max_bytes, 262144ULL * 1024);
  EXPECT_EQ(p.queue_limits().max_messages, 1'000'000U);
}

TEST(ProducerConfig, AnOperatorCanStillSetAMessageTimeout) {
  ProducerConfig c = default_producer_config(settings());
  apply_kafka_config_file(c, write_file(R"({"message.timeout.ms": 30000})"));
  EXPECT_EQ(c.get("message.timeout.ms"), "30000");
  CounterRegistry counters;
  EXPECT_NO_THROW(Producer(c, counters));
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

// No broker: nothing is delivered, and nothing expires by time either. The queue gauges show
// what waits; at stop flush() purges it, and every message and every event it held is counted.
TEST(Producer, WhatIsLeftAtStopIsPurgedAndCountedWithItsEvents) {
  ProducerConfig c = default_producer_config(settings());
  c.set("queue.buffering.max.kbytes", "1");  // 1024 payload bytes
  c.set("queue.buffering.max.messages", "3");
  c.queue_full_wait = std::chrono::milliseconds(5);
  CounterRegistry counters;
  Producer p(c, counters);
  const auto topic = p.topic("efu_unit_nowhere");
  ProduceCounters pc(counters);
  const std::vector<std::uint8_t> payload(100, 1);
  EXPECT_TRUE(p.produce(topic, payload, "k", pc, 10));
  EXPECT_TRUE(p.produce(topic, payload, "k", pc, 20));
  EXPECT_TRUE(p.produce(topic, payload, "k", pc, 30));
  EXPECT_FALSE(p.produce(topic, payload, "k", pc, 40));  // the message bound: dropped, counted
  EXPECT_EQ(counters.value("kafka.produce.failed.queue_full"), 1U);
  p.poll();
  EXPECT_EQ(counters.value("kafka.queue.depth"), 3U);
  EXPECT_EQ(counters.value("kafka.queue.bytes"), 300U);  // the dropped one is not in it
  EXPECT_EQ(counters.value("kafka.queue.fill_pct"), 100U);  // 3 of 3 messages
  EXPECT_EQ(counters.value("kafka.delivery.failed"), 0U);

  EXPECT_EQ(p.flush(std::chrono::milliseconds(100)), 3U);
  EXPECT_EQ(counters.value("kafka.delivery.ok"), 0U);
  EXPECT_EQ(counters.value("kafka.delivery.failed"), 3U);
  EXPECT_EQ(counters.value("kafka.delivery.failed.purged"), 3U);
  EXPECT_EQ(counters.value("kafka.delivery.failed.timed_out"), 0U);
  EXPECT_EQ(counters.value("kafka.delivery.uncertain"), 0U);  // never sent: the broker has none
  EXPECT_EQ(counters.value("ev44.events.delivery.failed"), 60U);
  EXPECT_EQ(counters.value("ev44.events.delivered"), 0U);
  EXPECT_EQ(counters.value("kafka.queue.depth"), 0U);
  EXPECT_EQ(counters.value("kafka.queue.bytes"), 0U);
  EXPECT_EQ(counters.value("kafka.queue.fill_pct"), 0U);
}

TEST(QueueFill, IsTheFullerOfTheTwoBounds) {
  EXPECT_DOUBLE_EQ(queue_fill({1000, 10}, 250, 1), 0.25);
  EXPECT_DOUBLE_EQ(queue_fill({1000, 10}, 250, 5), 0.5);
  EXPECT_DOUBLE_EQ(queue_fill({1000, 0}, 250, 5000), 0.25);  // 0: no message bound
  EXPECT_DOUBLE_EQ(queue_fill({1000, 10}, 5000, 1), 1.0);
}

class QueueWatchTest : public ::testing::Test {
 protected:
  static constexpr std::uint64_t kMiB = 1024 * 1024;
  QueueWatchTest() : watch_({100 * kMiB, 0}) {}

  /// One sample `ms` after the start; returns the line (and counts warnings).
  std::string at(int ms, std::uint64_t delivered, std::uint64_t bytes, std::uint64_t messages) {
    bool resumed = false;
    std::string line = watch_.update(
        {start_ + std::chrono::milliseconds(ms), delivered, bytes, messages}, resumed);
    if (!line.empty() && !resumed) ++warnings_;
    resumed_ = resumed;
    return line;
  }

  QueueWatch watch_;
  QueueWatch::Clock::time_point start_ = QueueWatch::Clock::now();
  int warnings_ = 0;
  bool resumed_ = false;
};

TEST_F(QueueWatchTest, SaysNothingWhileDeliveriesGoOnOrNothingWaits) {
  for (int ms = 0; ms <= 20'000; ms += 100) {
    EXPECT_EQ(at(ms, static_cast<std::uint64_t>(ms), 10 * kMiB, 5), "");  // reports arrive
  }
  for (int ms = 20'100; ms <= 40'000; ms += 100) {
    EXPECT_EQ(at(ms, 20'000, 0, 0), "");  // no report, but nothing waits either
  }
  EXPECT_EQ(warnings_, 0);
}

// 10 MiB wait when deliveries stop, then 1 MiB more every second (1 % of 100 MiB): after 3 s the
// queue is 13 % full and has 87 % left at 1 %/s.
TEST_F(QueueWatchTest, WarnsHowFullAndHowLongIsLeftEveryFiveSeconds) {
  at(0, 7, 10 * kMiB, 10);
  std::string first;
  for (int ms = 100; ms <= 8'000; ms += 100) {
    const std::string line = at(ms, 7, 10 * kMiB + kMiB * static_cast<std::uint64_t>(ms) / 1000, 10);
    if (first.empty()) first = line;
  }
  EXPECT_EQ(warnings_, 2) << "at 3 s, then 5 s later";
  EXPECT_NE(first.find("no delivery for 3 s"), std::string::npos) << first;
  EXPECT_NE(first.find("13 % full (13.0 MiB of 100 MiB)"), std::string::npos) << first;
  EXPECT_NE(first.find("about 87 s left"), std::string::npos) << first;

  const std::string back = at(8'100, 8, 18 * kMiB, 9);
  EXPECT_TRUE(resumed_);
  EXPECT_NE(back.find("deliveries resumed after 8 s"), std::string::npos) << back;
  EXPECT_EQ(at(8'200, 8, 18 * kMiB, 9), "");  // said once
}

TEST_F(QueueWatchTest, SaysWhenTheQueueIsFullOrNotGrowing) {
  at(0, 0, 50 * kMiB, 3);
  const std::string steady = at(3'000, 0, 50 * kMiB, 3);
  EXPECT_NE(steady.find("not growing"), std::string::npos) << steady;
  const std::string full = at(8'000, 0, 100 * kMiB, 4);
  EXPECT_NE(full.find("100 % full"), std::string::npos) << full;
  EXPECT_NE(full.find("kafka.produce.failed.queue_full"), std::string::npos) << full;
}

}  // namespace
}  // namespace efu::kafka
