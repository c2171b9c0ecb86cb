// Runs a shell command for the tests, bounded by `timeout`, and captures its output.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace efu::udp::test {

struct CommandResult {
  int exit_code = -1;  // -1 if it did not exit normally
  std::string output;  // stdout and stderr, interleaved
};

inline std::string build_dir() {
  const char* dir = std::getenv("EFU_BUILD_DIR");
  return dir != nullptr ? dir : ".";
}

inline std::string udpgen_path() { return build_dir() + "/bin/efu-udpgen"; }

/// Opens `command` (run under `timeout 30`) for reading; close with finish_command().
inline FILE* start_command(const std::string& command) {
  return popen(("timeout 30 " + command + " 2>&1").c_str(), "r");
}

inline CommandResult finish_command(FILE* pipe) {
  CommandResult r;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) r.output.append(buffer, n);
  const int status = pclose(pipe);
  if (status != -1 && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

inline CommandResult run_command(const std::string& command) {
  return finish_command(start_command(command));
}

}  // namespace efu::udp::test
