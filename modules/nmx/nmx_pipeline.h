// The nmx Pipeline: ESS header → VMM3a readouts → strips of the panels' x and y planes → per-panel
// time groups → uTPC events (docs/nmx.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config.h"
#include "efu/ess/readout_header.h"
#include "efu/options.h"
#include "efu/plugin.h"
#include "efu/vmm3a/data_path.h"
#include "efu/vmm3a/hybrid_calibration.h"
#include "efu/vmm3a/readout_parser.h"
#include "events.h"

namespace efu::nmx {

/// The SDK's VMM3a readout parser (efu/vmm3a/readout_parser.h) on NMX's channel map.
using ReadoutParser = vmm3a::ReadoutParser<Config>;

/// The reference's MaxTOFNS for NMX (VMM3Config's FileParms): 1 s.
inline constexpr std::int64_t kDefaultMaxTofNs = 1'000'000'000;

struct NmxSettings {
  std::string geometry_path;
  std::string calibration_path;     // empty: no calibration
  bool calibration_strict = false;  // a hybrid without calibration is an error, not a warning
  std::uint64_t max_tof_ns = kDefaultMaxTofNs;
  std::uint64_t max_time_gap_ns = 0;  // 0: the file's (the larger of its two time gaps)
  std::uint64_t reorder_window_ns = 1'000'000;
  std::uint32_t buffer_hits = 8192;
  std::uint64_t cluster_timeout_ns = 200'000'000;
};

/// The plugin's option table (plugin.cpp exports it; tests use it to build OptionValues).
extern const OptionSpec kOptions[];
extern const std::size_t kOptionCount;

/// Reads and range-checks the plugin options; throws ConfigError naming the bad option.
NmxSettings settings_from_options(const OptionValues& options);

/// A file shipped with the plugin (configs/<name>): the source tree copy, else the installed one.
std::string shipped_config(const std::string& name);

/// What every processing thread's pipeline reads and none writes: the instrument config, the
/// calibration and the event settings derived from both and the options. The plugin's init()
/// loads it once (load_shared); the pipelines hold a reference.
struct NmxShared {
  NmxSettings settings;
  Config config;
  vmm3a::HybridCalibration calibration;
  EventSettings events;
};
std::unique_ptr<NmxShared> load_shared(const NmxSettings& settings);

class NmxPipeline final : public Pipeline {
 public:
  /// A pipeline on the state the plugin loaded once for every processing thread. Instance 0
  /// alone logs the start-up warnings and sets the gauges.
  NmxPipeline(const NmxShared& shared, CounterRegistry& counters, EventSink& events,
              unsigned instance = 0);
  /// A pipeline that loads its own state (tests, benchmarks, and a create() without init()).
  NmxPipeline(const NmxSettings& settings, CounterRegistry& counters, EventSink& events,
              unsigned instance = 0);

  void process(PacketBatch batch) override;
  /// Closes the groups of panels that got no hits for cluster_timeout_ns of wall time
  /// (vmm3a::DataPath::tick()).
  void tick(std::uint64_t now_ns) override;
  void flush() override;

 private:
  NmxPipeline(std::unique_ptr<const NmxShared> own, const NmxShared* shared,
              CounterRegistry& counters, EventSink& events, unsigned instance);

  std::unique_ptr<const NmxShared> own_;  // only when the pipeline loaded its own
  const NmxShared& shared_;
  EventFormer events_;
  vmm3a::DataPath<Config, EventFormer> path_;  // header → readouts → events_; timeouts
};

}  // namespace efu::nmx
