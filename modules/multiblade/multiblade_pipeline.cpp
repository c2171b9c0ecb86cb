#include "multiblade_pipeline.h"

#include <filesystem>

#include "efu/errors.h"

namespace efu::multiblade {

const OptionSpec kOptions[] = {
    {"geometry", OptionType::kString, "",
     "Geometry JSON file (docs/multiblade.md); empty: the shipped multiblade_demo.json"},
    {"adc-threshold", OptionType::kInt, "50", "Readouts with ADC below this are dropped (0..1023)"},
    {"max-tof-ns", OptionType::kInt, "200000000",
     "Readouts with a larger time of flight are dropped (1..2147483647 ns)"},
    {"max-time-gap-ns", OptionType::kInt, "500",
     "A hit more than this after the latest hit of a cassette closes its cluster group (ns)"},
    {"max-coordinate-gap", OptionType::kInt, "1",
     "Largest channel distance between neighbours in a cluster (1: adjacent only)"},
    {"max-match-time-ns", OptionType::kInt, "500",
     "Largest time difference between a matched wire and strip cluster (ns)"},
    {"max-wire-span", OptionType::kInt, "8",
     "Events whose wire cluster spans more wires are rejected"},
    {"max-strip-span", OptionType::kInt, "16",
     "Events whose strip cluster spans more strips are rejected"},
    {"position-algorithm", OptionType::kString, "center-of-mass",
     "Event position: center-of-mass (ADC-weighted, rounded) or max-adc"},
    {"cluster-timeout-ms", OptionType::kInt, "200",
     "Close a cassette's open cluster group after this much wall time without hits"},
};
const std::size_t kOptionCount = sizeof(kOptions) / sizeof(kOptions[0]);

std::string default_geometry_path() {
  const std::string source = EFU_MULTIBLADE_SOURCE_GEOMETRY;
  if (std::filesystem::exists(source)) return source;
  return EFU_MULTIBLADE_INSTALLED_GEOMETRY;
}

MultibladeConfig config_from_options(const OptionValues& o) {
  MultibladeConfig c;
  c.geometry_path = o.get_string("geometry");
  if (c.geometry_path.empty()) c.geometry_path = default_geometry_path();
  c.readout.adc_threshold = static_cast<std::uint16_t>(o.get_int("adc-threshold", 0, 1023));
  c.readout.max_tof_ns = static_cast<std::uint64_t>(o.get_int("max-tof-ns", 1, 0x7FFF'FFFF));
  c.cluster.max_time_gap_ns =
      static_cast<std::uint64_t>(o.get_int("max-time-gap-ns", 0, 1'000'000'000));
  c.cluster.max_coordinate_gap =
      static_cast<std::uint16_t>(o.get_int("max-coordinate-gap", 1, kChannelsPerVmm));
  c.cluster.max_match_time_ns =
      static_cast<std::uint64_t>(o.get_int("max-match-time-ns", 0, 1'000'000'000));
  c.cluster.max_wire_span =
      static_cast<std::uint16_t>(o.get_int("max-wire-span", 1, kChannelsPerVmm));
  c.cluster.max_strip_span =
      static_cast<std::uint16_t>(o.get_int("max-strip-span", 1, kChannelsPerVmm));
  c.cluster.algorithm = o.get_choice("position-algorithm", {"center-of-mass", "max-adc"}) == 0
                            ? PositionAlgorithm::kCenterOfMass
                            : PositionAlgorithm::kMaxAdc;
  c.cluster_timeout_ns =
      static_cast<std::uint64_t>(o.get_int("cluster-timeout-ms", 1, 3'600'000)) * 1'000'000;
  return c;
}

MultibladePipeline::MultibladePipeline(const MultibladeConfig& config, CounterRegistry& counters,
                                       EventSink& events)
    : geometry_(Geometry::from_file(config.geometry_path)),
      cluster_timeout_ns_(config.cluster_timeout_ns),
      header_parser_(counters, kDetectorType),
      readout_parser_(counters, geometry_, config.readout),
      clusterer_(counters, geometry_, config.cluster, events),
      active_(geometry_.cassettes(), 0),
      last_active_ns_(geometry_.cassettes(), 0) {}

void MultibladePipeline::process(PacketBatch batch) {
  for (const PacketView& packet : batch) {
    ess::PacketHeader header;
    if (header_parser_.parse(packet.data, packet.size, header) != ess::HeaderStatus::kData) {
      continue;
    }
    readout_parser_.parse(packet.data + header.header_size, packet.size - header.header_size,
                          header, [this](std::uint32_t cassette, const Hit& hit) {
                            clusterer_.add(cassette, hit);
                            active_[cassette] = 1;
                          });
  }
}

void MultibladePipeline::tick(std::uint64_t now_ns) {
  for (std::uint32_t c = 0; c < geometry_.cassettes(); ++c) {
    if (active_[c] != 0) {
      active_[c] = 0;
      last_active_ns_[c] = now_ns;
    } else if (clusterer_.pending(c) && now_ns - last_active_ns_[c] >= cluster_timeout_ns_) {
      clusterer_.close(c);
    }
  }
}

void MultibladePipeline::flush() { clusterer_.close_all(); }

}  // namespace efu::multiblade
