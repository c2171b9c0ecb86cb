#include "ops/service_notify.h"

#include <cstring>

#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>

namespace efu {

void notify_service_manager(const std::string& state) {
  // 0 = no $NOTIFY_SOCKET (not under systemd), > 0 = sent.
  if (const int rc = sd_notify(0, state.c_str()); rc < 0) {
    spdlog::warn("systemd: cannot send '{}': {}", state, std::strerror(-rc));
  }
}

}  // namespace efu
