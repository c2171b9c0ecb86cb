// Prometheus /metrics, served by the prometheus-cpp pull exposer (civetweb threads).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "efu/outputs.h"

namespace prometheus {
class Counter;
class Exposer;
class Gauge;
class Registry;
template <typename T>
class Family;
}  // namespace prometheus

namespace efu {

struct MetricsConfig {
  std::string listen;  // "127.0.0.1:9100" or "[::1]:9100" (port 0: any free port)
  std::string instrument;
  std::string module;
  std::string version;
};

/// How an efu counter appears on /metrics.
struct PrometheusSeries {
  std::string name;    // "efu_receive_packets_total"
  double scale = 1.0;  // multiplies the efu value (1e-9 for a name in ns, shown in seconds)
};

/// "efu_" + the counter name with every character outside [A-Za-z0-9_] made '_', + "_total" for
/// a counter (not for a gauge). Prometheus wants base units, so a name ending in _ns, _us or _ms
/// ends in _seconds instead, with the value scaled.
PrometheusSeries prometheus_series(std::string_view counter_name, CounterKind kind);

/// Mirrors each published snapshot into a prometheus-cpp registry that the exposer serves:
/// counters as efu_<name>_total, gauges as efu_<name>, per-thread CPU as
/// efu_thread_cpu_seconds_total and efu_thread_cpu_percent{thread,mode}, the host's softirq and
/// system shares, and efu_build_info. Every series has the labels instrument and module.
/// Scrapes run on the exposer's threads and read only the registry, never the data path.
class MetricsEndpoint final : public StatsSink {
 public:
  /// Starts the exposer (its threads take no stop signals). Throws ConfigError naming --metrics
  /// when it cannot listen.
  explicit MetricsEndpoint(const MetricsConfig& config);
  ~MetricsEndpoint() override;
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  /// The port the exposer listens on (the chosen one for port 0).
  int bound_port() const { return bound_port_; }

  void publish(const StatsSnapshot& snapshot) override;

 private:
  struct Mirrored {
    prometheus::Counter* counter = nullptr;
    prometheus::Gauge* gauge = nullptr;
    std::uint64_t last = 0;  // the value already added to `counter`
    double scale = 1.0;
  };
  Mirrored& mirror(const RateSample& sample);

  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int bound_port_ = 0;
  std::unordered_map<std::string, Mirrored> mirrored_;  // by efu counter name
  std::unordered_map<std::string, std::string> taken_;  // Prometheus name -> efu name
  prometheus::Family<prometheus::Counter>* thread_seconds_ = nullptr;
  prometheus::Family<prometheus::Gauge>* thread_percent_ = nullptr;
  prometheus::Gauge* host_softirq_ = nullptr;
  prometheus::Gauge* host_system_ = nullptr;
  std::map<std::string, std::string> labels_;  // instrument and module (prometheus::Labels)
};

}  // namespace efu
