#include "efu/errors.h"

namespace efu {

ConfigError::ConfigError(const std::string& message) : std::runtime_error(message) {}
ConfigError::~ConfigError() = default;

std::string current_exception_text() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception of unknown type";
  }
}

}  // namespace efu
