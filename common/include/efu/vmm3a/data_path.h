// The data path every VMM3a plugin runs (docs/plugins.md "VMM3a detectors"): per packet, the ESS
// header, then each readout through the readout parser into the plugin's time groups; per tick,
// the closing of units that have gone quiet; at stop, the closing of everything.
//
//   DataPath<Map, Groups> path(counters, header_settings, map, calibration, readout_settings,
//                              groups, unit_timeout_ns);
//   path.process(batch);  path.tick(now_ns);  path.flush();
//
// `Map` is the plugin's channel map (readout_parser.h). `Groups` is what takes the hits: a
// vmm3a::TimeGroups<Handler>, or a class of the plugin's own with the same begin_packet(queue),
// add(unit, hit), end_packet(), close(unit), close_all(), pending(unit) and units().
//
// The timeout is in wall time, from tick(): a unit that got no hits since the previous tick for
// unit_timeout_ns has its pending groups closed. Hit times are detector times and may run ahead
// of or behind the wall clock, so they never decide it. Storage is allocated in the constructor.
#pragma once

#include <cstdint>
#include <vector>

#include "efu/counters.h"
#include "efu/ess/readout_header.h"
#include "efu/plugin.h"
#include "efu/vmm3a/hybrid_calibration.h"
#include "efu/vmm3a/readout_parser.h"

namespace efu::vmm3a {

template <typename Map, typename Groups>
class DataPath {
 public:
  DataPath(CounterRegistry& counters, const ess::HeaderSettings& header, const Map& map,
           const HybridCalibration& calibration, const ReadoutSettings& readout, Groups& groups,
           std::uint64_t unit_timeout_ns)
      : header_parser_(counters, header),
        readout_parser_(counters, map, calibration, readout),
        groups_(groups),
        unit_timeout_ns_(unit_timeout_ns),
        active_(groups.units(), 0),
        last_active_ns_(groups.units(), 0) {}

  /// Every data packet of the batch: its readouts' hits into the groups, then end_packet().
  /// Packets the header parser rejects are its to count.
  void process(PacketBatch batch) noexcept {
    for (const PacketView& packet : batch) {
      ess::PacketHeader header;
      if (header_parser_.parse(packet.data, packet.size, header) != ess::HeaderStatus::kData) {
        continue;
      }
      groups_.begin_packet(header.output_queue);
      readout_parser_.parse(packet.data + header.header_size, packet.size - header.header_size,
                            header, [this](std::uint32_t unit, const Hit& hit) {
                              groups_.add(unit, hit);
                              active_[unit] = 1;
                            });
      groups_.end_packet();
    }
  }

  /// Closes the groups of units that got no hits for unit_timeout_ns of wall time.
  void tick(std::uint64_t now_ns) noexcept {
    for (std::uint32_t u = 0; u < active_.size(); ++u) {
      if (active_[u] != 0) {
        active_[u] = 0;
        last_active_ns_[u] = now_ns;
      } else if (groups_.pending(u) && now_ns - last_active_ns_[u] >= unit_timeout_ns_) {
        groups_.close(u);
      }
    }
  }

  /// Closes every pending group (stop).
  void flush() noexcept { groups_.close_all(); }

 private:
  ess::HeaderParser header_parser_;
  ReadoutParser<Map> readout_parser_;
  Groups& groups_;
  std::uint64_t unit_timeout_ns_;
  std::vector<std::uint8_t> active_;           // got hits since the last tick()
  std::vector<std::uint64_t> last_active_ns_;  // tick time at which hits were last seen
};

}  // namespace efu::vmm3a
