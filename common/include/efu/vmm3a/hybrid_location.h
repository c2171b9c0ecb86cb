// Where a hybrid sits, as every VMM3a instrument config's Config[] entry says it (Multi-Blade,
// NMX, TREX): "Ring" 0..10, "FEN" 0..13, "Hybrid" 0..10 (the facility's limits, hybrid_map.h)
// and its 32-character "HybridId" (the key of its calibration, hybrid_calibration.h). The
// plugin reads its own fields beside these and checks the entry's keys itself.
#pragma once

#include <cstdint>
#include <string>

namespace efu {
class JsonNode;
}  // namespace efu

namespace efu::vmm3a {

struct HybridLocation {
  std::uint8_t ring;
  std::uint8_t fen;
  std::uint8_t hybrid;
  std::string hybrid_id;
};

/// The four fields of one Config[] entry, each in range; ConfigError naming the file, the JSON
/// path and what was expected otherwise.
HybridLocation read_hybrid_location(const JsonNode& entry);

}  // namespace efu::vmm3a
