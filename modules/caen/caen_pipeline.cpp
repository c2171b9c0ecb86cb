#include "caen_pipeline.h"

#include <filesystem>

namespace efu::caen {

const OptionSpec kOptions[] = {
    {"geometry", OptionType::kString, "",
     "Instrument config JSON in the facility's format (Detector: loki, bifrost, cspec or "
     "miracles; docs/caen.md); empty: the shipped loki.json"},
    {"calibration", OptionType::kString, "",
     "Charge-division calibration JSON in the facility's format; empty: the shipped one for the "
     "configured instrument"},
    {"amplitude-threshold", OptionType::kInt, "0",
     "Readouts whose amplitude sum is below this are dropped and counted (0..262140)"},
};
const std::size_t kOptionCount = sizeof(kOptions) / sizeof(kOptions[0]);

std::string shipped_config(const std::string& name) {
  const std::string source = std::string(EFU_CAEN_SOURCE_CONFIGS) + "/" + name;
  if (std::filesystem::exists(source)) return source;
  return std::string(EFU_CAEN_INSTALLED_CONFIGS) + "/" + name;
}

std::string default_geometry_path() { return shipped_config("loki.json"); }

std::string default_calibration_path(Instrument instrument) {
  return shipped_config(std::string(instrument_name(instrument)) + "_calibration.json");
}

CaenSettings settings_from_options(const OptionValues& o) {
  CaenSettings s;
  s.geometry_path = o.get_string("geometry");
  if (s.geometry_path.empty()) s.geometry_path = default_geometry_path();
  s.calibration_path = o.get_string("calibration");
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

CaenPipeline::CaenPipeline(const LoadedInstrument& instrument, std::int64_t amplitude_threshold,
                           CounterRegistry& counters, EventSink& events)
    : pixels_(instrument.config, instrument.calibration, amplitude_threshold),
      header_parser_(counters, ess::HeaderSettings{detector_type(instrument.config.instrument),
                                                   instrument.config.max_pulse_time_ns}),
      readout_parser_(
          counters, pixels_,
          ReadoutSettings{instrument.config.max_tof_ns, instrument.config.readout_delay_ns}),
      events_(events) {}

void CaenPipeline::process(PacketBatch batch) {
  for (const PacketView& packet : batch) {
    ess::PacketHeader header;
    if (header_parser_.parse(packet.data, packet.size, header) != ess::HeaderStatus::kData) {
      continue;
    }
    readout_parser_.parse(packet.data + header.header_size, packet.size - header.header_size,
                          header,
                          [this](std::uint64_t pulse_ns, std::uint32_t tof, std::uint32_t pixel) {
                            events_.add(pulse_ns, tof, pixel);
                          });
  }
}

}  // namespace efu::caen
