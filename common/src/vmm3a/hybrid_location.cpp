#include "efu/vmm3a/hybrid_location.h"

#include "efu/json_config.h"
#include "efu/vmm3a/hybrid_calibration.h"
#include "efu/vmm3a/hybrid_map.h"

namespace efu::vmm3a {

HybridLocation read_hybrid_location(const JsonNode& e) {
  HybridLocation h;
  h.ring = static_cast<std::uint8_t>(e.get_int("Ring", 0, kMaxRing));
  h.fen = static_cast<std::uint8_t>(e.get_int("FEN", 0, kMaxFen));
  h.hybrid = static_cast<std::uint8_t>(e.get_int("Hybrid", 0, kMaxHybrid));
  const JsonNode id = e.at("HybridId");
  h.hybrid_id = id.as_string();
  if (h.hybrid_id.size() != kHybridIdLength) {
    id.fail("\"" + h.hybrid_id + "\" has " + std::to_string(h.hybrid_id.size()) +
            " characters; expected " + std::to_string(kHybridIdLength));
  }
  return h;
}

}  // namespace efu::vmm3a
