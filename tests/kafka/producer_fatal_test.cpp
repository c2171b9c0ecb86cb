// A fatal error of librdkafka's idempotent producer, provoked in librdkafka's own mock cluster
// (in-process, on 127.0.0.1): the broker answers one ProduceRequest with
// OUT_OF_ORDER_SEQUENCE_NUMBER for the first batch in flight, which librdkafka cannot explain
// and so declares fatal (rdkafka_request.c: "sequence desynchronization with broker"). After
// that the instance fails every message it holds and refuses new ones. The Producer must
// replace it and deliver every message all the same, or count each one it cannot.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "efu/kafka/producer.h"
#include "efu/kafka/producer_config.h"
#include "test_consumer.h"

namespace efu::kafka {
namespace {

// Kafka's API key of ProduceRequest (the protocol's numbering).
constexpr std::int16_t kProduceApiKey = 0;

/// A one-broker mock cluster with one single-partition topic.
class MockCluster {
 public:
  explicit MockCluster(const std::string& topic) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    char error[512];
    host_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
    if (host_ == nullptr) throw std::runtime_error(error);
    cluster_ = rd_kafka_mock_cluster_new(host_, 1);
    if (cluster_ == nullptr) throw std::runtime_error("rd_kafka_mock_cluster_new failed");
    rd_kafka_mock_topic_create(cluster_, topic.c_str(), 1, 1);
  }
  ~MockCluster() {
    rd_kafka_mock_cluster_destroy(cluster_);
    rd_kafka_destroy(host_);
  }
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;

  std::string bootstrap() const { return rd_kafka_mock_cluster_bootstraps(cluster_); }
  /// The next `n` ProduceRequests are answered with OUT_OF_ORDER_SEQUENCE_NUMBER.
  void fail_next_produce_requests(std::size_t n) {
    std::vector<rd_kafka_resp_err_t> errors(n, RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    rd_kafka_mock_push_request_errors_array(cluster_, kProduceApiKey, errors.size(), errors.data());
  }

 private:
  rd_kafka_t* host_ = nullptr;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
};

ProducerConfig config_for(const std::string& bootstrap) {
  OutputSettings s;
  s.broker = bootstrap;
  s.source_name = "fatal";
  ProducerConfig c = default_producer_config(s);
  c.set("linger.ms", "1");
  return c;
}

/// A producer of ours on a fresh mock cluster, and its one topic.
class ProducerFatalError : public ::testing::Test {
 protected:
  ProducerFatalError()
      : topic_name_(testing::unique_topic("fatal")),
        cluster_(topic_name_),
        producer_(config_for(cluster_.bootstrap()), counters_),
        topic_(producer_.topic(topic_name_)),
        pc_(counters_) {}

  static std::string payload_of(int i) { return "message-" + std::to_string(i); }

  /// Message i: its payload names it, and it holds i + 1 events.
  bool produce(int i) {
    const std::string text = payload_of(i);
    const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(text.data()),
                                              text.size());
    return producer_.produce(topic_, bytes, "source", pc_, static_cast<std::size_t>(i + 1));
  }

  std::uint64_t value(const char* name) const { return counters_.value(name); }

  /// Serves like the stats thread until `done()` or 10 s (bounded).
  template <typename Done>
  bool wait_until(Done done) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < end) {
      producer_.poll();
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return done();
  }

  std::string topic_name_;
  MockCluster cluster_;
  CounterRegistry counters_;
  Producer producer_;
  Producer::TopicId topic_;
  ProduceCounters pc_;
};

TEST_F(ProducerFatalError, TheReplacementDeliversEveryMessageTheFailedInstanceHeld) {
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(produce(i));
  ASSERT_TRUE(wait_until([&] { return value("kafka.delivery.ok") == 20; }));

  cluster_.fail_next_produce_requests(1);
  for (int i = 20; i < 40; ++i) EXPECT_TRUE(produce(i)) << i;
  EXPECT_TRUE(wait_until([&] { return value("kafka.producer.replaced") == 1; }));
  for (int i = 40; i < 60; ++i) EXPECT_TRUE(produce(i)) << i;
  EXPECT_EQ(producer_.flush(std::chrono::seconds(10)), 0U);

  EXPECT_EQ(value("kafka.producer.replaced"), 1U);
  EXPECT_EQ(value("kafka.produce.messages"), 60U);
  EXPECT_EQ(value("kafka.delivery.ok"), 60U);
  EXPECT_EQ(value("kafka.delivery.failed"), 0U);
  EXPECT_GE(value("kafka.delivery.resent"), 1U);  // at least the refused batch
  EXPECT_EQ(value("ev44.events.delivered"), 60U * 61U / 2U);
  EXPECT_EQ(value("kafka.queue.depth"), 0U);
  EXPECT_EQ(value("kafka.queue.bytes"), 0U);

  // The broker holds each message once; a resent one it may already have had shows twice at
  // most, and only as many as were counted uncertain.
  const auto consumed = testing::consume(cluster_.bootstrap(), topic_name_, 60,
                                         std::chrono::seconds(20), std::chrono::milliseconds(300));
  std::map<std::string, int> seen;
  for (const std::string& m : consumed) ++seen[m];
  for (int i = 0; i < 60; ++i) EXPECT_GE(seen[payload_of(i)], 1) << payload_of(i);
  EXPECT_EQ(seen.size(), 60U);
  EXPECT_LE(consumed.size() - 60U, value("kafka.delivery.resent.uncertain"));
}

TEST_F(ProducerFatalError, PastTheLastReplacementTheFailedMessagesAreCounted) {
  // Every instance's first request fails: the first and each of its replacements.
  cluster_.fail_next_produce_requests(Producer::kMaxClients);
  ASSERT_TRUE(produce(0));
  EXPECT_TRUE(wait_until([&] { return value("kafka.delivery.failed") == 1; }));
  EXPECT_EQ(value("kafka.producer.replaced"), Producer::kMaxClients - 1);
  EXPECT_EQ(value("kafka.delivery.failed.fatal"), 1U);
  EXPECT_EQ(value("ev44.events.delivery.failed"), 1U);
  EXPECT_EQ(value("kafka.delivery.resent"), Producer::kMaxClients - 1);

  // The last instance refuses new messages: each is counted where it was dropped.
  EXPECT_FALSE(produce(1));
  EXPECT_EQ(value("kafka.produce.failed.other"), 1U);
  EXPECT_EQ(producer_.flush(std::chrono::seconds(2)), 0U);
  EXPECT_EQ(value("kafka.delivery.ok") + value("kafka.delivery.failed"),
            value("kafka.produce.messages"));
  EXPECT_EQ(value("kafka.queue.bytes"), 0U);
}

}  // namespace
}  // namespace efu::kafka
