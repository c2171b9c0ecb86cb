#include "test_consumer.h"

#include <unistd.h>

#include <stdexcept>
#include <thread>

#include <librdkafka/rdkafka.h>

namespace efu::kafka::testing {
namespace {

void set(rd_kafka_conf_t* conf, const char* name, const std::string& value) {
  char error[512];
  if (rd_kafka_conf_set(conf, name, value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK) {
    throw std::runtime_error(std::string("consumer config ") + name + ": " + error);
  }
}

}  // namespace

std::string unique_topic(const std::string& suffix) {
  const auto ns = std::chrono::steady_clock::now().time_since_epoch().count();
  return "efutest_" + std::to_string(getpid()) + "_" + std::to_string(ns) + "_" + suffix;
}

std::vector<std::string> consume(const std::string& bootstrap, const std::string& topic,
                                 std::size_t expected, std::chrono::milliseconds timeout,
                                 std::chrono::milliseconds settle) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", bootstrap);
  set(conf, "group.id", unique_topic("group"));
  set(conf, "enable.auto.commit", "false");
  set(conf, "fetch.max.bytes", "67108864");
  char error[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error);
  if (rk == nullptr) throw std::runtime_error(std::string("consumer: ") + error);
  rd_kafka_poll_set_consumer(rk);

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // Partitions from metadata; the topic may need a moment to appear. Bounded by the deadline.
  int partitions = 0;
  while (partitions == 0 && std::chrono::steady_clock::now() < deadline) {
    rd_kafka_topic_t* t = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
    const rd_kafka_metadata_t* md = nullptr;
    if (rd_kafka_metadata(rk, 0, t, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        partitions = md->topics[0].partition_cnt;
      }
      rd_kafka_metadata_destroy(md);
    }
    rd_kafka_topic_destroy(t);
    if (partitions == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  rd_kafka_assign(rk, list);
  rd_kafka_topic_partition_list_destroy(list);

  std::vector<std::string> out;
  auto last = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < deadline) {
    if (out.size() >= expected && std::chrono::steady_clock::now() - last >= settle) break;
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      out.emplace_back(static_cast<const char*>(m->payload), m->len);
      last = std::chrono::steady_clock::now();
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return out;
}

}  // namespace efu::kafka::testing
