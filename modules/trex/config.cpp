#include "config.h"

#include <algorithm>

#include "efu/json_config.h"
#include "efu/vmm3a/hybrid_calibration.h"
#include "efu/vmm3a/hybrid_location.h"
#include "efu/vmm3a/hybrid_map.h"

namespace efu::trex {
namespace {

constexpr const char* kWhat = "trex instrument config";
constexpr std::int64_t kMaxAdc = 1023;  // the VMM3a ADC is 10 bits
constexpr std::int64_t kMaxU16 = 0xFFFF;
constexpr std::int64_t kMaxU32 = 0xFFFF'FFFFLL;

// Detector (required, "TREX", as the reference's VMM3Config checks) and InstrumentGeometry
// (the reference refuses anything but "TREX" and "LET" when it builds the instrument).
InstrumentGeometry read_geometry(const JsonNode& root) {
  const JsonNode detector = root.at("Detector");
  if (detector.as_string() != "TREX") {
    detector.fail("\"" + detector.as_string() + "\" is not the TREX detector; expected \"TREX\"");
  }
  const JsonNode geometry = root.at("InstrumentGeometry");
  const std::string& name = geometry.as_string();
  if (name == "TREX") return InstrumentGeometry::kTrex;
  if (name == "LET") return InstrumentGeometry::kLet;
  geometry.fail("\"" + name + "\" is unknown; expected \"TREX\" or \"LET\"");
}

// The grid-span cut: MaxGridsSpan, or MaxGridsPerEvent (let.json's spelling of the same cut);
// both present must agree.
std::uint16_t read_grid_span(const JsonNode& root, std::uint16_t fallback) {
  const auto span = root.find("MaxGridsSpan");
  const auto per_event = root.find("MaxGridsPerEvent");
  const std::int64_t a = span ? span->as_int(1, kMaxU16) : -1;
  const std::int64_t b = per_event ? per_event->as_int(1, kMaxU16) : -1;
  if (a >= 0 && b >= 0 && a != b) {
    per_event->fail(std::to_string(b) + " differs from MaxGridsSpan " + std::to_string(a) +
                    "; expected the same grid-span cut or only one of the two keys");
  }
  if (a >= 0) return static_cast<std::uint16_t>(a);
  if (b >= 0) return static_cast<std::uint16_t>(b);
  return fallback;
}

// The scalars at the root, each optional with the reference's default.
void read_scalars(const JsonNode& root, TrexConfig& c) {
  c.size_x = static_cast<std::uint16_t>(root.get_int_or("SizeX", c.size_x, 1, kMaxU16));
  c.size_y = static_cast<std::uint16_t>(root.get_int_or("SizeY", c.size_y, 1, kMaxU16));
  c.size_z = static_cast<std::uint16_t>(root.get_int_or("SizeZ", c.size_z, 1, kMaxU16));
  if (std::uint64_t{c.size_x} * c.size_y * c.size_z > static_cast<std::uint64_t>(kMaxU32)) {
    const auto z = root.find("SizeZ");  // absent: the default 16 is named at the root
    (z ? *z : root)
        .fail(std::to_string(c.size_z) +
              " makes SizeX * SizeY * SizeZ exceed 2^32 - 1; expected pixel ids that "
              "fit 32 bits");
  }
  c.default_min_adc =
      static_cast<std::uint16_t>(root.get_int_or("DefaultMinADC", c.default_min_adc, 0, kMaxAdc));
  c.max_grids_span = read_grid_span(root, c.max_grids_span);
  c.max_matching_time_gap_ns = static_cast<std::uint64_t>(root.get_int_or(
      "MaxMatchingTimeGap", static_cast<std::int64_t>(c.max_matching_time_gap_ns), 0, kMaxU16));
  c.max_clustering_time_gap_ns = static_cast<std::uint64_t>(root.get_int_or(
      "MaxClusteringTimeGap", static_cast<std::int64_t>(c.max_clustering_time_gap_ns), 0, kMaxU16));
  c.max_pulse_time_ns = static_cast<std::uint64_t>(root.get_int_or(
      "MaxPulseTimeNS", static_cast<std::int64_t>(c.max_pulse_time_ns), 1, kMaxU32));
}

Vessel read_vessel(const JsonNode& v, const std::string& id, std::uint16_t default_min_adc) {
  if (!v.is_object()) v.fail("is not an object; expected a vessel's {\"NumGrids\", \"Rotation\"}");
  v.check_keys({"NumGrids", "Rotation", "Short", "XOffset", "YOffset", "MinADC"});
  Vessel out{};
  out.id = id;
  out.num_grids = static_cast<std::uint8_t>(v.get_int_or("NumGrids", 0, 0, 0xFF));
  out.rotated = v.get_bool("Rotation");
  out.short_vessel = v.get_bool_or("Short", false);
  out.x_offset = static_cast<std::uint16_t>(v.get_int_or("XOffset", 0, 0, kMaxU16));
  out.y_offset = static_cast<std::uint16_t>(v.get_int_or("YOffset", 0, 0, kMaxU16));
  out.min_adc = static_cast<std::uint16_t>(v.get_int_or("MinADC", default_min_adc, 0, kMaxAdc));
  return out;
}

void read_vessels(const JsonNode& root, TrexConfig& c) {
  const JsonNode list = root.at("Vessel_Config");
  if (!list.is_object() || list.json().empty()) {
    list.fail("is not a non-empty object; expected {\"<VesselId>\": {vessel}, ...}");
  }
  for (const auto& item : list.json().items()) {
    c.vessels.push_back(read_vessel(list.at(item.key()), item.key(), c.default_min_adc));
  }
}

// Index of the vessel named by the entry's VesselId.
std::uint16_t find_vessel(const JsonNode& entry, const TrexConfig& c) {
  const JsonNode id = entry.at("VesselId");
  const std::string& name = id.as_string();
  for (std::size_t i = 0; i < c.vessels.size(); ++i) {
    if (c.vessels[i].id == name) return static_cast<std::uint16_t>(i);
  }
  id.fail("\"" + name + "\" is not in Vessel_Config; expected one of its keys");
}

// The unit of (ring, FEN): the one given to the first entry on it, else a new one.
std::uint16_t unit_of(TrexConfig& c, std::uint8_t ring, std::uint8_t fen) {
  for (std::size_t u = 0; u < c.units.size(); ++u) {
    if (c.units[u].ring == ring && c.units[u].fen == fen) return static_cast<std::uint16_t>(u);
  }
  c.units.push_back(Unit{ring, fen});
  return static_cast<std::uint16_t>(c.units.size() - 1);
}

// The reference's checks of one Config[] entry (VMM3Config::applyVMM3Config): ring, FEN and
// hybrid in range, a 32-character HybridId used once, (ring, FEN, hybrid) used once.
void check_unique(const JsonNode& e, const TrexConfig& c, const HybridEntry& h,
                  const vmm3a::HybridMap& seen) {
  if (h.hybrid_id != kPlaceholderHybridId) {
    const bool twice = std::any_of(c.hybrids.begin(), c.hybrids.end(), [&](const HybridEntry& o) {
      return o.hybrid_id == h.hybrid_id;
    });
    if (twice) {
      e.at("HybridId")
          .fail("\"" + h.hybrid_id +
                "\" is used twice; expected each hybrid once "
                "(only the placeholder of 32 zeros may repeat)");
    }
  }
  if (seen.index_of(h.ring, h.fen, h.hybrid) >= 0) {
    e.at("Hybrid").fail("ring " + std::to_string(h.ring) + ", FEN " + std::to_string(h.fen) +
                        ", hybrid " + std::to_string(h.hybrid) +
                        " is used twice; expected each hybrid once");
  }
}

void read_hybrids(const JsonNode& root, TrexConfig& c) {
  vmm3a::HybridMap seen;
  const auto entries = root.at("Config").elements(1, 0x7FFF);
  for (const JsonNode& e : entries) {
    if (!e.is_object()) e.fail("is not an object; expected a hybrid entry");
    e.check_keys({"Ring", "VesselId", "FEN", "Hybrid", "HybridId"});
    HybridEntry h{};
    vmm3a::HybridLocation at = vmm3a::read_hybrid_location(e);
    h.ring = at.ring;
    h.fen = at.fen;
    h.hybrid = at.hybrid;
    h.hybrid_id = std::move(at.hybrid_id);
    h.vessel = find_vessel(e, c);
    check_unique(e, c, h, seen);
    h.unit = unit_of(c, h.ring, h.fen);
    seen.add(h.ring, h.fen, h.hybrid, static_cast<std::uint16_t>(c.hybrids.size()));
    c.hybrids.push_back(std::move(h));
  }
}

TrexConfig load(const JsonDocument& doc) {
  TrexConfig c;
  c.origin = doc.name();
  const JsonNode root = doc.root();
  if (!root.is_object()) root.fail("is not an object; expected the instrument config object");
  c.geometry = read_geometry(root);
  read_scalars(root, c);
  read_vessels(root, c);
  read_hybrids(root, c);
  return c;
}

}  // namespace

const char* geometry_name(InstrumentGeometry g) noexcept {
  return g == InstrumentGeometry::kLet ? "LET" : "TREX";
}

std::uint32_t TrexConfig::reference_pixel_count() const noexcept {
  std::uint32_t n = 0;
  for (const Vessel& v : vessels) n += std::uint32_t{v.num_grids} * 6 * 16 * 2;
  return n;
}

TrexConfig load_config_file(const std::string& path) {
  return load(JsonDocument::from_file(path, kWhat));
}

TrexConfig load_config_json(std::string_view text, const std::string& origin) {
  return load(JsonDocument::from_text(text, kWhat, origin));
}

}  // namespace efu::trex
