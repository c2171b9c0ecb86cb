// The stats publisher thread: samples every counter each interval, derives rates and CPU shares,
// and hands the snapshot to the sinks (log line, Kafka x5f2). It also drives Kafka polling.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ops/cpu_usage.h"
#include "efu/counters.h"
#include "efu/log_limiter.h"
#include "efu/outputs.h"

namespace efu {

/// Writes one compact info line per snapshot: non-zero counters with rates, then CPU.
class LogStatsSink final : public StatsSink {
 public:
  void publish(const StatsSnapshot& snapshot) override;
};

/// Formats a snapshot's counters as the compact log line (exposed for tests).
std::string format_stats_line(const StatsSnapshot& snapshot);

/// Warns when a loss counter grew during the interval: any counter whose name has a segment
/// "dropped", "errors", "failed" or "truncated". At most one warning per counter every 10 s;
/// the warning says how much was lost since the previous one.
class LossWarningSink final : public StatsSink {
 public:
  void publish(const StatsSnapshot& snapshot) override;

 private:
  struct Watch {
    std::uint64_t reported = 0;  // value at the last warning
    LogLimiter limiter;
  };
  std::map<std::string, Watch> watches_;
};

/// True for counter names that count loss or failure (see LossWarningSink).
bool is_loss_counter(const std::string& name);

class StatsPublisher {
 public:
  StatsPublisher(CounterRegistry& counters, std::chrono::milliseconds interval);
  ~StatsPublisher();

  void add_sink(StatsSink* sink) { sinks_.push_back(sink); }
  /// Called on the publisher thread before each sample: sets gauges only it writes.
  void add_gauge_updater(std::function<void()> update) { updaters_.push_back(std::move(update)); }
  /// Called on the publisher thread about every 100 ms (Kafka delivery reports).
  void set_poll(std::function<void()> poll) { poll_ = std::move(poll); }
  CpuSampler& cpu() { return cpu_; }

  void start(int core);  // core < 0: not pinned
  /// Stops the thread after one last snapshot (so the final interval is published too).
  void stop();
  /// Takes and publishes a snapshot now; for the thread and for tests.
  StatsSnapshot publish_now();

 private:
  void run(int core);

  CounterRegistry& counters_;
  std::chrono::milliseconds interval_;
  std::vector<StatsSink*> sinks_;
  std::vector<std::function<void()>> updaters_;
  std::function<void()> poll_;
  CpuSampler cpu_;
  std::map<std::string, std::uint64_t> last_values_;
  std::chrono::steady_clock::time_point last_time_;

  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
};

}  // namespace efu
