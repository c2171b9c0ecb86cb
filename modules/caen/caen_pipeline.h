// The caen Pipeline: ESS header → CAEN readouts → charge division → pixel → events. Each
// readout is one neutron candidate, so there is no clustering and nothing waits for tick().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "calibration.h"
#include "config.h"
#include "efu/ess/readout_header.h"
#include "efu/event_buffer.h"
#include "efu/options.h"
#include "efu/plugin.h"
#include "pixel_map.h"
#include "readout_parser.h"

namespace efu::caen {

struct CaenSettings {
  std::string geometry_path;     // the instrument config
  std::string calibration_path;  // empty: the shipped calibration of the configured instrument
  std::int64_t amplitude_threshold = 0;
};

/// The plugin's option table (plugin.cpp exports it; tests use it to build OptionValues).
extern const OptionSpec kOptions[];
extern const std::size_t kOptionCount;

/// Reads and range-checks the plugin options; throws ConfigError naming the bad option
/// (`--calibration off` among them: charge division cannot run without a calibration).
CaenSettings settings_from_options(const OptionValues& options);

/// A file shipped with the plugin (configs/<name>): the source tree copy, else the installed one.
std::string shipped_config(const std::string& name);
/// The shipped LoKI config, the default --geometry.
std::string default_geometry_path();
/// The shipped calibration for `instrument`, the default --calibration.
std::string default_calibration_path(Instrument instrument);

/// Loads the config and calibration named by `settings` (the calibration's default follows the
/// config's instrument).
struct LoadedInstrument {
  CaenConfig config;
  Calibration calibration;
};
LoadedInstrument load_instrument(const CaenSettings& settings);

/// What every processing thread's pipeline reads and none writes: the instrument and its pixel
/// map (whose constructor checks that config and calibration fit together). The plugin's init()
/// loads it once (load_shared); the pipelines hold a reference.
struct CaenShared {
  CaenShared(LoadedInstrument loaded, std::int64_t amplitude_threshold);
  LoadedInstrument instrument;
  PixelMap pixels;
};
std::unique_ptr<CaenShared> load_shared(const CaenSettings& settings);

/// The ev44 sink of each of the instrument's sources, by source index (MapResult::source,
/// source_count() of them): BIFROST's per-triplet sources asked of the host by name
/// (efu::event_source, bifrost_source_name), once each; the other instruments' one source, the
/// host's own (context.events). For the plugin's create().
std::vector<EventSink*> event_sinks(const CaenConfig& config, const PipelineContext& context);

class CaenPipeline final : public Pipeline {
 public:
  /// A pipeline on the state the plugin loaded once for every processing thread; `sinks` has
  /// one sink per source (event_sinks()), else std::invalid_argument.
  CaenPipeline(const CaenShared& shared, CounterRegistry& counters,
               std::span<EventSink* const> sinks);
  /// A pipeline with a pixel map of its own (a create() without init(), tests and tools).
  CaenPipeline(const LoadedInstrument& instrument, std::int64_t amplitude_threshold,
               CounterRegistry& counters, std::span<EventSink* const> sinks);
  /// As above, with every source's events in one sink (tests, tools and benchmarks).
  CaenPipeline(const LoadedInstrument& instrument, std::int64_t amplitude_threshold,
               CounterRegistry& counters, EventSink& events);

  void process(PacketBatch batch) override;
  void tick(std::uint64_t) override {}
  void flush() override {}

 private:
  CaenPipeline(std::unique_ptr<const CaenShared> own, const CaenShared* shared,
               CounterRegistry& counters, std::span<EventSink* const> sinks);
  /// Header and readouts of each packet; on_event as ReadoutParser::parse calls it.
  template <typename OnEvent>
  void parse_batch(PacketBatch batch, OnEvent&& on_event);

  std::unique_ptr<const CaenShared> own_;  // only when the pipeline made its own
  const CaenShared& shared_;
  ess::HeaderParser header_parser_;
  ReadoutParser readout_parser_;
  // Per source, a packet batch's events, handed to its sink per pulse run. A buffer per source
  // keeps the runs long (BIFROST's readouts alternate between its 45 triplets), where one shared
  // buffer would end a run at nearly every event; 2 KB each, written at one spot each.
  std::vector<std::optional<EventBuffer>> events_;
};

}  // namespace efu::caen
