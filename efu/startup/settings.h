// The host's settings for one run: the parsed options checked and turned into the configs of
// the parts they steer (docs/architecture.md §8.1; errors as docs/architecture.md §7.3 says).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "efu/options.h"
#include "efu/outputs.h"
#include "efu/plugin.h"
#include "ops/operator_interfaces.h"
#include "process/processor.h"
#include "receive/af_xdp/xdp_receiver.h"
#include "receive/af_xdp/xdp_socket.h"
#include "receive/receiver.h"
#include "receive/udp_socket.h"
#include "startup/threads.h"

namespace efu {

/// A default here, or in a config it holds, is the default of the option that fills it: the
/// option table (host_options.cpp) takes its default text from a default-constructed
/// HostSettings, so the value is written once. The option text alone holds the default of a
/// named choice (--wait-policy, --xdp-mode, --xdp-bind-mode) and of --xdp-in-place (on; the
/// config's own default, off, is for its other users).
struct HostSettings {
  UdpSocketConfig socket;
  ReceiverConfig receiver;
  bool af_xdp = false;  // --receive-backend af_xdp
  xdp::XdpSocketConfig xdp;
  xdp::XdpReceiverConfig xdp_receiver;
  OutputSettings outputs;
  unsigned threads = outputs.threads;  // --processing-threads
  unsigned receive_threads = 1;
  WaitPolicy wait_policy = WaitPolicy::kAdaptive;
  std::size_t ring_size = 4096;
  CpuPlan cpu;
  std::chrono::milliseconds stats_interval{outputs.stats_interval_ms};
  std::string stats_json;
  double stop_after_s = 0;
  double flush_timeout_s = 5;
  OperatorSettings ops;
};

/// Reads and checks every host option, in the order of the option groups: receive socket and
/// receiver, af_xdp, threads and cores, run control and log level, outputs, operator interfaces.
/// Sets spdlog's level. Throws ConfigError with one line naming the first bad option.
HostSettings read_settings(const OptionValues& values, const PluginDescriptor& plugin);

}  // namespace efu
