// The Kafka outputs: ev44 events per processing thread, ar51 raw samples, x5f2 status, all
// through one shared producer.
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "efu/kafka/ar51_builder.h"
#include "efu/kafka/da00_builder.h"
#include "efu/kafka/ev44_builder.h"
#include "efu/kafka/producer.h"
#include "efu/kafka/x5f2_status.h"
#include "efu/live_histograms.h"
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

/// One ev44 source as written by one processing thread. Times given to tick() are
/// std::chrono::steady_clock ns. An event's age is measured from the last tick before it arrived
/// (add() reads no clock), so a message can leave up to one tick period early, never late.
class Ev44Stream final : public EventSink {
 public:
  Ev44Stream(Producer& producer, Producer::TopicId topic, const std::string& source_name,
             const OutputSettings& settings, SourceSequence& sequence, CounterRegistry& counters)
      : writer_(producer, topic, source_name, counters, "ev44"),
        builder_(source_name, settings.ev44_max_bytes),
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

  void tick(std::uint64_t now_ns) {
    last_tick_ns_ = now_ns;
    if (!builder_.empty() && now_ns - oldest_ns_ >= max_latency_ns_) send();
  }

  void flush() {
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

/// One da00 source as written by one processing thread: each array published is one message.
/// da00 carries no message id, so there is no sequence to share between threads.
class Da00Stream final : public HistogramSink {
 public:
  Da00Stream(Producer& producer, Producer::TopicId topic, const std::string& source_name,
             CounterRegistry& counters)
      : writer_(producer, topic, source_name, counters, "da00"),
        builder_(source_name),
        dropped_(counters.counter("da00.messages.dropped")) {}

  void publish(const DataArrayView& array) override {
    if (!writer_.write(builder_.build(array))) dropped_.add();
  }

 private:
  TopicWriter writer_;
  kafka::Da00Builder builder_;
  Counter& dropped_;
};

/// What every thread's outputs share: the producer, the topics and one message-id sequence per
/// ev44 source name. Sources are added only while pipelines are created (on the main thread,
/// before the data threads start), so the map needs no lock; std::map keeps each sequence at
/// one address while more are added.
struct SharedStreams {
  Producer& producer;
  Producer::TopicId events_topic;
  OutputSettings settings;
  CounterRegistry& counters;
  std::map<std::string, SourceSequence, std::less<>> sequences;
};

/// The outputs of one processing thread: the ev44 stream of the host's own source (--source),
/// which is the thread's EventSink, and the named sources its pipeline asked for. tick() and
/// flush() reach every one of them. With --histograms, every ev44 source's events also pass
/// through the thread's LiveHistograms, which publishes on its own topic.
class ThreadOutputs final : public EventOutput, public SourceOutputs {
 public:
  explicit ThreadOutputs(SharedStreams& shared) : shared_(shared) {
    const LiveHistogramSettings& h = shared.settings.histograms;
    if (!h.topic.empty()) {
      const auto topic = shared.producer.topic(h.topic);
      const std::string& source = shared.settings.source_name;
      tof_out_ = std::make_unique<Da00Stream>(shared.producer, topic, source + "_tof",
                                              shared.counters);
      pixel_out_ = std::make_unique<Da00Stream>(shared.producer, topic, source + "_pixels",
                                                shared.counters);
      live_ = std::make_unique<LiveHistograms>(h, *tof_out_, *pixel_out_, shared.counters);
    }
    own_ = &make_ev44(shared.settings.source_name);
  }

  void add(std::uint64_t pulse_time_ns, std::uint32_t time_of_flight_ns,
           std::uint32_t pixel_id) override {
    own_->add(pulse_time_ns, time_of_flight_ns, pixel_id);
  }
  void add_pulse(std::uint64_t pulse_time_ns, const std::uint32_t* time_of_flight_ns,
                 const std::uint32_t* pixel_id, std::size_t n) override {
    own_->add_pulse(pulse_time_ns, time_of_flight_ns, pixel_id, n);
  }
  void tick(std::uint64_t now_ns) override {
    for (auto& s : ev44_) s.stream->tick(now_ns);
  }
  void flush() override {
    for (auto& s : ev44_) s.stream->flush();
    if (live_) live_->flush();
  }
  SourceOutputs* sources() override { return this; }
  EventSink& sink() override { return *own_; }

  EventSink& events(std::string_view name) override {
    for (auto& s : ev44_) {
      if (s.name == name) return *s.sink;
    }
    return make_ev44(std::string(name));
  }

  HistogramSink& histograms(std::string_view name) override {
    for (auto& s : da00_) {
      if (s.first == name) return *s.second;
    }
    da00_.emplace_back(std::string(name),
                       std::make_unique<Da00Stream>(shared_.producer, shared_.events_topic,
                                                    std::string(name), shared_.counters));
    return *da00_.back().second;
  }

 private:
  /// One ev44 source of this thread: the stream and what the pipeline writes to (the stream,
  /// or the live histograms in front of it).
  struct Ev44Source {
    std::string name;
    std::unique_ptr<Ev44Stream> stream;
    std::unique_ptr<HistogrammedSink> tee;
    EventSink* sink;
  };

  EventSink& make_ev44(const std::string& name) {
    SourceSequence& sequence = shared_.sequences[name];
    Ev44Source s{name,
                 std::make_unique<Ev44Stream>(shared_.producer, shared_.events_topic, name,
                                              shared_.settings, sequence, shared_.counters),
                 nullptr, nullptr};
    if (live_) s.tee = std::make_unique<HistogrammedSink>(*s.stream, *live_);
    s.sink = s.tee ? static_cast<EventSink*>(s.tee.get()) : s.stream.get();
    ev44_.push_back(std::move(s));
    return *ev44_.back().sink;
  }

  SharedStreams& shared_;
  std::unique_ptr<Da00Stream> tof_out_;
  std::unique_ptr<Da00Stream> pixel_out_;
  std::unique_ptr<LiveHistograms> live_;
  std::vector<Ev44Source> ev44_;
  std::vector<std::pair<std::string, std::unique_ptr<Da00Stream>>> da00_;
  EventSink* own_ = nullptr;
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
      : producer_(producer_config(settings), counters),
        streams_{producer_, producer_.topic(settings.events_topic), settings, counters, {}} {
    events_.reserve(settings.threads);
    for (unsigned i = 0; i < settings.threads; ++i) {
      events_.push_back(std::make_unique<ThreadOutputs>(streams_));
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
    spdlog::info(
        "kafka: broker {} topics: events '{}', status '{}', samples '{}', histograms '{}'",
        settings.broker, settings.events_topic, settings.status_topic,
        settings.raw_sample_every > 0 ? settings.samples_topic : "(off)",
        settings.histograms.topic.empty() ? "(off)" : settings.histograms.topic);
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
  SharedStreams streams_;
  SourceSequence ar51_sequence_;
  std::vector<std::unique_ptr<ThreadOutputs>> events_;
  std::vector<std::unique_ptr<Ar51Output>> raw_;
  std::unique_ptr<X5f2Output> status_;
};

}  // namespace

std::unique_ptr<Outputs> make_kafka_outputs(const OutputSettings& settings,
                                            CounterRegistry& counters) {
  return std::make_unique<KafkaOutputs>(settings, counters);
}

}  // namespace efu
