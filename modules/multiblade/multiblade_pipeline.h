// The multiblade Pipeline: ESS header → VMM3a readouts → hits → clusters → events.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "clusterer.h"
#include "efu/ess/readout_header.h"
#include "efu/options.h"
#include "efu/plugin.h"
#include "geometry.h"
#include "readout_parser.h"

namespace efu::multiblade {

struct MultibladeConfig {
  std::string geometry_path;
  ReadoutSettings readout;
  ClusterSettings cluster;
  std::uint64_t cluster_timeout_ns = 200'000'000;
};

/// The plugin's option table (plugin.cpp exports it; tests use it to build OptionValues).
extern const OptionSpec kOptions[];
extern const std::size_t kOptionCount;

/// Reads and range-checks the plugin options; throws ConfigError naming the bad option.
MultibladeConfig config_from_options(const OptionValues& options);

/// The demo geometry shipped with the plugin: the source tree copy, else the installed one.
std::string default_geometry_path();

class MultibladePipeline final : public Pipeline {
 public:
  MultibladePipeline(const MultibladeConfig& config, CounterRegistry& counters, EventSink& events);

  void process(PacketBatch batch) override;
  /// Closes the groups of cassettes that got no hits for cluster_timeout_ns of wall time; hit
  /// times are detector times and may run ahead of or behind the wall clock, so the timeout is
  /// measured only in tick() time.
  void tick(std::uint64_t now_ns) override;
  void flush() override;

 private:
  Geometry geometry_;
  std::uint64_t cluster_timeout_ns_;
  ess::HeaderParser header_parser_;
  ReadoutParser readout_parser_;
  Clusterer clusterer_;
  std::vector<std::uint8_t> active_;           // got hits since the last tick()
  std::vector<std::uint64_t> last_active_ns_;  // tick time at which hits were last seen
};

}  // namespace efu::multiblade
