#include "startup/lifecycle.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include <spdlog/spdlog.h>

#include "ops/service_notify.h"
#include "startup/data_path_assembly.h"
#include "startup/settings.h"
#include "startup/threads.h"

namespace efu {

// ---- the stop request and the signal thread ------------------------------------------------

void StopRequest::request(std::string reason) {
  // Notify under the lock: the waiter may return and destroy this object as soon as it can
  // take the lock, and no requester may touch the cv after that.
  std::lock_guard lock(mutex_);
  if (requested_) return;
  requested_ = true;
  reason_ = std::move(reason);
  cv_.notify_all();
}

std::string StopRequest::wait(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  if (!cv_.wait_until(lock, deadline, [this] { return requested_; })) {
    requested_ = true;
    reason_ = "--stop-after reached";
  }
  return reason_;
}

SignalWatcher::SignalWatcher(StopRequest& stop) : stop_(stop) {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  sigaddset(&set_, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  thread_ = std::thread([this] { watch(); });
}

SignalWatcher::~SignalWatcher() {
  done_.store(true, std::memory_order_release);
  pthread_kill(thread_.native_handle(), SIGUSR1);
  thread_.join();
}

void SignalWatcher::watch() {
  set_thread_name("efu-signal");
  int count = 0;
  for (;;) {
    int sig = 0;
    if (sigwait(&set_, &sig) != 0) continue;
    if (sig == SIGUSR1) {
      if (done_.load(std::memory_order_acquire)) return;
      continue;  // someone else's SIGUSR1: not a stop
    }
    if (++count == 1) {
      stop_.request(std::string("signal ") + (sig == SIGINT ? "SIGINT" : "SIGTERM"));
    } else {
      static const char msg[] = "efu: second signal, exiting at once without draining\n";
      (void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
      _exit(128 + sig);
    }
  }
}

// ---- the data threads ----------------------------------------------------------------------

namespace {

void prepare_thread(const std::string& name, std::optional<int> core, DataThread& self) {
  set_thread_name(name);
  if (core) {
    if (const std::string err = pin_thread(*core); !err.empty()) {
      spdlog::error("{}: cannot pin to core {}: {}", name, *core, err);
    }
  }
  self.tid.store(current_tid(), std::memory_order_release);
}

void wait_for_tid(const DataThread& t) {
  for (int i = 0; i < 5000 && t.tid.load(std::memory_order_acquire) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

/// --stop-after as a deadline; none (0) is never.
std::chrono::steady_clock::time_point stop_deadline(double stop_after_s) {
  if (stop_after_s > 0) {
    return std::chrono::steady_clock::now() +
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(
               std::chrono::duration<double>(stop_after_s));
  }
  return std::chrono::steady_clock::time_point::max();
}

}  // namespace

void DataThreads::start_receiver(std::string name, std::optional<int> core,
                                 std::function<void()> body) {
  start(receivers_, std::move(name), core, std::move(body));
}

void DataThreads::start_processor(std::string name, std::optional<int> core,
                                  std::function<void()> body, Wakeup* wakeup) {
  start(processors_, std::move(name), core, std::move(body));
  wakeups_.push_back(wakeup);
}

void DataThreads::sample_cpu(CpuSampler& cpu) const {
  for (const std::deque<DataThread>* group : {&receivers_, &processors_}) {
    for (const DataThread& t : *group) {
      wait_for_tid(t);
      cpu.add_thread(t.name, t.tid.load());
    }
  }
}

void DataThreads::stop() {
  receiver_stop_.store(true, std::memory_order_relaxed);
  for (DataThread& t : receivers_) {
    if (t.thread.joinable()) t.thread.join();
  }
  input_done_.store(true, std::memory_order_release);
  for (Wakeup* w : wakeups_) w->notify();
  for (DataThread& t : processors_) {
    if (t.thread.joinable()) t.thread.join();
  }
}

void DataThreads::start(std::deque<DataThread>& group, std::string name, std::optional<int> core,
                        std::function<void()> body) {
  DataThread& t = group.emplace_back();
  t.name = std::move(name);
  t.thread = std::thread([&t, core, body = std::move(body)] {
    prepare_thread(t.name, core, t);
    body();
  });
}

// ---- the run and the ordered stop ----------------------------------------------------------

void run_data_threads(const HostSettings& settings, DataPath& data_path, StatsPublisher& publisher,
                      OperatorInterfaces& ops, StopRequest& stop) {
  DataThreads threads;
  data_path.start(threads, settings.cpu);
  threads.sample_cpu(publisher.cpu());
  publisher.start(-1);
  ops.start([&stop] { stop.request("command port EXIT"); });
  notify_service_manager("READY=1");
  spdlog::info("running{}", settings.stop_after_s > 0
                                ? fmt::format(" for {} s", settings.stop_after_s)
                                : std::string(" until SIGINT/SIGTERM"));

  const std::string reason = stop.wait(stop_deadline(settings.stop_after_s));
  spdlog::info("stopping ({}): draining sockets and rings", reason);
  notify_service_manager("STOPPING=1");

  // Order matters (docs/architecture.md §8.2): no new packets (each receive thread first takes what
  // its socket holds), then every queued packet through its pipeline, then the pipelines' pending
  // events out, then Kafka deliveries, then the final report.
  threads.stop();
}

void stop_stats_and_flush(StatsPublisher& publisher, Outputs& outputs, double flush_timeout_s) {
  publisher.stop();
  const auto flush_timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(flush_timeout_s * 1000));
  std::uint64_t undelivered = outputs.flush(flush_timeout);
  // One last status with the final counters (the publisher thread has ended: this thread is
  // now the only one touching the outputs).
  publisher.publish_now();
  undelivered += outputs.flush(std::chrono::milliseconds(
      std::min<std::int64_t>(1000, static_cast<std::int64_t>(flush_timeout_s * 1000))));
  if (undelivered != 0) {
    spdlog::warn("kafka: {} message(s) not delivered within --flush-timeout {} s, purged",
                 undelivered, flush_timeout_s);
  }
}

}  // namespace efu
