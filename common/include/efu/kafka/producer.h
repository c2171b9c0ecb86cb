// One librdkafka producer shared by every output of the process (docs/architecture.md §6.1,
// §6.3).
//
// Threads: produce() may be called from several threads at once (each with its own
// ProduceCounters). Delivery reports, error and log callbacks are served by the producer's own
// poll thread ("efu-kafka"), which waits inside rd_kafka_poll() and so serves a report as soon as
// the broker acknowledges: room in a full local queue appears within milliseconds, not at the
// next stats interval. flush() (the main thread at stop) first stops that thread and then serves
// the callbacks itself, so the delivery counters always have one writer at a time.
//
// Accounting: each message carries the number of events it holds (ev44; 0 for ar51 and x5f2) as
// its librdkafka opaque, an integer, not a pointer: no allocation per message. Its delivery
// report adds that number to ev44.events.delivered or ev44.events.delivery.failed, so at exit
//   ev44.events = ev44.events.delivered + ev44.events.dropped + ev44.events.delivery.failed
// exactly, once flush() has purged what the broker did not take.
//
// Fatal errors: librdkafka's idempotent producer gives up for good when it can no longer keep
// its ordering promise (a sequence desynchronisation with a restarted broker; INTRODUCTION.md,
// "Fatal producer errors"): it fails every queued message and refuses new ones. efu then
// replaces the instance (a "client" here) with a new one, which the broker knows by a new
// producer id, and queues again on it every message the old one reports as failed
// (kafka.delivery.resent; kafka.delivery.resent.uncertain for those the broker may already
// have written, which a consumer can then read twice). The callback thread does both, so the
// replacement is published to the producing threads through one atomic pointer; a client is
// never freed before the producer, so a thread that still holds the old one only gets
// __FATAL from it and retries on the new one. At most kMaxClients instances per run: after
// that, messages failed by a fatal error are counted (kafka.delivery.failed.fatal).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "efu/counters.h"
#include "efu/kafka/producer_config.h"
#include "efu/kafka/queue_watch.h"

struct rd_kafka_s;
struct rd_kafka_topic_s;
struct rd_kafka_message_s;

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
  /// partition (and its message_ids in order). `events` is the number of events the message
  /// holds, counted at its delivery report. When the local queue is full, retries every ~1 ms
  /// for as long as the broker keeps acknowledging: it gives up only after the configured wait
  /// passes with no delivery report at all (a stalled or absent broker). Returns false when the
  /// message was not queued; the reason is counted.
  bool produce(TopicId topic, std::span<const std::uint8_t> payload, const std::string& key,
               ProduceCounters& counters, std::size_t events = 0) noexcept;

  /// Updates the queue gauges (kafka.queue.depth, .bytes, .fill_pct) and, while deliveries have
  /// stopped with messages waiting, warns how full the queue is (the stats publisher's thread).
  /// Callbacks are served by the poll thread.
  void poll() noexcept;
  /// Stops the poll thread, then waits up to `timeout` for every queued message, serving the
  /// callbacks on the calling thread. What is still undelivered then is purged, and its reports
  /// counted (kafka.delivery.failed.purged, ev44.events.delivery.failed); returns how many
  /// messages that was.
  std::uint64_t flush(std::chrono::milliseconds timeout) noexcept;
  /// Messages queued or in flight, including delivery reports not yet served.
  std::uint64_t queue_depth() const noexcept;
  /// Payload bytes queued or in flight, including delivery reports not yet served.
  std::uint64_t queue_bytes() const noexcept;
  /// librdkafka's bounds on its queue, as configured.
  const QueueLimits& queue_limits() const noexcept { return limits_; }

  /// The callbacks' state (counters, log limits); defined in producer.cpp.
  struct Callbacks;
  /// One librdkafka producer instance and its topic handles; defined in producer.cpp.
  struct Client;
  /// Instances per run: the first and up to kMaxClients - 1 replacements after fatal errors.
  static constexpr std::size_t kMaxClients = 8;

 private:
  /// The instance after `failed` hit a fatal error: its replacement, made now if `failed` is
  /// still the current one, or nullptr when none can be made (limit reached, creation failed).
  /// Callback thread only.
  Client* replacement_for(rd_kafka_s* failed) noexcept;
  /// Queues on the current instance a message that a fatal error failed on its instance; false
  /// when it could not (then its report counts it as failed). Callback thread only.
  bool resend(rd_kafka_s* from, const rd_kafka_message_s& message) noexcept;
  std::unique_ptr<Client> make_client(QueueLimits* limits = nullptr) const;
  void serve_callbacks() noexcept;
  void stop_polling() noexcept;
  std::uint64_t purge(Client& client) noexcept;
  void update_gauges() noexcept;
  Client& current() const noexcept { return *current_.load(std::memory_order_acquire); }

  ProducerConfig config_;  // kept to make replacements alike
  std::vector<std::string> topic_names_;
  // clients_[0, client_count_) are made; the last is the current one. Only the callback thread
  // (or the constructor, before it starts) adds one: it fills the slot, then publishes the
  // count and current_ with release stores, so a thread that reads either with acquire sees the
  // instance and its topics complete. Slots are freed only by the destructor.
  std::array<std::unique_ptr<Client>, kMaxClients> clients_;
  std::atomic<std::size_t> client_count_{0};
  std::atomic<Client*> current_{nullptr};
  rd_kafka_s* abandoned_ = nullptr;  // an instance that could not be replaced (callback thread)
  std::chrono::milliseconds queue_full_wait_;
  QueueLimits limits_;
  std::unique_ptr<Callbacks> callbacks_;
  QueueWatch watch_;
  std::atomic<bool> stop_polling_{false};
  std::thread poller_;
};

}  // namespace efu::kafka
