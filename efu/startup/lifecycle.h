// A run's lifecycle after start-up (docs/architecture.md §8): the stop request and the signal
// thread that makes one, the data threads, and the ordered stop (docs/architecture.md §8.2).
#pragma once

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "efu/outputs.h"
#include "ops/operator_interfaces.h"
#include "ops/stats_publisher.h"
#include "process/wakeup.h"

namespace efu {

class DataPath;
struct HostSettings;

/// The stop request: set by the signal thread, the command port's EXIT or the --stop-after
/// deadline.
class StopRequest {
 public:
  void request(std::string reason);
  /// Waits until a stop is requested or `deadline` passes (then requests one itself).
  std::string wait(std::chrono::steady_clock::time_point deadline);

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool requested_ = false;
  std::string reason_;
};

/// SIGINT/SIGTERM are blocked in every thread and taken by this thread with sigwait(): the
/// first requests a graceful stop, a second exits at once (docs/architecture.md §8.3). The
/// thread is joined when this object goes (it is woken with SIGUSR1, which is blocked too and
/// otherwise ignored), so it never outlives the StopRequest it refers to. Construct it before
/// any other thread starts, so every thread inherits the blocked mask.
class SignalWatcher {
 public:
  explicit SignalWatcher(StopRequest& stop);
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

 private:
  void watch();

  StopRequest& stop_;
  sigset_t set_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

/// A data thread that reports its kernel tid once it runs, so its CPU can be sampled.
struct DataThread {
  std::string name;
  std::thread thread;
  std::atomic<int> tid{0};
};

/// The receive and processing threads. However the run ends (a stop, or an exception after the
/// threads started), stop() runs in the right order: the receive threads stop and drain their
/// sockets, then the processing threads drain their lanes and flush; then all are joined.
class DataThreads {
 public:
  ~DataThreads() { stop(); }

  void start_receiver(std::string name, std::optional<int> core, std::function<void()> body);
  void start_processor(std::string name, std::optional<int> core, std::function<void()> body,
                       Wakeup* wakeup);
  const std::atomic<bool>& receiver_stop() const noexcept { return receiver_stop_; }
  const std::atomic<bool>& input_done() const noexcept { return input_done_; }

  /// Waits for each thread's tid (bounded) and has `cpu` sample it.
  void sample_cpu(CpuSampler& cpu) const;

  /// Idempotent.
  void stop();

 private:
  static void start(std::deque<DataThread>& group, std::string name, std::optional<int> core,
                    std::function<void()> body);

  std::atomic<bool> receiver_stop_{false};
  std::atomic<bool> input_done_{false};
  std::deque<DataThread> receivers_;  // deque: stable addresses for the threads' references
  std::deque<DataThread> processors_;
  std::vector<Wakeup*> wakeups_;
};

/// From the data threads' start to their join (docs/architecture.md §8.1's last steps, §8.2
/// steps 1-3 up to the processing threads' join): starts the data path's threads, then the stats
/// and operator threads, tells systemd READY=1, waits for a stop request, tells it STOPPING=1
/// and stops the data threads in order.
void run_data_threads(const HostSettings& settings, DataPath& data_path, StatsPublisher& publisher,
                      OperatorInterfaces& ops, StopRequest& stop);

/// docs/architecture.md §8.2 steps 3 and 4: stops the stats thread (which publishes once more),
/// flushes Kafka for up to --flush-timeout, publishes a last status and warns about what was
/// purged.
void stop_stats_and_flush(StatsPublisher& publisher, Outputs& outputs, double flush_timeout_s);

}  // namespace efu
