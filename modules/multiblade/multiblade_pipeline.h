// The multiblade Pipeline: ESS header → VMM3a readouts → hits → clusters → events.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "calibration.h"
#include "clusterer.h"
#include "efu/ess/readout_header.h"
#include "efu/options.h"
#include "efu/plugin.h"
#include "efu/vmm3a/data_path.h"
#include "efu/vmm3a/readout_parser.h"
#include "geometry.h"

namespace efu::multiblade {

/// The SDK's VMM3a readout parser (efu/vmm3a/readout_parser.h) on Multi-Blade's channel map.
using ReadoutParser = vmm3a::ReadoutParser<Geometry>;
using vmm3a::ReadoutError;
using vmm3a::ReadoutSettings;

struct MultibladeConfig {
  std::string geometry_path;
  std::string calibration_path;     // empty: no calibration (--calibration off or empty)
  bool calibration_strict = false;  // a hybrid without calibration is an error, not a warning
  std::string instrument = "auto";
  bool max_time_gap_set = false;  // given explicitly: wins over the file's MaxClusteringTimeGap
  bool max_match_time_set = false;
  ReadoutSettings readout;
  ClusterSettings cluster;
  std::uint64_t cluster_timeout_ns = 200'000'000;
};

/// The plugin's option table (plugin.cpp exports it; tests use it to build OptionValues).
extern const OptionSpec kOptions[];
extern const std::size_t kOptionCount;

/// Reads and range-checks the plugin options; throws ConfigError naming the bad option.
MultibladeConfig config_from_options(const OptionValues& options);

/// The Freia instrument config shipped with the plugin (configs/freia.json): the source tree
/// copy, else the installed one.
std::string default_geometry_path();

/// The geometry of `config`, for the instrument it names, with the file's clustering parameters
/// folded into config.cluster (an explicitly given option wins over the file).
Geometry load_geometry(MultibladeConfig& config);

/// The calibration of `config` for `geometry`: none with --calibration off, else the file, whose
/// missing hybrids run uncalibrated unless config.calibration_strict.
Calibration load_calibration(const MultibladeConfig& config, const Geometry& geometry);

/// What every processing thread's pipeline reads and none writes: the options with the file's
/// clustering parameters folded in (load_geometry), the geometry and the calibration. The
/// plugin's init() loads it once (load_shared); the pipelines hold a reference.
struct MultibladeShared {
  MultibladeConfig config;
  Geometry geometry;
  Calibration calibration;
};
std::unique_ptr<MultibladeShared> load_shared(MultibladeConfig config);

class MultibladePipeline final : public Pipeline {
 public:
  /// A pipeline on the state the plugin loaded once for every processing thread. `instance` is
  /// the processing thread's index (PipelineContext::instance): instance 0 alone logs the
  /// start-up warnings and sets the gauges, so each appears once whatever the thread count (a
  /// name registered by several instances is published as their sum).
  MultibladePipeline(const MultibladeShared& shared, CounterRegistry& counters, EventSink& events,
                     unsigned instance = 0);
  /// A pipeline that loads its own geometry and calibration (tests and tools, and a create()
  /// without init()).
  MultibladePipeline(const MultibladeConfig& config, CounterRegistry& counters, EventSink& events,
                     unsigned instance = 0);

  void process(PacketBatch batch) override;
  /// Closes the groups of cassettes that got no hits for cluster_timeout_ns of wall time
  /// (vmm3a::DataPath::tick()).
  void tick(std::uint64_t now_ns) override;
  void flush() override;

 private:
  MultibladePipeline(std::unique_ptr<const MultibladeShared> own, const MultibladeShared* shared,
                     CounterRegistry& counters, EventSink& events, unsigned instance);

  std::unique_ptr<const MultibladeShared> own_;  // only when the pipeline loaded its own
  const MultibladeShared& shared_;
  Clusterer clusterer_;
  vmm3a::DataPath<Geometry, Clusterer> path_;  // header → readouts → clusterer_; timeouts
};

}  // namespace efu::multiblade
