#include "nmx_pipeline.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "efu/errors.h"
#include "efu/plugin_files.h"
#include "efu/vmm3a/options.h"

namespace efu::nmx {
namespace {
// The source tree's and the installed configs/ (efu_add_plugin(nmx ... CONFIGS configs)).
constexpr ShippedFiles kShipped{EFU_PLUGIN_CONFIGS_SOURCE, EFU_PLUGIN_CONFIGS_INSTALLED};
}  // namespace

const OptionSpec kOptions[] = {
    {"geometry", OptionType::kString, "",
     "The facility's NMX instrument config JSON (nmx.json, mininmx.json, nmx_p0.json, "
     "nmx_split.json; docs/nmx.md); empty: the shipped configs/nmx.json"},
    {"calibration", OptionType::kString, "off",
     "The facility's VMM3a calibration JSON (VMMHybridCalibration entries, Detector \"NMX\"), "
     "applied per channel to ADC and time; off or empty: no calibration (none is shipped)"},
    {"calibration-strict", OptionType::kBool, "off",
     "on: a calibration file without an entry for every hybrid of the instrument config is an "
     "error (exit 2); off: those hybrids run uncalibrated, named in one warning and counted by "
     "the gauge calibration.uncalibrated_hybrids"},
    {"max-tof-ns", OptionType::kInt, "1000000000",
     "Readouts with a larger time of flight are dropped and counted (1..2147483647 ns; the "
     "reference's 1 s by default)"},
    {"max-time-gap-ns", OptionType::kInt, "0",
     "Hits of a panel closer in time than this form one event's time group (ns); 0: the larger "
     "of the file's MaxClusteringTimeGap and MaxMatchingTimeGap (500 when absent)"},
    vmm3a::kReorderWindowOption,
    vmm3a::kReorderBufferOption,
    vmm3a::kUnitTimeoutOption,
};
const std::size_t kOptionCount = sizeof(kOptions) / sizeof(kOptions[0]);

std::string shipped_config(const std::string& name) { return kShipped.path(name); }

NmxSettings settings_from_options(const OptionValues& o) {
  NmxSettings s;
  s.geometry_path = geometry_file(o, kShipped, "nmx.json");
  // A file, or none: no calibration is shipped, so empty means none as off does.
  s.calibration_path = calibration_file(o).path;
  s.calibration_strict = o.get_bool("calibration-strict");
  s.max_tof_ns = static_cast<std::uint64_t>(o.get_int("max-tof-ns", 1, 0x7FFF'FFFF));
  s.max_time_gap_ns = static_cast<std::uint64_t>(o.get_int("max-time-gap-ns", 0, 1'000'000'000));
  const vmm3a::GroupingOptions grouping = vmm3a::grouping_options(o);
  s.reorder_window_ns = grouping.reorder_window_ns;
  s.buffer_hits = grouping.buffer_hits;
  s.cluster_timeout_ns = grouping.unit_timeout_ns;
  return s;
}

std::unique_ptr<NmxShared> load_shared(const NmxSettings& settings) {
  Config config = Config::from_file(settings.geometry_path);
  vmm3a::HybridCalibration calibration;
  if (!settings.calibration_path.empty()) {
    calibration = vmm3a::HybridCalibration::from_file(
        settings.calibration_path, config.calibration_hybrids(),
        settings.calibration_strict ? vmm3a::MissingHybrids::kRefuse
                                    : vmm3a::MissingHybrids::kUncalibrated);
  }
  EventSettings events;
  events.parameters = config.events();
  events.max_time_gap_ns = settings.max_time_gap_ns != 0
                               ? settings.max_time_gap_ns
                               : std::max(events.parameters.max_clustering_time_gap_ns,
                                          events.parameters.max_matching_time_gap_ns);
  events.reorder_window_ns = settings.reorder_window_ns;
  events.buffer_hits = settings.buffer_hits;
  return std::make_unique<NmxShared>(
      NmxShared{settings, std::move(config), std::move(calibration), events});
}

NmxPipeline::NmxPipeline(const NmxShared& shared, CounterRegistry& counters, EventSink& events,
                         unsigned instance)
    : NmxPipeline(nullptr, &shared, counters, events, instance) {}

NmxPipeline::NmxPipeline(const NmxSettings& settings, CounterRegistry& counters, EventSink& events,
                         unsigned instance)
    : NmxPipeline(load_shared(settings), nullptr, counters, events, instance) {}

NmxPipeline::NmxPipeline(std::unique_ptr<const NmxShared> own, const NmxShared* shared,
                         CounterRegistry& counters, EventSink& events, unsigned instance)
    : own_(std::move(own)),
      shared_(shared != nullptr ? *shared : *own_),
      events_(counters, shared_.config, shared_.events, events),
      path_(counters, ess::HeaderSettings{kNmxType, shared_.config.max_pulse_time_ns()},
            shared_.config, shared_.calibration,
            vmm3a::ReadoutSettings{shared_.settings.max_tof_ns}, events_,
            shared_.settings.cluster_timeout_ns) {
  // Registered by every instance so the name never depends on the thread count; set by one.
  Counter& uncalibrated = counters.gauge("calibration.uncalibrated_hybrids");
  if (instance != 0) return;
  uncalibrated.set(shared_.calibration.uncalibrated().size());
  if (!shared_.calibration.uncalibrated().empty()) {
    spdlog::warn("{}", shared_.calibration.uncalibrated_warning(
                           "nmx", shared_.config.calibration_hybrids()));
  }
}

void NmxPipeline::process(PacketBatch batch) {
  path_.process(batch);
  events_.flush_events();
}

void NmxPipeline::tick(std::uint64_t now_ns) {
  path_.tick(now_ns);
  events_.flush_events();
}

void NmxPipeline::flush() {
  path_.flush();
  events_.flush_events();
}

}  // namespace efu::nmx
