// The reference system's own files (the ESS event-formation-unit at its pinned snapshot), for
// the tests that load the facility's files unchanged: read from its bare git directory
// (EFU_REFERENCE_GIT_DIR, default the project's mirror). Without it on this machine the text is
// "", and those tests skip.
#pragma once

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace efu::test {

inline std::string reference_git_dir() {
  const char* env = std::getenv("EFU_REFERENCE_GIT_DIR");
  return env != nullptr ? env : "/work/.mirror/ess-dmsc+event-formation-unit/repo";
}

/// The file at `path` (from the repository's root) at the reference's HEAD, or "" when the
/// mirror is absent or has no such file.
inline std::string reference_file(const std::string& path) {
  const std::string git = reference_git_dir();
  struct stat st {};
  if (stat(git.c_str(), &st) != 0) return "";
  const std::string command = "git --git-dir='" + git + "' show HEAD:" + path + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  std::string text;
  char buffer[4096];
  for (std::size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) text.append(buffer, n);
  pclose(pipe);
  return text;
}

}  // namespace efu::test
