// librdkafka producer properties: efu's throughput-tuned defaults and the override file.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "efu/outputs.h"

namespace efu::kafka {

/// The key of the override file that is efu's own, not librdkafka's: how long a producing
/// thread waits for room in a full local queue before it drops the message.
inline constexpr const char* kQueueFullWaitKey = "efu.queue.full.wait.ms";

struct ProducerConfig {
  /// librdkafka properties in the order they are applied.
  std::vector<std::pair<std::string, std::string>> properties;
  std::chrono::milliseconds queue_full_wait{50};

  /// Replaces the value of `name`, or appends it.
  void set(const std::string& name, std::string value);
  /// The value of `name`, or "" when it is not set.
  std::string get(const std::string& name) const;
  /// "name=value name=value ...": the startup log line.
  std::string describe() const;
};

/// The defaults (docs/kafka.md lists them and says why).
ProducerConfig default_producer_config(const OutputSettings& settings);

/// Applies a flat JSON object of property -> string/number/bool on top of `config`. Throws
/// ConfigError for an unreadable file, bad JSON, a nested value or a bad efu.* value. Whether
/// librdkafka accepts a property is checked when the producer is created.
void apply_kafka_config_file(ProducerConfig& config, const std::string& path);

}  // namespace efu::kafka
