// CPU accounting (docs/architecture.md §4.3, §9: measure CPU as well as loss): per-thread
// user/system time from /proc/self/task/<tid>/stat and the host's softirq/system share from
// /proc/stat.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "efu/outputs.h"

namespace efu {

/// Cumulative user and system time of one thread, in clock ticks (USER_HZ).
struct ThreadTimes {
  std::uint64_t user = 0;
  std::uint64_t system = 0;
};

/// Reads utime/stime of thread `tid` of this process. False if the thread is gone.
bool read_thread_times(int tid, ThreadTimes& out);

/// The aggregate "cpu" line of /proc/stat, in clock ticks.
struct HostTimes {
  std::uint64_t total = 0;
  std::uint64_t system = 0;
  std::uint64_t softirq = 0;
};
bool read_host_times(HostTimes& out);

/// Turns successive readings into percentages over each interval.
class CpuSampler {
 public:
  void add_thread(std::string name, int tid);
  /// Fills the per-thread and host shares since the previous call (the first call measures
  /// from when the thread was added).
  void sample(double interval_s, StatsSnapshot& out);

 private:
  struct Tracked {
    std::string name;
    int tid;
    ThreadTimes last;
  };
  std::vector<Tracked> threads_;
  HostTimes last_host_{};
  bool have_host_ = false;
};

}  // namespace efu
