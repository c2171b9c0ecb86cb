// The message of the ConfigError a callable throws, for tests of one-line error messages.
#pragma once

#include <string>

#include "efu/errors.h"

namespace efu::test {

/// "" if `f` throws no ConfigError.
template <typename F>
std::string config_error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace efu::test
