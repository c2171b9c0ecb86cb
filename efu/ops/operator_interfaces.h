// What an operator watches and steers a running efu with (docs/operations.md): the command port,
// Graphite, Prometheus /metrics and the main.uptime counter. Each interface runs on its own
// thread and is fed by the stats publisher, so none of them ever waits on the data path, and
// none of them can hold up the stats or a stop.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "ops/command_port.h"
#include "efu/counters.h"
#include "efu/options.h"
#include "ops/graphite_output.h"
#include "ops/latest_stats.h"
#include "ops/metrics_endpoint.h"
#include "ops/stats_publisher.h"

namespace efu {

struct OperatorSettings {
  std::string module;
  std::string instrument;
  std::string stat_prefix;  // "efu.<instrument>.<region>.": Graphite and command-port names
  std::optional<CommandPortConfig> command;  // --command-port 0: none
  std::optional<GraphiteConfig> graphite;
  std::optional<MetricsConfig> metrics;
};

/// Reads --stats-prefix, --stats-region, --command-bind, --graphite and --metrics (throws
/// ConfigError naming the option). The caller range-checks and fills command->port and
/// command->idle_timeout, and drops `command` when the port is 0.
OperatorSettings read_operator_settings(const OptionValues& values, const std::string& module,
                                        const std::string& instrument);

class OperatorInterfaces {
 public:
  /// Registers main.uptime and the interfaces' counters, adds their sinks to `publisher`, binds
  /// the command port and starts the /metrics exposer. Call before counters.freeze(); throws
  /// ConfigError (a port in use, a bad address).
  OperatorInterfaces(const OperatorSettings& settings, CounterRegistry& counters,
                     StatsPublisher& publisher);
  ~OperatorInterfaces();

  /// After counters.freeze(): starts the command port and Graphite threads. `request_stop` is
  /// what the command port's EXIT does (a graceful stop, as SIGTERM).
  void start(std::function<void()> request_stop);
  /// Ends the command port and Graphite threads (Graphite first writes what the last publish
  /// left). /metrics keeps serving the final values until the object is destroyed.
  void stop();

 private:
  const CounterRegistry& counters_;
  Counter& uptime_;
  std::chrono::steady_clock::time_point started_;
  LatestStats latest_;
  std::unique_ptr<CommandProtocol> protocol_;
  std::unique_ptr<CommandPort> command_;
  std::unique_ptr<GraphiteOutput> graphite_;
  std::unique_ptr<MetricsEndpoint> metrics_;
};

}  // namespace efu
