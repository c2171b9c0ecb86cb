// How much memory efu may use, for the start-up check of the packet pools (docs/architecture.md
// §3.8): a ring and thread count whose pool does not fit must end start-up with one line, not
// with std::bad_alloc, nor later with the OOM killer once a backlog touches the pages.
#pragma once

#include <cstdint>
#include <string>

namespace efu {

struct MemoryBudget {
  std::uint64_t bytes = 0;  // 0: unknown (no limit is checked)
  std::string source;       // what set it: "MemAvailable", "cgroup memory.max", "RLIMIT_AS"
};

/// The smallest of: the host's MemAvailable (/proc/meminfo), the room left under this process's
/// cgroup v2 memory.max, and RLIMIT_AS minus what the process already maps.
MemoryBudget available_memory();

/// "605.3 GB", "37.6 MB", "812 B" (decimal units, as free -H and the sysctls use).
std::string format_bytes(std::uint64_t bytes);

}  // namespace efu
