#include "efu/kafka/producer_config.h"

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "efu/errors.h"

namespace efu::kafka {

void ProducerConfig::set(const std::string& name, std::string value) {
  auto it = std::find_if(properties.begin(), properties.end(),
                         [&](const auto& p) { return p.first == name; });
  if (it == properties.end()) {
    properties.emplace_back(name, std::move(value));
  } else {
    it->second = std::move(value);
  }
}

std::string ProducerConfig::get(const std::string& name) const {
  for (const auto& [key, value] : properties) {
    if (key == name) return value;
  }
  return "";
}

std::string ProducerConfig::describe() const {
  std::string out;
  for (const auto& [key, value] : properties) {
    if (!out.empty()) out += ' ';
    out += key + '=' + value;
  }
  out += std::string(" ") + kQueueFullWaitKey + '=' + std::to_string(queue_full_wait.count());
  return out;
}

ProducerConfig default_producer_config(const OutputSettings& settings) {
  ProducerConfig c;
  c.set("bootstrap.servers", settings.broker);
  c.set("client.id", "efu-" + settings.source_name);
  // Batching: wait a little to fill batches; an ev44 message of ev44_max_bytes is a batch of its
  // own anyway. batch.size stays under a default broker's 1 MiB record-batch limit.
  c.set("linger.ms", "20");
  c.set("batch.num.messages", "100000");
  c.set("batch.size", "1000000");
  // A single ev44 message must fit, with room for the record framing.
  const std::size_t max_message = std::max<std::size_t>(settings.ev44_max_bytes + 65536, 1000000);
  c.set("message.max.bytes", std::to_string(max_message));
  // Bound the memory of a broker outage: 256 MiB, or at least 64 full ev44 messages.
  const std::size_t queue_kb =
      std::max<std::size_t>(262144, 64 * (settings.ev44_max_bytes / 1024 + 1));
  c.set("queue.buffering.max.kbytes", std::to_string(queue_kb));
  c.set("queue.buffering.max.messages", "1000000");
  // ev44 arrays barely compress and the cores are needed for event formation.
  c.set("compression.codec", "none");
  // No time limit (0 = infinite): in a broker outage a message waits for as long as the queue
  // above has room, so memory, not time, decides what is lost (queue full: counted at produce;
  // at stop: purged and counted). A finite timeout would expire messages while there is room,
  // leaving id gaps. librdkafka allows 0 with enable.idempotence (only transactional producers
  // need message.timeout.ms <= transaction.timeout.ms).
  c.set("message.timeout.ms", "0");
  c.set("reconnect.backoff.ms", "100");
  c.set("reconnect.backoff.max.ms", "1000");
  c.set("socket.nagle.disable", "true");
  c.set("acks", "all");
  // Retries after a broker outage must not duplicate messages (and so events) at the consumer.
  c.set("enable.idempotence", "true");
  // librdkafka's statistics once a second, on the producer's poll thread: the cluster counters
  // (kafka.leader.changes, kafka.broker.*) come from them (docs/kafka.md, "A Kafka cluster").
  c.set("statistics.interval.ms", "1000");
  return c;
}

void apply_kafka_config_file(ProducerConfig& config, const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw ConfigError("--kafka-config: '" + path + "' cannot be read; expected a JSON file");
  }
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError("--kafka-config: '" + path + "' is not valid JSON (" + e.what() +
                      "); expected an object of librdkafka properties");
  }
  if (!doc.is_object()) {
    throw ConfigError("--kafka-config: '" + path +
                      "' holds no JSON object; expected {\"property\": value, ...}");
  }
  for (const auto& [key, value] : doc.items()) {
    std::string text;
    if (value.is_string()) {
      text = value.get<std::string>();
    } else if (value.is_boolean()) {
      text = value.get<bool>() ? "true" : "false";
    } else if (value.is_number_integer() || value.is_number_unsigned() || value.is_number_float()) {
      text = value.dump();
    } else {
      throw ConfigError("--kafka-config: property '" + key + "' in '" + path + "' is " +
                        value.dump() + "; expected a string, number or bool");
    }
    if (key == kQueueFullWaitKey) {
      if (!value.is_number_integer() || value.get<long long>() < 0 ||
          value.get<long long>() > 60000) {
        throw ConfigError("--kafka-config: '" + std::string(kQueueFullWaitKey) + "' is " + text +
                          "; expected an integer 0..60000 (ms)");
      }
      config.queue_full_wait = std::chrono::milliseconds(value.get<long long>());
      continue;
    }
    config.set(key, std::move(text));
  }
}

}  // namespace efu::kafka
