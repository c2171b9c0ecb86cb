#include "startup/threads.h"

#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "efu/errors.h"

namespace efu {
namespace {

std::string allowed_cores_text(const cpu_set_t& set) {
  std::string out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    int last = c;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    if (!out.empty()) out += ",";
    out += std::to_string(c);
    if (last > c) out += "-" + std::to_string(last);
    c = last;
  }
  return out;
}

int parse_core(std::string_view text, const std::string& whole, const cpu_set_t& allowed) {
  int core = -1;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), core);
  if (ec != std::errc() || ptr != text.data() + text.size() || core < 0) {
    throw ConfigError("--cpu: '" + whole + "' has core '" + std::string(text) +
                      "'; expected rx=N[,N2...],proc=M[,M2...] with core numbers");
  }
  if (core >= CPU_SETSIZE || !CPU_ISSET(core, &allowed)) {
    throw ConfigError("--cpu: core " + std::to_string(core) +
                      " is not available; expected one of " + allowed_cores_text(allowed));
  }
  return core;
}

}  // namespace

CpuPlan parse_cpu_plan(const std::string& text) {
  CpuPlan plan;
  if (text.empty()) return plan;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    throw ConfigError(std::string("--cpu: cannot read this process's CPU set: ") +
                      std::strerror(errno));
  }
  // Grammar: role=core[,core...][,role=core...]; a bare core continues the previous role's list.
  std::string_view rest = text;
  std::string role;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const auto eq = item.find('=');
    if (eq != std::string_view::npos) {
      role = std::string(item.substr(0, eq));
      item = item.substr(eq + 1);
    }
    if (role == "rx") {
      plan.rx.push_back(parse_core(item, text, allowed));
    } else if (role == "proc") {
      plan.proc.push_back(parse_core(item, text, allowed));
    } else {
      throw ConfigError("--cpu: '" + text + "' has role '" + role +
                        "'; expected rx=N[,N2...],proc=M[,M2...]");
    }
  }
  return plan;
}

void set_thread_name(const std::string& name) {
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
}

std::string pin_thread(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  return rc == 0 ? "" : std::strerror(rc);
}

int current_tid() { return static_cast<int>(syscall(SYS_gettid)); }

}  // namespace efu
