// One librdkafka producer shared by every output of the process (design.md §6).
//
// Threads: produce() may be called from several threads at once (each with its own
// ProduceCounters); poll() and flush() from one thread at a time (the stats publisher, then the
// main thread at stop). Delivery reports, error and log callbacks run inside poll()/flush(), so
// the delivery counters have that single writer.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "efu/counters.h"
#include "efu/kafka/producer_config.h"

struct rd_kafka_s;
struct rd_kafka_topic_s;

namespace efu::kafka {

/// The produce-side counters of one producing thread ("kafka.produce.*").
struct ProduceCounters {
  explicit ProduceCounters(CounterRegistry& counters);
  Counter& messages;
  Counter& bytes;
  Counter& failed_queue_full;
  Counter& failed_other;
};

class Producer {
 public:
  /// Throws ConfigError naming a property librdkafka rejects. Does not connect: librdkafka
  /// connects in the background, so a broker that is down at start only delays delivery.
  Producer(const ProducerConfig& config, CounterRegistry& counters);
  ~Producer();
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  using TopicId = std::size_t;
  /// Call before the data threads start.
  TopicId topic(const std::string& name);

  /// Copies `payload` into librdkafka's queue, keyed by `key` so that one source stays on one
  /// partition (and its message_ids in order). When the local queue is full, retries for up to
  /// the configured wait, sleeping ~1 ms between tries; then gives up. Returns false when the
  /// message was not queued; the reason is counted.
  bool produce(TopicId topic, std::span<const std::uint8_t> payload, const std::string& key,
               ProduceCounters& counters) noexcept;

  /// Serves delivery reports and errors; updates kafka.queue.depth.
  void poll() noexcept;
  /// Waits up to `timeout` for every queued message; returns how many are still undelivered.
  std::uint64_t flush(std::chrono::milliseconds timeout) noexcept;
  /// Messages queued or in flight, including delivery reports not yet served.
  std::uint64_t queue_depth() const noexcept;

  /// The callbacks' state (counters, log limits); defined in producer.cpp.
  struct Callbacks;

 private:
  rd_kafka_s* rk_ = nullptr;
  std::vector<rd_kafka_topic_s*> topics_;
  std::chrono::milliseconds queue_full_wait_;
  std::unique_ptr<Callbacks> callbacks_;
};

}  // namespace efu::kafka
