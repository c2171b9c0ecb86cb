#include "ops/stats_publisher.h"

#include <cstdio>

#include <spdlog/spdlog.h>

#include "startup/threads.h"

namespace efu {
namespace {

constexpr auto kPollPeriod = std::chrono::milliseconds(100);

std::string human(double v) {
  char buf[32];
  if (v >= 1e9)
    std::snprintf(buf, sizeof(buf), "%.2fG", v / 1e9);
  else if (v >= 1e6)
    std::snprintf(buf, sizeof(buf), "%.2fM", v / 1e6);
  else if (v >= 1e4)
    std::snprintf(buf, sizeof(buf), "%.1fk", v / 1e3);
  else
    std::snprintf(buf, sizeof(buf), "%.0f", v);
  return buf;
}

}  // namespace

std::string format_stats_line(const StatsSnapshot& s) {
  std::string line;
  for (const RateSample& c : s.counters) {
    if (c.value == 0) continue;
    if (!line.empty()) line += ' ';
    line += c.name + '=' + human(static_cast<double>(c.value));
    if (c.kind == CounterKind::kCounter && c.rate_per_s > 0) {
      line += '(' + human(c.rate_per_s) + "/s)";
    }
  }
  if (line.empty()) line = "no activity";
  if (!s.threads.empty()) {
    line += " | cpu";
    for (const ThreadCpu& t : s.threads) {
      char buf[96];
      std::snprintf(buf, sizeof(buf), " %s=%.0fu/%.0fs%%", t.name.c_str(), t.user_pct,
                    t.system_pct);
      line += buf;
    }
    char buf[64];
    std::snprintf(buf, sizeof(buf), " host.softirq=%.1f%%", s.host_softirq_pct);
    line += buf;
  }
  return line;
}

bool is_loss_counter(const std::string& name) {
  for (const char* word : {"dropped", "errors", "failed", "truncated"}) {
    const std::string w = word;
    for (std::size_t pos = name.find(w); pos != std::string::npos; pos = name.find(w, pos + 1)) {
      const bool starts = pos == 0 || name[pos - 1] == '.';
      const bool ends = pos + w.size() == name.size() || name[pos + w.size()] == '.';
      if (starts && ends) return true;
    }
  }
  return false;
}

void LossWarningSink::publish(const StatsSnapshot& snapshot) {
  for (const RateSample& c : snapshot.counters) {
    if (c.kind != CounterKind::kCounter || !is_loss_counter(c.name)) continue;
    Watch& w = watches_[c.name];
    if (c.value <= w.reported) continue;
    if (!w.limiter.allow()) continue;
    spdlog::warn("{}: +{} since the last warning (total {})", c.name, c.value - w.reported,
                 c.value);
    w.reported = c.value;
  }
}

void LogStatsSink::publish(const StatsSnapshot& snapshot) {
  spdlog::info("stats: {}", format_stats_line(snapshot));
}

StatsPublisher::StatsPublisher(CounterRegistry& counters, std::chrono::milliseconds interval)
    : counters_(counters), interval_(interval), last_time_(std::chrono::steady_clock::now()) {}

StatsPublisher::~StatsPublisher() { stop(); }

StatsSnapshot StatsPublisher::publish_now() {
  for (auto& update : updaters_) update();
  const auto now = std::chrono::steady_clock::now();
  StatsSnapshot s;
  s.time_ns = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                             std::chrono::system_clock::now().time_since_epoch())
                                             .count());
  s.interval_s = std::chrono::duration<double>(now - last_time_).count();
  last_time_ = now;
  s.host_softirq_pct = 0;
  s.host_system_pct = 0;
  for (CounterSample& c : counters_.sample()) {
    double rate = 0;
    if (c.kind == CounterKind::kCounter && s.interval_s > 0) {
      const std::uint64_t prev = last_values_[c.name];
      rate = static_cast<double>(c.value - prev) / s.interval_s;
      last_values_[c.name] = c.value;
    }
    s.counters.push_back(RateSample{std::move(c.name), c.kind, c.value, rate});
  }
  cpu_.sample(s.interval_s, s);
  for (StatsSink* sink : sinks_) sink->publish(s);
  return s;
}

void StatsPublisher::start(int core) {
  thread_ = std::thread([this, core] { run(core); });
}

void StatsPublisher::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StatsPublisher::run(int core) {
  set_thread_name("efu-stats");
  if (core >= 0) {
    if (const std::string err = pin_thread(core); !err.empty()) {
      spdlog::warn("stats: cannot pin to core {}: {}", core, err);
    }
  }
  auto next_sample = std::chrono::steady_clock::now() + interval_;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const auto wake_at = std::min(next_sample, std::chrono::steady_clock::now() + kPollPeriod);
    wake_.wait_until(lock, wake_at, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    if (poll_) poll_();
    if (std::chrono::steady_clock::now() >= next_sample) {
      publish_now();
      next_sample += interval_;
      // After a long stall, do not try to catch up with a burst of samples.
      if (next_sample < std::chrono::steady_clock::now()) {
        next_sample = std::chrono::steady_clock::now() + interval_;
      }
    }
    lock.lock();
  }
  lock.unlock();
  if (poll_) poll_();
  publish_now();
}

}  // namespace efu
