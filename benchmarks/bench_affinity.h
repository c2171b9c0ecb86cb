// CPU pinning for the benchmarks: core numbers from an environment variable, and a guard that
// gives the benchmark thread its affinity back so that the next run starts equal.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace efu::bench {

/// `count` comma-separated core numbers from the variable `name`; all -1 (not pinned) when it is
/// unset or empty. Exits with code 2 on anything else, naming the variable and an example.
inline std::vector<int> cpus_from_env(const char* name, std::size_t count, const char* example) {
  std::vector<int> cpus(count, -1);
  const char* env = std::getenv(name);
  if (env == nullptr || *env == '\0') return cpus;
  std::string text = env;
  std::size_t pos = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t end = text.find(',', pos);
    const std::string item = text.substr(pos, end == std::string::npos ? end : end - pos);
    char* stop = nullptr;
    const long cpu = std::strtol(item.c_str(), &stop, 10);
    const bool last = i + 1 == count;
    if (item.empty() || *stop != '\0' || cpu < 0 || (last != (end == std::string::npos))) {
      std::fprintf(stderr, "%s='%s': expected %zu CPU numbers like %s\n", name, env, count,
                   example);
      std::exit(2);
    }
    cpus[i] = static_cast<int>(cpu);
    pos = end + 1;
  }
  return cpus;
}

inline void pin_current_thread(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

class AffinityGuard {
 public:
  AffinityGuard() { pthread_getaffinity_np(pthread_self(), sizeof(saved_), &saved_); }
  ~AffinityGuard() { pthread_setaffinity_np(pthread_self(), sizeof(saved_), &saved_); }
  AffinityGuard(const AffinityGuard&) = delete;
  AffinityGuard& operator=(const AffinityGuard&) = delete;

 private:
  cpu_set_t saved_{};
};

}  // namespace efu::bench
