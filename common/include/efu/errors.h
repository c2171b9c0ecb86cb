// Errors that end start-up with exit code 2.
#pragma once

#include <stdexcept>
#include <string>

namespace efu {

/// A bad option, config key, geometry file or plugin. The message is one line that names the bad
/// value and says what was expected, e.g. "--port: '70000' is out of range; expected 1..65535".
/// Plugin factories throw it from their constructor; the host prints it and exits with code 2.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(const std::string& message);
  ~ConfigError() override;  // out of line: one type_info shared by host and plugins
};

/// Inside a catch block: what the exception being handled says (its what(), or "an exception of
/// unknown type" for one that is not a std::exception), for one-line reports.
std::string current_exception_text();

/// Exit code for configuration and start-up errors.
inline constexpr int kExitConfigError = 2;

}  // namespace efu
