#include "efu/errors.h"

namespace efu {

ConfigError::ConfigError(const std::string& message) : std::runtime_error(message) {}
ConfigError::~ConfigError() = default;

}  // namespace efu
