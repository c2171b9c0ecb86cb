// The cdt Pipeline: ESS header → CDT readouts → module geometry → pixel → events. Each readout
// is one neutron, so there is no clustering and nothing waits for tick(). The instrument (DREAM,
// MAGIC, HEIMDAL) is the one the --geometry file's Detector names; its type byte is the one the
// header must carry.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "config.h"
#include "efu/ess/readout_header.h"
#include "efu/event_buffer.h"
#include "efu/options.h"
#include "efu/plugin.h"
#include "readout_parser.h"

namespace efu::cdt {

/// The reference's MaxTOF (ESSReferenceTime): the largest int32, as ev44's TOF field is one.
inline constexpr std::int64_t kDefaultMaxTofNs = 0x7FFF'FFFF;

struct CdtSettings {
  std::string geometry_path;  // the instrument file
  std::uint64_t max_tof_ns = kDefaultMaxTofNs;
};

/// The plugin's option table (plugin.cpp exports it; tests use it to build OptionValues).
extern const OptionSpec kOptions[];
extern const std::size_t kOptionCount;

/// Reads and range-checks the plugin options; throws ConfigError naming the bad option.
CdtSettings settings_from_options(const OptionValues& options);

/// A file shipped with the plugin (configs/<name>): the source tree copy, else the installed one.
std::string shipped_config(const std::string& name);
/// The shipped DreamInst.json, the default --geometry.
std::string default_geometry_path();

/// What every processing thread's pipeline reads and none writes: the instrument file's table.
/// The plugin's init() loads it once (load_shared); the pipelines hold a reference.
struct CdtShared {
  CdtConfig config;
  std::uint64_t max_tof_ns = kDefaultMaxTofNs;
};
std::unique_ptr<CdtShared> load_shared(const CdtSettings& settings);

class CdtPipeline final : public Pipeline {
 public:
  /// A pipeline on the state the plugin loaded once for every processing thread.
  CdtPipeline(const CdtShared& shared, CounterRegistry& counters, EventSink& events);
  /// A pipeline that owns its state (tests, benchmarks, and a create() without init()).
  CdtPipeline(std::unique_ptr<const CdtShared> own, CounterRegistry& counters, EventSink& events);

  void process(PacketBatch batch) override;
  void tick(std::uint64_t) override {}
  void flush() override {}

 private:
  CdtPipeline(std::unique_ptr<const CdtShared> own, const CdtShared* shared,
              CounterRegistry& counters, EventSink& events);

  std::unique_ptr<const CdtShared> own_;  // only when the pipeline made its own
  const CdtShared& shared_;
  ess::HeaderParser header_parser_;
  ReadoutParser readout_parser_;
  EventBuffer events_;  // a packet batch's events, handed to the sink per pulse run
};

}  // namespace efu::cdt
