// Thread naming, CPU pinning and the --cpu option (docs/architecture.md §3.7).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace efu {

/// Parsed --cpu rx=A[,B...],proc=M[,M2...]: one core per receive thread and one per processing
/// thread. Empty vectors mean "not pinned".
struct CpuPlan {
  std::vector<int> rx;
  std::vector<int> proc;
};

/// Parses and validates the --cpu text against the cores this process may use. Throws
/// ConfigError naming the bad part ("--cpu: core 7 is not available; expected one of 0-1").
CpuPlan parse_cpu_plan(const std::string& text);

/// Names the calling thread (shown by top -H; at most 15 characters are kept).
void set_thread_name(const std::string& name);

/// Pins the calling thread to `core`. Returns an error text, empty on success.
std::string pin_thread(int core);

/// The kernel thread id of the calling thread.
int current_tid();

}  // namespace efu
