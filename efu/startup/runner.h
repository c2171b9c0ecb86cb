// The efu process lifecycle: options -> plugin -> outputs -> pipelines -> threads -> graceful stop.
#pragma once

namespace efu {

/// Runs efu with this command line and returns the exit code: 0 after a graceful stop (signal or
/// --stop-after), 2 for a configuration or start-up error (one line on stderr).
int run_efu(int argc, const char* const* argv);

}  // namespace efu
