// The trex Pipeline: ESS header → VMM3a readouts (the SDK's parser on TREX's channel map) →
// time groups per (ring, FEN) (the SDK's any-order grouping) → one wire and one grid cluster per
// group → the event's cuts and its 3D pixel → efu::EventSink (docs/trex.md "Events").
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config.h"
#include "efu/ess/readout_header.h"
#include "efu/options.h"
#include "efu/plugin.h"
#include "efu/vmm3a/clusters.h"
#include "efu/vmm3a/data_path.h"
#include "efu/vmm3a/hybrid_calibration.h"
#include "efu/vmm3a/readout_parser.h"
#include "efu/vmm3a/time_groups.h"
#include "geometry.h"

namespace efu::trex {

using vmm3a::Hit;
using ReadoutParser = vmm3a::ReadoutParser<ChannelMap>;

struct TrexSettings {
  std::string geometry_path;
  std::string calibration_path;  // empty: no calibration
  std::uint64_t max_tof_ns = 1'000'000'000;
  bool max_grid_span_set = false;  // given explicitly: wins over the file's MaxGridsSpan
  std::uint16_t max_grid_span = 3;
  std::uint64_t reorder_window_ns = 1'000'000;
  std::uint32_t buffer_hits = 8192;
  std::uint64_t cluster_timeout_ns = 200'000'000;
};

/// The plugin's option table (plugin.cpp exports it; tests use it to build OptionValues).
extern const OptionSpec kOptions[];
extern const std::size_t kOptionCount;

/// Reads and range-checks the plugin options; throws ConfigError naming the bad option.
TrexSettings settings_from_options(const OptionValues& options);

/// The shipped TREX config (configs/trex.json): the source tree's copy, else the installed one.
std::string default_config_path();
/// A shipped config by name (trex.json, let.json).
std::string shipped_config_path(const std::string& name);

/// The hybrids of `config` as the calibration loader checks them (placeholder HybridIds can
/// match no calibration entry).
vmm3a::Hybrids calibration_hybrids(const TrexConfig& config);

/// What every processing thread's pipeline reads and none writes, loaded once by init().
struct TrexShared {
  TrexSettings settings;
  TrexConfig config;
  ChannelMap map;
  vmm3a::Hybrids hybrids;
  vmm3a::HybridCalibration calibration;
};
/// Loads the config and the calibration; the file's MaxGridsSpan applies unless the option was
/// given. Throws ConfigError.
std::unique_ptr<TrexShared> load_shared(TrexSettings settings);

/// What an event needs of one plane's hits: the one cluster that vmm3a::build_clusters() makes of
/// them with the largest gap, reduced to its sums, its coordinate range and its earliest hit.
/// These do not depend on the hits' order, so it is accumulated in one pass over the group,
/// without build_clusters()' sort by coordinate.
struct PlaneSum {
  std::uint64_t time_start = ~std::uint64_t{0};  // earliest hit
  std::uint64_t pulse_ns = 0;                    // its pulse (of equal times, the smaller)
  std::uint64_t weighted_sum = 0;                // sum(adc * coordinate)
  std::uint32_t adc_sum = 0;
  std::uint32_t hits = 0;
  std::uint16_t min_coordinate = 0xFFFF;
  std::uint16_t max_coordinate = 0;

  void add(const Hit& h) noexcept {
    // Selects rather than branches: the plane of a group's hits alternates unpredictably, and so
    // would these comparisons.
    const bool first = h.time_ns < time_start || (h.time_ns == time_start && h.pulse_ns < pulse_ns);
    pulse_ns = first ? h.pulse_ns : pulse_ns;
    time_start = first ? h.time_ns : time_start;
    weighted_sum += std::uint64_t{h.adc} * h.coordinate;
    adc_sum += h.adc;
    ++hits;
    min_coordinate = std::min(min_coordinate, h.coordinate);
    max_coordinate = std::max(max_coordinate, h.coordinate);
  }
  /// Channels from the lowest to the highest coordinate, both included (Cluster::span()).
  std::uint32_t span() const noexcept { return max_coordinate - min_coordinate + 1U; }
  /// vmm3a::center_of_mass() of the cluster: the ADC-weighted centre rounded half up, or, when
  /// every ADC is 0, the cluster's largest-ADC coordinate, which is then its lowest.
  std::uint16_t center() const noexcept {
    vmm3a::Cluster c{};
    c.weighted_sum = weighted_sum;
    c.adc_sum = adc_sum;
    c.max_adc_coordinate = min_coordinate;
    return vmm3a::center_of_mass(c);
  }
};

/// What an event must pass (docs/trex.md "Events").
struct EventCuts {
  std::uint16_t max_grid_span;
  PixelVolume volume;
};

/// The time groups' handler: one closed group of a unit → at most one event, each group counted
/// once, as events.formed or under one events.rejected.<reason>.
class EventFormer {
 public:
  EventFormer(CounterRegistry& counters, const EventCuts& cuts, EventSink& events);
  void group(std::uint32_t unit, Hit* hits, std::uint32_t count) noexcept;

 private:
  EventCuts cuts_;
  EventSink& events_;
  Counter& formed_;
  Counter& wire_only_;
  Counter& grid_only_;
  Counter& grid_span_;
  Counter& pixel_;
};

class TrexPipeline final : public Pipeline {
 public:
  /// On the state init() loaded once. Instance 0 alone logs the start-up warnings and sets the
  /// gauge calibration.uncalibrated_hybrids.
  TrexPipeline(const TrexShared& shared, CounterRegistry& counters, EventSink& events,
               unsigned instance = 0);
  /// Loads its own state (tests, tools, a create() without init()).
  TrexPipeline(const TrexSettings& settings, CounterRegistry& counters, EventSink& events,
               unsigned instance = 0);

  void process(PacketBatch batch) override;
  /// Closes the groups of units that got no hits for cluster_timeout_ns of wall time
  /// (vmm3a::DataPath::tick()).
  void tick(std::uint64_t now_ns) override;
  void flush() override;

 private:
  TrexPipeline(std::unique_ptr<const TrexShared> own, const TrexShared* shared,
               CounterRegistry& counters, EventSink& events, unsigned instance);
  void warn_once(CounterRegistry& counters, unsigned instance) const;

  std::unique_ptr<const TrexShared> own_;  // only when the pipeline loaded its own
  const TrexShared& shared_;
  EventFormer former_;
  vmm3a::TimeGroups<EventFormer> groups_;
  vmm3a::DataPath<ChannelMap, vmm3a::TimeGroups<EventFormer>> path_;  // header → readouts → groups_
};

}  // namespace efu::trex
