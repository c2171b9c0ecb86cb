#include "cdt_pipeline.h"

#include "efu/errors.h"
#include "efu/plugin_files.h"

namespace efu::cdt {
namespace {
// The source tree's and the installed configs/ (efu_add_plugin(cdt ... CONFIGS configs)).
constexpr ShippedFiles kShipped{EFU_PLUGIN_CONFIGS_SOURCE, EFU_PLUGIN_CONFIGS_INSTALLED};
}  // namespace

const OptionSpec kOptions[] = {
    {"geometry", OptionType::kString, "",
     "The facility's instrument file (DreamInst.json, MagicInst.json or HeimdalInst.json; its "
     "Detector picks the instrument; docs/cdt.md); empty: the shipped DreamInst.json"},
    {"max-tof-ns", OptionType::kInt, "2147483647",
     "Readouts with a larger time of flight are dropped and counted (1..2147483647 ns)"},
};
const std::size_t kOptionCount = sizeof(kOptions) / sizeof(kOptions[0]);

std::string shipped_config(const std::string& name) { return kShipped.path(name); }

std::string default_geometry_path() { return shipped_config("DreamInst.json"); }

CdtSettings settings_from_options(const OptionValues& o) {
  CdtSettings s;
  s.geometry_path = geometry_file(o, kShipped, "DreamInst.json");
  s.max_tof_ns = static_cast<std::uint64_t>(o.get_int("max-tof-ns", 1, kDefaultMaxTofNs));
  return s;
}

std::unique_ptr<CdtShared> load_shared(const CdtSettings& settings) {
  return std::make_unique<CdtShared>(
      CdtShared{CdtConfig::from_file(settings.geometry_path), settings.max_tof_ns});
}

CdtPipeline::CdtPipeline(const CdtShared& shared, CounterRegistry& counters, EventSink& events)
    : CdtPipeline(nullptr, &shared, counters, events) {}

CdtPipeline::CdtPipeline(std::unique_ptr<const CdtShared> own, CounterRegistry& counters,
                         EventSink& events)
    : CdtPipeline(std::move(own), nullptr, counters, events) {}

// The header parser checks the instrument's type byte (parser.essheader.errors.type otherwise)
// and the file's MaxPulseTimeDiffNS (parser.essheader.errors.pulse_time_diff).
CdtPipeline::CdtPipeline(std::unique_ptr<const CdtShared> own, const CdtShared* shared,
                         CounterRegistry& counters, EventSink& events)
    : own_(std::move(own)),
      shared_(shared != nullptr ? *shared : *own_),
      header_parser_(counters, ess::HeaderSettings{type_byte(shared_.config.instrument),
                                                   shared_.config.max_pulse_time_diff_ns}),
      readout_parser_(counters, shared_.config.modules, shared_.max_tof_ns),
      events_(events) {}

void CdtPipeline::process(PacketBatch batch) {
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
  events_.flush();
}

}  // namespace efu::cdt
