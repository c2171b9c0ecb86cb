// The Kafka outputs: ev44 events per processing thread, ar51 raw samples, x5f2 status, all
// through one shared producer.
#include <atomic>
#include <chrono>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "efu/kafka/ar51_builder.h"
#include "efu/kafka/ev44_builder.h"
#include "efu/kafka/producer.h"
#include "efu/kafka/x5f2_status.h"
#include "efu/outputs.h"

namespace efu {
namespace {

using kafka::Producer;

// The largest datagram the host accepts (jumbo frames); ar51 builders are sized for it.
constexpr std::size_t kMaxDatagram = 65536;

std::uint64_t steady_now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

/// The message_ids of one source. Consumers read a partition in the order librdkafka's
/// produce() queued the messages (one key per source, so one partition; the idempotent producer
/// keeps that order across retries). Taking the id and queueing the message under one lock
/// therefore makes ids consecutive in the order they are consumed, whatever the number of
/// threads. The lock is taken once per full message, never per event; inside it a thread builds
/// the FlatBuffer and copies it into librdkafka's queue (or waits there for room, which the
/// other threads would have to wait for anyway). A message that cannot be queued has used its
/// id: consumers see the gap, and the loss is counted.
struct SourceSequence {
  std::mutex mutex;
  std::int64_t next = 0;
};

/// One topic as written by one thread: produces a message, counts it in "<kind>.messages" if
/// librdkafka took it, and says whether it did (the caller counts what the loss means to it).
/// `events` travels with the message to its delivery report (ev44.events.delivered or
/// ev44.events.delivery.failed); messages without events pass 0.
class TopicWriter {
 public:
  TopicWriter(Producer& producer, Producer::TopicId topic, std::string key,
              CounterRegistry& counters, const std::string& kind)
      : producer_(producer),
        topic_(topic),
        key_(std::move(key)),
        produce_counters_(counters),
        messages_(counters.counter(kind + ".messages")) {}

  bool write(std::span<const std::uint8_t> payload, std::size_t events = 0) {
    if (!producer_.produce(topic_, payload, key_, produce_counters_, events)) return false;
    messages_.add();
    return true;
  }

 private:
  Producer& producer_;
  Producer::TopicId topic_;
  std::string key_;
  kafka::ProduceCounters produce_counters_;
  Counter& messages_;
};

/// ev44 of one processing thread. Times given to tick() are std::chrono::steady_clock ns. An
/// event's age is measured from the last tick before it arrived (add() reads no clock), so a
/// message can leave up to one tick period early, never late.
class Ev44Output final : public EventOutput {
 public:
  Ev44Output(Producer& producer, Producer::TopicId topic, const OutputSettings& settings,
             SourceSequence& sequence, CounterRegistry& counters)
      : writer_(producer, topic, settings.source_name, counters, "ev44"),
        builder_(settings.source_name, settings.ev44_max_bytes),
        max_latency_ns_(static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(settings.ev44_max_latency)
                .count())),
        sequence_(sequence),
        events_(counters.counter("ev44.events")),
        events_dropped_(counters.counter("ev44.events.dropped")),
        last_tick_ns_(steady_now_ns()) {}

  void add(std::uint64_t pulse_time_ns, std::uint32_t time_of_flight_ns,
           std::uint32_t pixel_id) override {
    if (builder_.empty()) oldest_ns_ = last_tick_ns_;
    builder_.add(pulse_time_ns, time_of_flight_ns, pixel_id);
    events_.add();
    if (builder_.full()) send();
  }

  void add_pulse(std::uint64_t pulse_time_ns, const std::uint32_t* time_of_flight_ns,
                 const std::uint32_t* pixel_id, std::size_t n) override {
    events_.add(n);
    while (n != 0) {
      if (builder_.empty()) oldest_ns_ = last_tick_ns_;
      const std::size_t k = builder_.add_pulse(pulse_time_ns, time_of_flight_ns, pixel_id, n);
      time_of_flight_ns += k;
      pixel_id += k;
      n -= k;
      if (builder_.full()) send();
    }
  }

  void tick(std::uint64_t now_ns) override {
    last_tick_ns_ = now_ns;
    if (!builder_.empty() && now_ns - oldest_ns_ >= max_latency_ns_) send();
  }

  void flush() override {
    if (!builder_.empty()) send();
  }

 private:
  void send() {
    bool queued;
    {
      const std::lock_guard lock(sequence_.mutex);
      queued = writer_.write(builder_.finish(sequence_.next++), builder_.events());
    }
    if (!queued) events_dropped_.add(builder_.events());
    builder_.reset();
  }

  TopicWriter writer_;
  kafka::Ev44Builder builder_;
  std::uint64_t max_latency_ns_;
  SourceSequence& sequence_;
  Counter& events_;
  Counter& events_dropped_;
  std::uint64_t last_tick_ns_;
  std::uint64_t oldest_ns_ = 0;
};

/// ar51 raw samples of one processing thread: each packet given becomes one message.
class Ar51Output final : public RawOutput {
 public:
  Ar51Output(Producer& producer, Producer::TopicId topic, const OutputSettings& settings,
             SourceSequence& sequence, CounterRegistry& counters)
      : writer_(producer, topic, settings.source_name, counters, "ar51"),
        builder_(settings.source_name, kMaxDatagram),
        sequence_(sequence),
        dropped_(counters.counter("ar51.messages.dropped")) {}

  void sample(const std::uint8_t* data, std::uint32_t size) override {
    bool queued;
    {
      const std::lock_guard lock(sequence_.mutex);
      queued = writer_.write(builder_.build(sequence_.next++, data, size));
    }
    if (!queued) dropped_.add();
  }

 private:
  TopicWriter writer_;
  kafka::Ar51Builder builder_;
  SourceSequence& sequence_;
  Counter& dropped_;
};

/// x5f2 status, built and produced on the stats publisher thread.
class X5f2Output final : public StatsSink {
 public:
  X5f2Output(Producer& producer, Producer::TopicId topic, const OutputSettings& settings,
             CounterRegistry& counters)
      : writer_(producer, topic, settings.service_id, counters, "x5f2"),
        identity_(kafka::this_process_identity(settings.service_id, settings.stats_interval_ms)),
        dropped_(counters.counter("x5f2.messages.dropped")) {}

  void publish(const StatsSnapshot& snapshot) override {
    if (!writer_.write(kafka::serialize_x5f2(identity_, kafka::status_json(snapshot)))) {
      dropped_.add();
    }
  }

 private:
  TopicWriter writer_;
  kafka::StatusIdentity identity_;
  Counter& dropped_;
};

kafka::ProducerConfig producer_config(const OutputSettings& settings) {
  kafka::ProducerConfig config = kafka::default_producer_config(settings);
  if (!settings.kafka_config_file.empty()) {
    kafka::apply_kafka_config_file(config, settings.kafka_config_file);
  }
  return config;
}

class KafkaOutputs final : public Outputs {
 public:
  KafkaOutputs(const OutputSettings& settings, CounterRegistry& counters)
      : producer_(producer_config(settings), counters) {
    const auto events_topic = producer_.topic(settings.events_topic);
    events_.reserve(settings.threads);
    for (unsigned i = 0; i < settings.threads; ++i) {
      events_.push_back(
          std::make_unique<Ev44Output>(producer_, events_topic, settings, ev44_sequence_, counters));
    }
    if (settings.raw_sample_every > 0) {
      const auto samples_topic = producer_.topic(settings.samples_topic);
      raw_.reserve(settings.threads);
      for (unsigned i = 0; i < settings.threads; ++i) {
        raw_.push_back(std::make_unique<Ar51Output>(producer_, samples_topic, settings,
                                                    ar51_sequence_, counters));
      }
    }
    status_ = std::make_unique<X5f2Output>(producer_, producer_.topic(settings.status_topic),
                                           settings, counters);
    spdlog::info("kafka: broker {} topics: events '{}', status '{}', samples '{}'", settings.broker,
                 settings.events_topic, settings.status_topic,
                 settings.raw_sample_every > 0 ? settings.samples_topic : "(off)");
  }

  EventOutput& events(unsigned thread) override { return *events_.at(thread); }
  RawOutput* raw(unsigned thread) override {
    return thread < raw_.size() ? raw_[thread].get() : nullptr;
  }
  StatsSink* status() override { return status_.get(); }
  void poll() override { producer_.poll(); }
  std::uint64_t flush(std::chrono::milliseconds timeout) override {
    return producer_.flush(timeout);
  }

 private:
  Producer producer_;
  SourceSequence ev44_sequence_;
  SourceSequence ar51_sequence_;
  std::vector<std::unique_ptr<Ev44Output>> events_;
  std::vector<std::unique_ptr<Ar51Output>> raw_;
  std::unique_ptr<X5f2Output> status_;
};

}  // namespace

std::unique_ptr<Outputs> make_kafka_outputs(const OutputSettings& settings,
                                            CounterRegistry& counters) {
  return std::make_unique<KafkaOutputs>(settings, counters);
}

}  // namespace efu
