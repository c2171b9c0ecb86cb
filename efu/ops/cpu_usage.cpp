#include "ops/cpu_usage.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace efu {

bool read_thread_times(int tid, ThreadTimes& out) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  // The command name (field 2) is in parentheses and may contain spaces: parse after the last ')'.
  const auto close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(line.substr(close + 2));
  std::string skip;
  // Fields 3..13 precede utime (14) and stime (15).
  for (int i = 3; i <= 13; ++i) fields >> skip;
  fields >> out.user >> out.system;
  return static_cast<bool>(fields);
}

bool read_host_times(HostTimes& out) {
  std::ifstream in("/proc/stat");
  std::string cpu;
  std::uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
                steal = 0;
  in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  if (!in || cpu != "cpu") return false;
  out.total = user + nice + system + idle + iowait + irq + softirq + steal;
  out.system = system;
  out.softirq = softirq;
  return true;
}

void CpuSampler::add_thread(std::string name, int tid) {
  Tracked t{std::move(name), tid, {}};
  read_thread_times(tid, t.last);
  threads_.push_back(std::move(t));
}

void CpuSampler::sample(double interval_s, StatsSnapshot& out) {
  static const double ticks_per_s = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double ticks = interval_s * ticks_per_s;
  for (Tracked& t : threads_) {
    ThreadTimes now;
    if (!read_thread_times(t.tid, now)) continue;
    const double user = ticks > 0 ? 100.0 * static_cast<double>(now.user - t.last.user) / ticks : 0;
    const double sys =
        ticks > 0 ? 100.0 * static_cast<double>(now.system - t.last.system) / ticks : 0;
    out.threads.push_back(ThreadCpu{t.name, user, sys});
    t.last = now;
  }
  HostTimes host;
  if (read_host_times(host)) {
    if (have_host_ && host.total > last_host_.total) {
      const double total = static_cast<double>(host.total - last_host_.total);
      out.host_softirq_pct = 100.0 * static_cast<double>(host.softirq - last_host_.softirq) / total;
      out.host_system_pct = 100.0 * static_cast<double>(host.system - last_host_.system) / total;
    }
    last_host_ = host;
    have_host_ = true;
  }
}

}  // namespace efu
