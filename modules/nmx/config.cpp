#include "config.h"

#include <algorithm>

#include "efu/errors.h"
#include "efu/json_config.h"
#include "efu/vmm3a/hybrid_location.h"

namespace efu::nmx {
namespace {

constexpr const char* kWhat = "nmx instrument config";
// The facility's default when a file does not set MaxPulseTimeNS: five pulse periods.
constexpr std::int64_t kDefaultMaxPulseTimeNs = 5 * 71'428'571LL;
// The reference keeps coordinates in 16 bits and 65535 means "invalid": a hybrid's last strip,
// Offset + 127, must stay below it.
constexpr std::int64_t kMaxOffset = 0xFFFF - kStripsPerHybrid;
constexpr std::uint32_t kMaxHybrids =
    (vmm3a::kMaxRing + 1) * (vmm3a::kMaxFen + 1) * (vmm3a::kMaxHybrid + 1);

// Detector and InstrumentGeometry: both "NMX" (the reference refuses any other name, and any
// other geometry, at start).
void check_names(const JsonNode& root) {
  for (const char* key : {"Detector", "InstrumentGeometry"}) {
    const JsonNode name = root.at(key);
    if (name.as_string() != "NMX") {
      name.fail("\"" + name.as_string() + "\" is not NMX; expected \"NMX\"");
    }
  }
}

// The file's event-forming parameters (every one optional, with the reference's default).
EventParameters read_events(const JsonNode& root) {
  EventParameters p;
  const char* const max_span[2] = {"MaxSpanX", "MaxSpanY"};
  const char* const min_span[2] = {"MinSpanX", "MinSpanY"};
  const char* const max_gap[2] = {"MaxGapX", "MaxGapY"};
  for (unsigned plane = 0; plane < 2; ++plane) {
    p.max_span[plane] =
        static_cast<std::uint16_t>(root.get_int_or(max_span[plane], p.max_span[plane], 1, 0xFFFF));
    p.min_span[plane] = static_cast<std::uint16_t>(
        root.get_int_or(min_span[plane], p.min_span[plane], 0, p.max_span[plane]));
    p.max_gap[plane] =
        static_cast<std::uint16_t>(root.get_int_or(max_gap[plane], p.max_gap[plane], 0, 0xFFFF));
  }
  p.max_time_span_ns = static_cast<std::uint64_t>(root.get_int_or(
      "MaxTimeSpan", static_cast<std::int64_t>(p.max_time_span_ns), 0, 1'000'000'000));
  p.max_matching_time_gap_ns =
      static_cast<std::uint64_t>(root.get_int_or("MaxMatchingTimeGap", 500, 0, 0xFFFF));
  p.max_clustering_time_gap_ns =
      static_cast<std::uint64_t>(root.get_int_or("MaxClusteringTimeGap", 500, 0, 0xFFFF));
  p.split_multi_events = root.get_bool_or("SplitMultiEvents", false);
  p.split_coefficient_low =
      static_cast<float>(root.get_double_or("SplitMultiEventsCoefficientLow", 0.8, 0.0, 1e6));
  const double high = p.split_coefficient_low > 1.2F ? p.split_coefficient_low : 1.2;
  p.split_coefficient_high = static_cast<float>(
      root.get_double_or("SplitMultiEventsCoefficientHigh", high, p.split_coefficient_low, 1e6));
  return p;
}

// One Config[] entry, each field in range; overlaps and repeats are add_hybrid()'s.
HybridConfig read_hybrid(const JsonNode& e, std::uint32_t panels) {
  if (!e.is_object()) e.fail("is not an object; expected a hybrid entry");
  e.check_keys(
      {"Ring", "FEN", "Hybrid", "HybridId", "Plane", "Offset", "ReversedChannels", "Panel"});
  HybridConfig h{};
  vmm3a::HybridLocation at = vmm3a::read_hybrid_location(e);
  h.ring = at.ring;
  h.fen = at.fen;
  h.hybrid = at.hybrid;
  h.hybrid_id = std::move(at.hybrid_id);
  h.plane = static_cast<std::uint8_t>(e.get_int_or("Plane", kX, kX, kY));
  h.offset = static_cast<std::uint16_t>(e.get_int_or("Offset", 0, 0, kMaxOffset));
  h.reversed = e.get_bool_or("ReversedChannels", false);
  h.panel = static_cast<std::uint8_t>(e.get_int_or("Panel", 0, 0, panels - 1));
  return h;
}

std::string hybrid_name(const HybridConfig& h) {
  return "ring " + std::to_string(h.ring) + " FEN " + std::to_string(h.fen) + " hybrid " +
         std::to_string(h.hybrid);
}

}  // namespace

Config Config::from_file(const std::string& path) {
  return load(JsonDocument::from_file(path, kWhat));
}

Config Config::from_json(std::string_view text, const std::string& origin) {
  return load(JsonDocument::from_text(text, kWhat, origin));
}

Config Config::load(const JsonDocument& doc) {
  Config c;
  const JsonNode root = doc.root();
  c.origin_ = doc.name();
  if (!root.is_object()) root.fail("is not an object; expected the instrument config object");
  check_names(root);
  c.max_pulse_time_ns_ = static_cast<std::uint64_t>(
      root.get_int_or("MaxPulseTimeNS", kDefaultMaxPulseTimeNs, 1, 0xFFFF'FFFFLL));
  c.logical_.nx = static_cast<std::uint32_t>(root.get_int_or("SizeX", 1280, 1, 0xFFFF));
  c.logical_.ny = static_cast<std::uint32_t>(root.get_int_or("SizeY", 1280, 1, 0xFFFF));
  c.panels_ =
      static_cast<std::uint32_t>(root.get_int_or("NumPanels", kDefaultPanels, 1, kMaxPanels));
  c.default_min_adc_ = static_cast<std::uint16_t>(root.get_int_or("DefaultMinADC", 50, 0, 1023));
  c.events_ = read_events(root);
  for (const JsonNode& e : root.at("Config").elements(1, kMaxHybrids)) {
    c.add_hybrid(e, read_hybrid(e, c.panels_));
  }
  return c;
}

void Config::add_hybrid(const JsonNode& e, HybridConfig h) {
  for (std::size_t i = 0; i < hybrids_.size(); ++i) {
    const HybridConfig& o = hybrids_[i];
    if (o.hybrid_id == h.hybrid_id) {
      e.at("HybridId")
          .fail("\"" + h.hybrid_id + "\" is used twice (also /Config/" + std::to_string(i) +
                "); expected each hybrid once");
    }
    // Both orders cover Offset .. Offset + 127: two hybrids of one plane of one panel overlap
    // when those ranges do (the reference's checkConfigAndGeometry()).
    if (o.panel == h.panel && o.plane == h.plane && h.offset < o.offset + kStripsPerHybrid &&
        o.offset < h.offset + kStripsPerHybrid) {
      e.at("Offset").fail(
          "strips " + std::to_string(h.offset) + ".." +
          std::to_string(h.offset + kStripsPerHybrid - 1) + " of panel " + std::to_string(h.panel) +
          " plane " + std::to_string(h.plane) + " overlap /Config/" + std::to_string(i) + "'s " +
          std::to_string(o.offset) + ".." + std::to_string(o.offset + kStripsPerHybrid - 1) +
          "; expected each strip read by one hybrid");
    }
  }
  if (hybrid_map_.index_of(h.ring, h.fen, h.hybrid) >= 0) {
    e.at("Hybrid").fail(hybrid_name(h) + " is used twice; expected each hybrid once");
  }
  hybrid_map_.add(h.ring, h.fen, h.hybrid, static_cast<std::uint16_t>(hybrids_.size()));
  wiring_.push_back(Wiring{h.offset,
                           static_cast<std::uint8_t>(h.reversed ? kStripsPerHybrid - 1 : 0),
                           h.plane, h.panel});
  hybrids_.push_back(std::move(h));
}

bool Config::channel_of(std::uint32_t panel, std::uint32_t plane, std::uint32_t coordinate,
                        Channel& out) const noexcept {
  for (std::uint32_t i = 0; i < hybrids_.size(); ++i) {
    const HybridConfig& h = hybrids_[i];
    if (h.panel != panel || h.plane != plane || coordinate < h.offset ||
        coordinate >= h.offset + kStripsPerHybrid) {
      continue;
    }
    // strip_coordinate() inverted: local = 64 * asic + channel, or its mirror when reversed.
    const std::uint32_t local = coordinate - h.offset;
    const std::uint32_t wired = h.reversed ? kStripsPerHybrid - 1 - local : local;
    out.hybrid_index = i;
    out.vmm = static_cast<std::uint8_t>(h.hybrid * 2 + wired / kStripsPerVmm);
    out.channel = static_cast<std::uint8_t>(wired % kStripsPerVmm);
    return true;
  }
  return false;
}

vmm3a::Hybrids Config::calibration_hybrids() const {
  vmm3a::Hybrids list;
  for (const HybridConfig& h : hybrids_) {
    list.ids.push_back(h.hybrid_id);
    list.names.push_back(hybrid_name(h));
  }
  list.origin = origin_;
  list.detector = "NMX";
  list.what = "nmx calibration";
  list.strict_option = "--calibration-strict on";
  return list;
}

}  // namespace efu::nmx
