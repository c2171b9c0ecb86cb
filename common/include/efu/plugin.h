// The plugin contract: everything a detector plugin sees of the host (docs/architecture.md §2).
//
// A plugin is a shared object exporting one extern "C" function, efu_plugin_entry(), that returns
// a PluginDescriptor. The host owns every socket, thread, ring and producer; it runs the
// plugin's init() once, creates one Pipeline per processing thread and calls it with batches of
// received packets.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "efu/counters.h"
#include "efu/errors.h"
#include "efu/options.h"

namespace efu {

/// Bumped whenever anything in this header (or the headers it includes) changes layout.
/// v2: PacketView carries the sender (PacketSource); route_key takes the PacketView, noexcept.
/// v3: PluginDescriptor::uses_source.
/// v4: PluginDescriptor::init and release, PipelineContext::shared (state loaded once per
///     plugin); uses_source defaults to false.
/// v5: EventSink::add_pulse (a run of one pulse's events in one call; efu/event_buffer.h).
/// v6: several sources per process: PipelineContext::sources (SourceOutputs), da00 histograms
///     (HistogramSink, DataArrayView).
inline constexpr std::uint32_t kPluginAbiVersion = 6;

/// The sender of a datagram: its IPv4 or IPv6 address and UDP port, as the kernel reported it
/// (recvmmsg's msg_name) or as the af_xdp backend parsed it from the frame. The family is
/// AF_UNSPEC when the sender is unknown (e.g. a PacketView built by a test).
struct PacketSource {
  union {
    sockaddr sa;
    sockaddr_in v4;   // when family() == AF_INET
    sockaddr_in6 v6;  // when family() == AF_INET6
  };

  sa_family_t family() const noexcept { return sa.sa_family; }
  /// The UDP source port in host byte order (0 when unknown).
  std::uint16_t port() const noexcept {
    if (family() == AF_INET) return ntohs(v4.sin_port);
    if (family() == AF_INET6) return ntohs(v6.sin6_port);
    return 0;
  }
  /// A cheap hash of address and port, equal for every datagram of one flow: for route_key
  /// functions that keep each sender on one processing thread.
  std::uint32_t flow_hash() const noexcept {
    std::uint32_t h = 0;
    if (family() == AF_INET) {
      std::memcpy(&h, &v4.sin_addr, sizeof h);
    } else if (family() == AF_INET6) {
      for (unsigned i = 0; i < 16; i += 4) {
        std::uint32_t w = 0;
        std::memcpy(&w, v6.sin6_addr.s6_addr + i, sizeof w);
        h = (h ^ w) * 0x9E3779B1U;
      }
    }
    h ^= port();
    h *= 0x85EBCA6BU;  // mix, so flows that differ only in low bits spread over threads
    return h ^ (h >> 15);
  }
};

/// The sender of PacketViews whose sender is unknown (family AF_UNSPEC).
inline const PacketSource kUnknownSource{};

/// One received datagram. `data` and `source` stay valid until process() returns. The host
/// guarantees 1 <= size <= the configured maximum datagram size, that the datagram was not
/// truncated, and that `source` is never null (it is the unknown sender, AF_UNSPEC, when the
/// plugin's descriptor says uses_source = false).
struct PacketView {
  const std::uint8_t* data;
  std::uint32_t size;
  const PacketSource* source = &kUnknownSource;
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
  /// `n` events of one pulse, in order: the same as add(pulse_time_ns, time_of_flight_ns[i],
  /// pixel_id[i]) for i = 0 .. n-1, in one call. The host's sinks copy the run into the message
  /// as a block, so a pipeline that collects its events per pulse (efu/event_buffer.h) pays one
  /// virtual call and one counter update per run instead of per event. Hot path: no allocation.
  virtual void add_pulse(std::uint64_t pulse_time_ns, const std::uint32_t* time_of_flight_ns,
                         const std::uint32_t* pixel_id, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) add(pulse_time_ns, time_of_flight_ns[i], pixel_id[i]);
  }
};

/// The element type of a da00 variable: the values of the da00 schema's `da00_dtype` enum
/// (schemas/da00_dataarray.fbs), so the host copies it into the message unchanged.
enum class Da00Type : std::int8_t {
  none = 0,
  int8 = 1,
  uint8 = 2,
  int16 = 3,
  uint16 = 4,
  int32 = 5,
  uint32 = 6,
  int64 = 7,
  uint64 = 8,
  float32 = 9,
  float64 = 10,
};

/// One da00 variable as the plugin holds it: names, shape and a C-ordered array that the host
/// copies into the message. Every pointer stays valid only during HistogramSink::publish().
struct Da00Variable {
  const char* name;  // "frame_time", "signal", ...
  const char* unit;  // "ns", "counts", ... (null: none)
  std::span<const char* const> axes;
  std::span<const std::int64_t> shape;
  Da00Type type;
  const void* data;   // the product of `shape` elements of `type`
  std::size_t bytes;  // size of `data` in bytes
};

/// One da00 message without its source name (the sink knows it).
struct DataArrayView {
  std::uint64_t timestamp_ns;  // ns since the Unix epoch
  std::span<const Da00Variable> variables;
};

/// Where a pipeline puts the da00 histograms of one source. The host serialises each view into
/// a message sized once (so publishing allocates nothing after the first message of a size)
/// and queues it to the events topic under the source's name; a message that cannot be queued
/// is counted ("da00.messages.dropped"). Called from the pipeline's thread, typically on a
/// pulse change: one message per call, so not per readout.
class HistogramSink {
 public:
  virtual ~HistogramSink() = default;
  virtual void publish(const DataArrayView& array) = 0;
};

/// The named outputs of one processing thread, for a plugin that publishes several sources
/// (one per beam monitor, one per BIFROST triplet). Call only from the plugin's create(): each
/// call with a new name creates the source's sink for this thread; a name asked for again
/// returns the same sink. Every thread that asks for one name writes one stream: the same Kafka
/// key, message ids consecutive per source across threads (docs/architecture.md §6).
class SourceOutputs {
 public:
  virtual ~SourceOutputs() = default;
  /// The ev44 stream of source `name` (the host's own source, --source, is context.events).
  virtual EventSink& events(std::string_view name) = 0;
  /// The da00 stream of source `name`.
  virtual HistogramSink& histograms(std::string_view name) = 0;
};

/// What a plugin's factory receives. References stay valid for the pipeline's lifetime.
struct PipelineContext {
  const OptionValues& options;  // values of the plugin's declared options (and the host's)
  CounterRegistry& counters;    // register counters here, in the constructor only
  EventSink& events;
  unsigned instance;   // processing thread index, 0 .. instances-1
  unsigned instances;  // number of processing threads
  /// What the descriptor's init() returned: the state every instance shares read-only (null
  /// when the plugin has no init, or when a caller such as a fuzz driver did not run it). It
  /// outlives every pipeline: the host releases it after the last one is destroyed.
  const void* shared = nullptr;
  /// The thread's named sources (null when a caller such as a fuzz driver gives none: then use
  /// event_source() and histogram_source(), which fall back to `events` and a sink that
  /// discards).
  SourceOutputs* sources = nullptr;
};

/// The ev44 sink of source `name`: context.sources->events(name), or context.events when the
/// caller gave no SourceOutputs.
inline EventSink& event_source(const PipelineContext& context, std::string_view name) {
  return context.sources != nullptr ? context.sources->events(name) : context.events;
}

/// A HistogramSink that drops every array (for callers without SourceOutputs).
class DiscardingHistogramSink final : public HistogramSink {
 public:
  void publish(const DataArrayView&) override {}
};

/// The da00 sink of source `name`: context.sources->histograms(name), or a sink that discards
/// when the caller gave no SourceOutputs.
inline HistogramSink& histogram_source(const PipelineContext& context, std::string_view name) {
  static DiscardingHistogramSink discard;
  return context.sources != nullptr ? context.sources->histograms(name) : discard;
}

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
  /// Creates one pipeline, once per processing thread, after init(). May throw ConfigError for
  /// bad option values or config files.
  Pipeline* (*create)(const PipelineContext& context);
  /// Optional (may be null): the key that routes a packet to a processing thread
  /// (key % instances). Packets with the same key stay in order on one thread. Called by the
  /// receive thread for each packet, with size >= 1; it must be cheap and cannot throw.
  std::uint32_t (*route_key)(const PacketView& packet) noexcept;
  /// Whether process() or route_key read PacketView::source. Asking the kernel for each
  /// datagram's sender costs 5-14 % of the socket backend's receive path per datagram
  /// (benchmarks/results/receive/), so it is opt-in: a plugin that reads the sender (the udp
  /// instrument tells flows apart by it) sets true. Without it every source is the unknown
  /// sender, as for a detector whose readouts say where they come from. Default: false.
  bool uses_source = false;
  /// Optional (null: nothing shared): loads what every processing thread's pipeline only reads
  /// (instrument config, calibration, lookup tables), once, before the first create(). The host
  /// passes the result to every create() as PipelineContext::shared and hands it to release()
  /// after the last pipeline is destroyed. May throw ConfigError for bad options or files.
  void* (*init)(const OptionValues& options) = nullptr;
  /// Frees what init() returned. Required with init (efu::release_shared<T> deletes a T).
  void (*release)(void* shared) = nullptr;
};

/// The release() of a plugin whose init() returns `new T`.
template <typename T>
void release_shared(void* shared) {
  delete static_cast<T*>(shared);
}

/// The shared state of a pipeline's context as the T that init() made; null when init() did
/// not run (see PipelineContext::shared).
template <typename T>
const T* shared_state(const PipelineContext& context) noexcept {
  return static_cast<const T*>(context.shared);
}

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
