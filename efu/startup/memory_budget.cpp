#include "startup/memory_budget.h"

#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace efu {
namespace {

/// A "Key: N kB" line of a /proc status file, in bytes; 0 if absent.
std::uint64_t proc_kb_field(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    std::uint64_t kb = 0;
    fields >> kb;
    return kb * 1024;
  }
  return 0;
}

/// A cgroup v2 file of this process's cgroup as a number; 0 if absent or "max".
std::uint64_t cgroup_value(const std::string& file) {
  std::ifstream self("/proc/self/cgroup");
  std::string line;
  std::string path;
  while (std::getline(self, line)) {
    if (line.rfind("0::", 0) == 0) path = line.substr(3);
  }
  if (path.empty()) return 0;
  std::ifstream in("/sys/fs/cgroup" + (path == "/" ? std::string() : path) + "/" + file);
  std::string text;
  if (!(in >> text) || text == "max") return 0;
  try {
    return std::stoull(text);
  } catch (...) {
    return 0;
  }
}

void take_smaller(MemoryBudget& budget, std::uint64_t bytes, const char* source) {
  if (bytes != 0 && (budget.bytes == 0 || bytes < budget.bytes)) {
    budget.bytes = bytes;
    budget.source = source;
  }
}

}  // namespace

MemoryBudget available_memory() {
  MemoryBudget budget;
  take_smaller(budget, proc_kb_field("/proc/meminfo", "MemAvailable"), "MemAvailable");
  if (const std::uint64_t max = cgroup_value("memory.max"); max != 0) {
    const std::uint64_t used = cgroup_value("memory.current");
    take_smaller(budget, max > used ? max - used : 1, "cgroup memory.max");
  }
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    const std::uint64_t mapped = proc_kb_field("/proc/self/status", "VmSize");
    take_smaller(budget, as.rlim_cur > mapped ? as.rlim_cur - mapped : 1, "RLIMIT_AS");
  }
  return budget;
}

std::string format_bytes(std::uint64_t bytes) {
  char buf[32];
  const double b = static_cast<double>(bytes);
  if (b >= 1e9)
    std::snprintf(buf, sizeof buf, "%.1f GB", b / 1e9);
  else if (b >= 1e6)
    std::snprintf(buf, sizeof buf, "%.1f MB", b / 1e6);
  else if (b >= 1e3)
    std::snprintf(buf, sizeof buf, "%.1f kB", b / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  return buf;
}

}  // namespace efu
