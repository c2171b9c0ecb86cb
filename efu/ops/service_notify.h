// Readiness and stop notifications to systemd (Type=notify units, packaging/efu@.service).
#pragma once

#include <string>

namespace efu {

/// Sends `state` ("READY=1", "STOPPING=1", "STATUS=...") to the service manager when efu runs
/// under one ($NOTIFY_SOCKET set); does nothing otherwise.
void notify_service_manager(const std::string& state);

}  // namespace efu
