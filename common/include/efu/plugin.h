// The plugin contract: everything a detector plugin sees of the host (design.md §2).
//
// A plugin is a shared object exporting one extern "C" function, efu_plugin_entry(), that returns
// a PluginDescriptor. The host owns every socket, thread, ring and producer; it creates one
// Pipeline per processing thread and calls it with batches of received packets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "efu/counters.h"
#include "efu/errors.h"
#include "efu/options.h"

namespace efu {

/// Bumped whenever anything in this header (or the headers it includes) changes layout.
inline constexpr std::uint32_t kPluginAbiVersion = 1;

/// One received datagram. `data` stays valid until process() returns. The host guarantees
/// 1 <= size <= the configured maximum datagram size and that the datagram was not truncated.
struct PacketView {
  const std::uint8_t* data;
  std::uint32_t size;
};

using PacketBatch = std::span<const PacketView>;

/// Where a pipeline puts neutron events. The host provides one per processing thread (ev44 to
/// Kafka, or a counting sink with --broker none). add() is on the hot path: it does not allocate.
class EventSink {
 public:
  virtual ~EventSink() = default;
  /// One event: `pulse_time_ns` is the reference (pulse) time in ns since the Unix epoch; events
  /// with the same pulse time share one ev44 reference_time entry. `time_of_flight_ns` is
  /// relative to that pulse.
  virtual void add(std::uint64_t pulse_time_ns, std::uint32_t time_of_flight_ns,
                   std::uint32_t pixel_id) = 0;
};

/// What a plugin's factory receives. References stay valid for the pipeline's lifetime.
struct PipelineContext {
  const OptionValues& options;  // values of the plugin's declared options (and the host's)
  CounterRegistry& counters;    // register counters here, in the constructor only
  EventSink& events;
  unsigned instance;   // processing thread index, 0 .. instances-1
  unsigned instances;  // number of processing threads
};

/// The detector-specific stages. All calls come from one processing thread.
class Pipeline {
 public:
  virtual ~Pipeline() = default;
  /// Parse, map, cluster and form events for a batch of packets. Hot path: no allocation, no
  /// lock, no log line, no syscall. Bad data is counted and skipped, never thrown.
  virtual void process(PacketBatch batch) = 0;
  /// Called about every 10 ms, also when no packets arrive: time-based flushes.
  virtual void tick(std::uint64_t now_ns) { (void)now_ns; }
  /// Called once at stop after the last process(): emit what is still pending.
  virtual void flush() {}
};

struct PluginDescriptor {
  std::uint32_t abi_version;  // kPluginAbiVersion of the headers the plugin was built with
  const char* name;           // "udp", "multiblade"
  const char* version;        // the plugin's own version
  const char* summary;        // one line for --list-modules
  const OptionSpec* options;  // declared options; names must not clash with the host's
  std::size_t option_count;
  /// Creates one pipeline. May throw ConfigError for bad option values or config files.
  Pipeline* (*create)(const PipelineContext& context);
  /// Optional (may be null): the key that routes a packet to a processing thread
  /// (key % instances). Packets with the same key stay in order on one thread. Called by the
  /// receiver for each packet, with size >= 1; it must be cheap and must not throw.
  std::uint32_t (*route_key)(const std::uint8_t* data, std::uint32_t size);
};

}  // namespace efu

/// The name of the entry symbol, for dlsym().
#define EFU_PLUGIN_ENTRY_SYMBOL "efu_plugin_entry"

/// Defines the entry symbol. Use once per plugin, at namespace scope:
///   EFU_PLUGIN(kDescriptor)
#define EFU_PLUGIN(descriptor)                                                    \
  extern "C" __attribute__((visibility("default"))) const efu::PluginDescriptor* \
  efu_plugin_entry() {                                                            \
    return &(descriptor);                                                         \
  }
