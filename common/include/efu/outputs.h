// Host-side outputs: where events, raw samples and stats leave the process (docs/architecture.md
// §6).
// Plugins never see these types; they see only EventSink (plugin.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "efu/counters.h"
#include "efu/live_histograms.h"
#include "efu/plugin.h"

namespace efu {

/// The EventSink of one processing thread, plus the hooks the host drives on that thread.
class EventOutput : public EventSink {
 public:
  /// Flushes a message whose oldest event is older than the maximum latency.
  virtual void tick(std::uint64_t now_ns) = 0;
  /// Flushes whatever is buffered (at stop).
  virtual void flush() = 0;
  /// The thread's named sources, for PipelineContext::sources; tick() and flush() reach them
  /// too. Null when these outputs have none.
  virtual SourceOutputs* sources() { return nullptr; }
  /// What the pipeline writes the host's own source to (PipelineContext::events): this output,
  /// or the stream behind it when this output only forwards.
  virtual EventSink& sink() { return *this; }
};

/// Raw packet samples (ar51) of one processing thread.
class RawOutput {
 public:
  virtual ~RawOutput() = default;
  virtual void sample(const std::uint8_t* data, std::uint32_t size) = 0;
};

/// One counter with its rate over the last interval (0 for gauges).
struct RateSample {
  std::string name;
  CounterKind kind;
  std::uint64_t value;
  double rate_per_s;
};

/// CPU use of one thread over the last interval, in % of one core.
struct ThreadCpu {
  std::string name;
  double user_pct;
  double system_pct;
};

struct StatsSnapshot {
  std::uint64_t time_ns;  // wall clock, ns since the Unix epoch
  double interval_s;      // time since the previous snapshot
  std::vector<RateSample> counters;
  std::vector<ThreadCpu> threads;
  double host_softirq_pct;  // share of all CPUs' time spent in softirq over the interval
  double host_system_pct;
};

/// A consumer of periodic stats: the log line, the Kafka x5f2 status message, Graphite.
class StatsSink {
 public:
  virtual ~StatsSink() = default;
  virtual void publish(const StatsSnapshot& snapshot) = 0;
};

struct OutputSettings {
  std::string broker;  // "host:port[,host:port]" or "none"
  std::string events_topic;
  std::string samples_topic;
  std::string status_topic;
  std::string source_name;        // ev44/ar51 source_name
  std::string service_id;         // x5f2 service_id
  std::string kafka_config_file;  // JSON object of librdkafka properties; "" for none
  std::size_t ev44_max_bytes = 1'000'000;
  std::chrono::milliseconds ev44_max_latency{100};
  std::uint32_t raw_sample_every = 0;  // 0: no ar51 samples
  LiveHistogramSettings histograms;    // topic "": no live histograms
  std::uint32_t stats_interval_ms = 1000;
  unsigned threads = 1;  // processing threads: one EventOutput and RawOutput each
};

/// Every output of one efu process. Created on the main thread before the data threads start;
/// events(i) and raw(i) are then used only by processing thread i, status() and poll() only by
/// the stats publisher thread.
class Outputs {
 public:
  virtual ~Outputs() = default;
  virtual EventOutput& events(unsigned thread) = 0;
  /// Null when raw sampling is off.
  virtual RawOutput* raw(unsigned thread) = 0;
  /// Null when there is no status output (--broker none).
  virtual StatsSink* status() = 0;
  /// Updates output gauges (Kafka queue depth, bytes and fill) and warns while deliveries have
  /// stopped with messages waiting; called by the publisher thread about every 100 ms. Delivery
  /// reports are served by the Kafka producer's own thread.
  virtual void poll() = 0;
  /// Waits up to `timeout` for outstanding deliveries, then purges what is left and counts it
  /// as failed; returns how many messages that was.
  virtual std::uint64_t flush(std::chrono::milliseconds timeout) = 0;
};

/// Outputs for --broker none: events are counted ("events.discarded") and dropped.
std::unique_ptr<Outputs> make_null_outputs(const OutputSettings& settings,
                                           CounterRegistry& counters);
/// Kafka outputs (common/src/kafka/). Throws ConfigError for a bad Kafka config file.
std::unique_ptr<Outputs> make_kafka_outputs(const OutputSettings& settings,
                                            CounterRegistry& counters);

}  // namespace efu
