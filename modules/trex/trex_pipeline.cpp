#include "trex_pipeline.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "efu/errors.h"
#include "efu/plugin_files.h"
#include "efu/vmm3a/options.h"

namespace efu::trex {
namespace {
// The source tree's and the installed configs/ (efu_add_plugin(trex ... CONFIGS configs)).
constexpr ShippedFiles kShipped{EFU_PLUGIN_CONFIGS_SOURCE, EFU_PLUGIN_CONFIGS_INSTALLED};
}  // namespace

const OptionSpec kOptions[] = {
    {"geometry", OptionType::kString, "",
     "The facility's TREX instrument config JSON (trex.json, or let.json for the LET geometry; "
     "docs/trex.md); empty: the shipped configs/trex.json"},
    {"calibration", OptionType::kString, "off",
     "The facility's VMM3a calibration JSON (Detector \"TREX\"), applied per channel to ADC and "
     "time; off or empty: no calibration. Hybrids the file leaves out run uncalibrated (one "
     "warning, the gauge calibration.uncalibrated_hybrids)"},
    {"max-tof-ns", OptionType::kInt, "1000000000",
     "Readouts with a larger time of flight are dropped, counted as "
     "readouts.errors.tof_too_large (1..2147483647 ns; the reference's 1 s)"},
    {"max-grid-span", OptionType::kInt, "3",
     "Events whose grid cluster spans more grids are rejected (events.rejected.grid_span; "
     "1..65535); default: the file's MaxGridsSpan (or MaxGridsPerEvent), else 3. The reference "
     "never reads the file's value and always cuts at 3"},
    vmm3a::kReorderWindowOption,
    vmm3a::kReorderBufferOption,
    vmm3a::kUnitTimeoutOption,
};
const std::size_t kOptionCount = sizeof(kOptions) / sizeof(kOptions[0]);

std::string default_config_path() { return kShipped.path("trex.json"); }
std::string shipped_config_path(const std::string& name) { return kShipped.path(name); }

TrexSettings settings_from_options(const OptionValues& o) {
  TrexSettings s;
  s.geometry_path = geometry_file(o, kShipped, "trex.json");
  s.calibration_path = calibration_file(o).path;  // none is shipped: empty means none
  s.max_tof_ns = static_cast<std::uint64_t>(o.get_int("max-tof-ns", 1, 0x7FFF'FFFF));
  s.max_grid_span = static_cast<std::uint16_t>(o.get_int("max-grid-span", 1, 0xFFFF));
  s.max_grid_span_set = o.is_set("max-grid-span");
  const vmm3a::GroupingOptions grouping = vmm3a::grouping_options(o);
  s.reorder_window_ns = grouping.reorder_window_ns;
  s.buffer_hits = grouping.buffer_hits;
  s.cluster_timeout_ns = grouping.unit_timeout_ns;
  return s;
}

vmm3a::Hybrids calibration_hybrids(const TrexConfig& config) {
  vmm3a::Hybrids h;
  h.origin = config.origin;
  h.detector = "TREX";
  h.what = "trex calibration";
  for (const HybridEntry& e : config.hybrids) {
    // A placeholder id can name no hybrid: it matches no file entry, which is then refused.
    h.ids.push_back(e.hybrid_id == kPlaceholderHybridId ? "(no HybridId)" : e.hybrid_id);
    h.names.push_back("vessel " + config.vessels[e.vessel].id + " ring " + std::to_string(e.ring) +
                      " FEN " + std::to_string(e.fen) + " hybrid " + std::to_string(e.hybrid));
  }
  return h;
}

std::unique_ptr<TrexShared> load_shared(TrexSettings settings) {
  TrexConfig config = load_config_file(settings.geometry_path);
  if (!settings.max_grid_span_set) settings.max_grid_span = config.max_grids_span;
  ChannelMap map(config);
  vmm3a::Hybrids hybrids = calibration_hybrids(config);
  vmm3a::HybridCalibration calibration;
  if (!settings.calibration_path.empty()) {
    calibration = vmm3a::HybridCalibration::from_file(settings.calibration_path, hybrids);
  }
  return std::make_unique<TrexShared>(TrexShared{std::move(settings), std::move(config),
                                                 std::move(map), std::move(hybrids),
                                                 std::move(calibration)});
}

// --- Events ----------------------------------------------------------------------------------

EventFormer::EventFormer(CounterRegistry& counters, const EventCuts& cuts, EventSink& events)
    : cuts_(cuts),
      events_(events),
      formed_(counters.counter("events.formed")),
      wire_only_(counters.counter("events.rejected.wire_only")),
      grid_only_(counters.counter("events.rejected.grid_only")),
      grid_span_(counters.counter("events.rejected.grid_span")),
      pixel_(counters.counter("events.rejected.pixel")) {}

// One group, one event (the reference's GapMatcher merges every cluster of the group into one
// per plane): all wire hits are one cluster, all grid hits the other, whatever their coordinates.
void EventFormer::group(std::uint32_t unit, Hit* hits, std::uint32_t count) noexcept {
  (void)unit;  // the coordinates are instrument-wide already
  PlaneSum planes[2];
  for (std::uint32_t i = 0; i < count; ++i) planes[hits[i].plane & 1U].add(hits[i]);
  const PlaneSum& wire = planes[kWire];
  const PlaneSum& grid = planes[kGrid];
  if (grid.hits == 0) {
    wire_only_.add();
    return;
  }
  if (wire.hits == 0) {
    grid_only_.add();
    return;
  }
  if (grid.span() > cuts_.max_grid_span) {
    grid_span_.add();
    return;
  }
  const std::uint32_t pixel = event_pixel(cuts_.volume, wire.center(), grid.center());
  if (pixel == 0) {
    pixel_.add();
    return;
  }
  // The event's time is its earliest hit (the reference's Event::timeStart()); its TOF counts
  // from that hit's pulse and fits 32 bits, as every hit passed the max-TOF check (< 2^31 ns).
  const PlaneSum& first = wire.time_start <= grid.time_start ? wire : grid;
  events_.add(first.pulse_ns, static_cast<std::uint32_t>(first.time_start - first.pulse_ns), pixel);
  formed_.add();
}

// --- Pipeline --------------------------------------------------------------------------------

TrexPipeline::TrexPipeline(const TrexShared& shared, CounterRegistry& counters, EventSink& events,
                           unsigned instance)
    : TrexPipeline(nullptr, &shared, counters, events, instance) {}

TrexPipeline::TrexPipeline(const TrexSettings& settings, CounterRegistry& counters,
                           EventSink& events, unsigned instance)
    : TrexPipeline(load_shared(settings), nullptr, counters, events, instance) {}

TrexPipeline::TrexPipeline(std::unique_ptr<const TrexShared> own, const TrexShared* shared,
                           CounterRegistry& counters, EventSink& events, unsigned instance)
    : own_(std::move(own)),
      shared_(shared != nullptr ? *shared : *own_),
      former_(counters, EventCuts{shared_.settings.max_grid_span, shared_.map.volume()}, events),
      // The reference clusters each plane with MaxClusteringTimeGap and then merges what lies
      // within MaxMatchingTimeGap: a group chains hits by the larger of the two.
      groups_(counters, shared_.map.units(),
              vmm3a::TimeGroupSettings{std::max(shared_.config.max_clustering_time_gap_ns,
                                                shared_.config.max_matching_time_gap_ns),
                                       shared_.settings.reorder_window_ns,
                                       shared_.settings.buffer_hits},
              former_),
      path_(counters, ess::HeaderSettings{kDetectorType, shared_.config.max_pulse_time_ns},
            shared_.map, shared_.calibration, vmm3a::ReadoutSettings{shared_.settings.max_tof_ns},
            groups_, shared_.settings.cluster_timeout_ns) {
  warn_once(counters, instance);
}

void TrexPipeline::warn_once(CounterRegistry& counters, unsigned instance) const {
  // Registered by every instance so the name never depends on the thread count; set by one.
  Counter& uncalibrated = counters.gauge("calibration.uncalibrated_hybrids");
  if (instance != 0) return;
  uncalibrated.set(shared_.calibration.uncalibrated().size());
  const std::string calibration = shared_.calibration.uncalibrated_warning("trex", shared_.hybrids);
  if (!calibration.empty()) spdlog::warn("{}", calibration);
  const std::string outside = ChannelMap::outside_volume_warning(shared_.config);
  if (!outside.empty()) spdlog::warn("{}", outside);
}

void TrexPipeline::process(PacketBatch batch) { path_.process(batch); }

void TrexPipeline::tick(std::uint64_t now_ns) { path_.tick(now_ns); }

void TrexPipeline::flush() { path_.flush(); }

}  // namespace efu::trex
