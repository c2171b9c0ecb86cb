#include "multiblade_pipeline.h"

#include <array>

#include <spdlog/spdlog.h>

#include "efu/errors.h"
#include "efu/plugin_files.h"
#include "efu/vmm3a/options.h"

namespace efu::multiblade {
namespace {
// The source tree's and the installed configs/ (efu_add_plugin(multiblade ... CONFIGS configs)).
constexpr ShippedFiles kShipped{EFU_PLUGIN_CONFIGS_SOURCE, EFU_PLUGIN_CONFIGS_INSTALLED};
}  // namespace

const OptionSpec kOptions[] = {
    {"geometry", OptionType::kString, "",
     "The facility's instrument config JSON (Freia, Estia, AMOR, TBL-MB; docs/multiblade.md); "
     "empty: the shipped configs/freia.json"},
    {"calibration", OptionType::kString, "off",
     "The facility's VMM3a calibration JSON, applied per channel; off or empty: no calibration "
     "(none is shipped)"},
    {"calibration-strict", OptionType::kBool, "off",
     "on: a calibration file without an entry for every hybrid of the instrument config is an "
     "error (exit 2); off: those hybrids run uncalibrated (ADC unchanged, TDC offset 0 and slope "
     "1, as the reference does), named in one warning and counted by the gauge "
     "calibration.uncalibrated_hybrids"},
    {"detector", OptionType::kString, "auto",
     "auto (from InstrumentGeometry), freia, estia, amor or tblmb: the ESS type byte "
     "(0x48, 0x4C, 0x48, 0x49); tblmb runs an AMOR-geometry file"},
    {"max-tof-ns", OptionType::kInt, "200000000",
     "Readouts with a larger time of flight are dropped (1..2147483647 ns)"},
    {"max-time-gap-ns", OptionType::kInt, "500",
     "Hits closer in time join one time group (ns); default: the file's MaxClusteringTimeGap, "
     "else 500"},
    {"max-match-time-ns", OptionType::kInt, "500",
     "Largest time difference between a matched wire and strip cluster (ns); default: the "
     "file's MaxMatchingTimeGap, else 500"},
    {"max-wire-span", OptionType::kInt, "32",
     "Events whose wire cluster spans more wires are rejected (1..32; 32: no limit)"},
    {"max-strip-span", OptionType::kInt, "64",
     "Events whose strip cluster spans more strips are rejected (1..64; 64: no limit)"},
    {"position-algorithm", OptionType::kString, "center-of-mass",
     "Event position: center-of-mass (ADC-weighted, rounded) or max-adc"},
    vmm3a::kReorderWindowOption,
    vmm3a::kReorderBufferOption,
    vmm3a::kUnitTimeoutOption,
};
const std::size_t kOptionCount = sizeof(kOptions) / sizeof(kOptions[0]);

std::string default_geometry_path() { return kShipped.path("freia.json"); }

MultibladeConfig config_from_options(const OptionValues& o) {
  MultibladeConfig c;
  c.geometry_path = geometry_file(o, kShipped, "freia.json");
  // A file, or none: no calibration is shipped, so empty means none as off does.
  c.calibration_path = calibration_file(o).path;
  c.calibration_strict = o.get_bool("calibration-strict");
  const std::size_t instrument =
      o.get_choice("detector", {"auto", "freia", "estia", "amor", "tblmb"});
  c.instrument = std::string(
      std::array<const char*, 5>{"auto", "freia", "estia", "amor", "tblmb"}[instrument]);
  c.readout.max_tof_ns = static_cast<std::uint64_t>(o.get_int("max-tof-ns", 1, 0x7FFF'FFFF));
  c.cluster.max_time_gap_ns =
      static_cast<std::uint64_t>(o.get_int("max-time-gap-ns", 0, 1'000'000'000));
  c.max_time_gap_set = o.is_set("max-time-gap-ns");
  c.cluster.max_match_time_ns =
      static_cast<std::uint64_t>(o.get_int("max-match-time-ns", 0, 1'000'000'000));
  c.max_match_time_set = o.is_set("max-match-time-ns");
  c.cluster.max_wire_span =
      static_cast<std::uint16_t>(o.get_int("max-wire-span", 1, kWiresPerCassette));
  c.cluster.max_strip_span =
      static_cast<std::uint16_t>(o.get_int("max-strip-span", 1, kStripsPerCassette));
  c.cluster.algorithm = o.get_choice("position-algorithm", {"center-of-mass", "max-adc"}) == 0
                            ? PositionAlgorithm::kCenterOfMass
                            : PositionAlgorithm::kMaxAdc;
  const vmm3a::GroupingOptions grouping = vmm3a::grouping_options(o);
  c.cluster.reorder_window_ns = grouping.reorder_window_ns;
  c.cluster.buffer_hits = grouping.buffer_hits;
  c.cluster_timeout_ns = grouping.unit_timeout_ns;
  return c;
}

Geometry load_geometry(MultibladeConfig& config) {
  Geometry g = Geometry::from_file(config.geometry_path);
  if (config.instrument == "freia") g.select_instrument(Instrument::kFreia);
  if (config.instrument == "estia") g.select_instrument(Instrument::kEstia);
  if (config.instrument == "amor") g.select_instrument(Instrument::kAmor);
  if (config.instrument == "tblmb") g.select_instrument(Instrument::kTblMb);
  config.cluster.max_gap_wire = g.max_gap_wire();
  config.cluster.max_gap_strip = g.max_gap_strip();
  if (!config.max_time_gap_set && g.max_clustering_time_gap_ns() != 0) {
    config.cluster.max_time_gap_ns = g.max_clustering_time_gap_ns();
  }
  if (!config.max_match_time_set && g.max_matching_time_gap_ns() != 0) {
    config.cluster.max_match_time_ns = g.max_matching_time_gap_ns();
  }
  return g;
}

Calibration load_calibration(const MultibladeConfig& config, const Geometry& geometry) {
  if (config.calibration_path.empty()) return Calibration{};
  return Calibration::from_file(config.calibration_path, geometry,
                                config.calibration_strict ? MissingHybrids::kRefuse
                                                          : MissingHybrids::kUncalibrated);
}

std::unique_ptr<MultibladeShared> load_shared(MultibladeConfig config) {
  Geometry geometry = load_geometry(config);
  Calibration calibration = load_calibration(config, geometry);
  return std::make_unique<MultibladeShared>(
      MultibladeShared{std::move(config), std::move(geometry), std::move(calibration)});
}

MultibladePipeline::MultibladePipeline(const MultibladeShared& shared, CounterRegistry& counters,
                                       EventSink& events, unsigned instance)
    : MultibladePipeline(nullptr, &shared, counters, events, instance) {}

MultibladePipeline::MultibladePipeline(const MultibladeConfig& config, CounterRegistry& counters,
                                       EventSink& events, unsigned instance)
    : MultibladePipeline(load_shared(config), nullptr, counters, events, instance) {}

MultibladePipeline::MultibladePipeline(std::unique_ptr<const MultibladeShared> own,
                                       const MultibladeShared* shared, CounterRegistry& counters,
                                       EventSink& events, unsigned instance)
    : own_(std::move(own)),
      shared_(shared != nullptr ? *shared : *own_),
      clusterer_(counters, shared_.geometry, shared_.config.cluster, events),
      path_(counters,
            ess::HeaderSettings{detector_type(shared_.geometry.instrument()),
                                shared_.geometry.max_pulse_time_ns()},
            shared_.geometry, shared_.calibration, shared_.config.readout, clusterer_,
            shared_.config.cluster_timeout_ns) {
  // Registered by every instance so the name never depends on the thread count; set by one.
  Counter& uncalibrated = counters.gauge("calibration.uncalibrated_hybrids");
  if (instance != 0) return;
  uncalibrated.set(shared_.calibration.uncalibrated().size());
  if (!shared_.calibration.uncalibrated().empty()) {
    spdlog::warn("{}", shared_.calibration.uncalibrated_warning(shared_.geometry));
  }
}

void MultibladePipeline::process(PacketBatch batch) { path_.process(batch); }

void MultibladePipeline::tick(std::uint64_t now_ns) { path_.tick(now_ns); }

void MultibladePipeline::flush() { path_.flush(); }

}  // namespace efu::multiblade
