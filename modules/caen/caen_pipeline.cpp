#include "caen_pipeline.h"

#include <stdexcept>

#include "efu/errors.h"
#include "efu/plugin_files.h"

namespace efu::caen {
namespace {
// The source tree's and the installed configs/ (efu_add_plugin(caen ... CONFIGS configs)).
constexpr ShippedFiles kShipped{EFU_PLUGIN_CONFIGS_SOURCE, EFU_PLUGIN_CONFIGS_INSTALLED};
}  // namespace

const OptionSpec kOptions[] = {
    {"geometry", OptionType::kString, "",
     "The facility's instrument config JSON (Detector: loki, bifrost, cspec or miracles; "
     "docs/caen.md); empty: the shipped loki.json"},
    {"calibration", OptionType::kString, "",
     "The facility's charge-division calibration JSON; empty: the shipped one for the "
     "configured instrument; off is refused (charge division needs one)"},
    {"amplitude-threshold", OptionType::kInt, "0",
     "Readouts whose amplitude sum is below this are dropped and counted (0..262140)"},
};
const std::size_t kOptionCount = sizeof(kOptions) / sizeof(kOptions[0]);

std::string shipped_config(const std::string& name) { return kShipped.path(name); }

std::string default_geometry_path() { return shipped_config("loki.json"); }

std::string default_calibration_path(Instrument instrument) {
  return shipped_config(std::string(instrument_name(instrument)) + "_calibration.json");
}

CaenSettings settings_from_options(const OptionValues& o) {
  CaenSettings s;
  s.geometry_path = geometry_file(o, kShipped, "loki.json");
  const CalibrationFile calibration = calibration_file(o);
  if (calibration.kind == CalibrationFile::Kind::kNone) {
    throw ConfigError(
        "--calibration: 'off' leaves caen without a calibration, whose intervals say which straw "
        "or tube a charge ratio belongs to; expected a calibration file, or empty for the "
        "shipped one of the instrument");
  }
  s.calibration_path = calibration.path;  // empty (kDefault): the instrument's shipped one
  s.amplitude_threshold = o.get_int("amplitude-threshold", 0, 4 * 65535);
  return s;
}

LoadedInstrument load_instrument(const CaenSettings& settings) {
  CaenConfig config = CaenConfig::from_file(settings.geometry_path);
  const std::string calibration_path = settings.calibration_path.empty()
                                           ? default_calibration_path(config.instrument)
                                           : settings.calibration_path;
  Calibration calibration =
      Calibration::from_file(calibration_path, instrument_name(config.instrument));
  return LoadedInstrument{std::move(config), std::move(calibration)};
}

CaenShared::CaenShared(LoadedInstrument loaded, std::int64_t amplitude_threshold)
    : instrument(std::move(loaded)),
      pixels(instrument.config, instrument.calibration, amplitude_threshold) {}

std::unique_ptr<CaenShared> load_shared(const CaenSettings& settings) {
  return std::make_unique<CaenShared>(load_instrument(settings), settings.amplitude_threshold);
}

std::vector<EventSink*> event_sinks(const CaenConfig& config, const PipelineContext& context) {
  if (!has_own_sources(config.instrument)) return {&context.events};
  std::vector<EventSink*> sinks(source_count(config));
  for (std::uint32_t i = 0; i < sinks.size(); ++i) {
    sinks[i] = &event_source(context, bifrost_source_name(i));
  }
  return sinks;
}

CaenPipeline::CaenPipeline(const CaenShared& shared, CounterRegistry& counters,
                           std::span<EventSink* const> sinks)
    : CaenPipeline(nullptr, &shared, counters, sinks) {}

CaenPipeline::CaenPipeline(const LoadedInstrument& instrument, std::int64_t amplitude_threshold,
                           CounterRegistry& counters, std::span<EventSink* const> sinks)
    : CaenPipeline(std::make_unique<const CaenShared>(instrument, amplitude_threshold), nullptr,
                   counters, sinks) {}

CaenPipeline::CaenPipeline(const LoadedInstrument& instrument, std::int64_t amplitude_threshold,
                           CounterRegistry& counters, EventSink& events)
    : CaenPipeline(instrument, amplitude_threshold, counters,
                   std::vector<EventSink*>(source_count(instrument.config), &events)) {}

CaenPipeline::CaenPipeline(std::unique_ptr<const CaenShared> own, const CaenShared* shared,
                           CounterRegistry& counters, std::span<EventSink* const> sinks)
    : own_(std::move(own)),
      shared_(shared != nullptr ? *shared : *own_),
      header_parser_(counters,
                     ess::HeaderSettings{detector_type(shared_.instrument.config.instrument),
                                         shared_.instrument.config.max_pulse_time_ns}),
      readout_parser_(counters, shared_.pixels,
                      ReadoutSettings{shared_.instrument.config.max_tof_ns,
                                      shared_.instrument.config.readout_delay_ns}),
      events_(sinks.size()) {
  const std::uint32_t want = source_count(shared_.instrument.config);
  if (sinks.size() != want) {
    throw std::invalid_argument("CaenPipeline: " + std::to_string(sinks.size()) +
                                " event sinks for " + std::to_string(want) + " sources");
  }
  for (std::size_t i = 0; i < sinks.size(); ++i) events_[i].emplace(*sinks[i]);
}

namespace {
/// The sink of a one-source instrument: its buffer, an event at a time or a run of the lanes' eight
/// (kTakesRuns).
struct OneBuffer {
  EventBuffer& out;
  void operator()(std::uint64_t pulse_ns, std::uint32_t tof, std::uint32_t pixel) {
    out.add(pulse_ns, tof, pixel);
  }
  void operator()(std::uint64_t pulse_ns, const std::uint32_t (&tof)[lanes::kLanes],
                  const std::uint32_t (&pixel)[lanes::kLanes]) {
    out.add(pulse_ns, tof, pixel);
  }
};
static_assert(kTakesRuns<OneBuffer>);
}  // namespace

template <typename OnEvent>
void CaenPipeline::parse_batch(PacketBatch batch, OnEvent&& on_event) {
  for (const PacketView& packet : batch) {
    ess::PacketHeader header;
    if (header_parser_.parse(packet.data, packet.size, header) != ess::HeaderStatus::kData) {
      continue;
    }
    readout_parser_.parse(packet.data + header.header_size, packet.size - header.header_size,
                          header, on_event);
  }
}

void CaenPipeline::process(PacketBatch batch) {
  if (events_.size() == 1) {
    // One source (LoKI, CSPEC, MIRACLES): its buffer, without a per-event table look-up.
    parse_batch(batch, OneBuffer{*events_.front()});
  } else {
    // source < events_.size(): MapResult::source is below source_count() (pixel_map.h).
    parse_batch(batch,
                [this](std::uint64_t pulse_ns, std::uint32_t tof, std::uint32_t pixel,
                       std::uint32_t source) { events_[source]->add(pulse_ns, tof, pixel); });
  }
  for (std::optional<EventBuffer>& buffer : events_) buffer->flush();
}

}  // namespace efu::caen
