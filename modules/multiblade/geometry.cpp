#include "geometry.h"

#include <algorithm>
#include <cctype>

#include "efu/errors.h"
#include "efu/json_config.h"
#include "efu/vmm3a/hybrid_location.h"

namespace efu::multiblade {
namespace {

constexpr const char* kWhat = "multiblade instrument config";
// The facility's default when a file does not set MaxPulseTimeNS: five pulse periods.
constexpr std::int64_t kDefaultMaxPulseTimeNs = 5 * 71'428'571LL;

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

// Detector, InstrumentGeometry and Version: the pixel rules the file asks for.
Instrument read_rules(const JsonNode& root) {
  const JsonNode detector = root.at("Detector");
  if (detector.as_string() != "Freia") {
    detector.fail("\"" + detector.as_string() +
                  "\" is not a Multi-Blade detector; expected \"Freia\" (the facility's name for "
                  "the Freia, Estia, AMOR and TBL-MB family)");
  }
  const JsonNode geometry = root.at("InstrumentGeometry");
  const std::string name = upper(geometry.as_string());
  Instrument rules = Instrument::kFreia;
  if (name == "FREIA") {
    rules = Instrument::kFreia;
  } else if (name == "ESTIA") {
    rules = Instrument::kEstia;
  } else if (name == "AMOR") {
    rules = Instrument::kAmor;
  } else {
    geometry.fail("\"" + geometry.as_string() + "\" is unknown; expected Freia, Estia or AMOR");
  }
  const JsonNode version = root.at("Version");
  if (version.as_int(0, 1'000'000) != 1) version.fail("is not 1; expected version 1");
  return rules;
}

// How an instrument's cassettes are laid out and wired.
struct Layout {
  ess::LogicalGeometry logical;
  std::uint32_t wire_vmm_parity;
  bool wires_reversed;
  std::uint32_t max_cassette;
};

Layout layout_of(Instrument rules) {
  switch (rules) {
    case Instrument::kEstia:
      // 48 cassettes side by side along x (their wires), two such rows along y (strips).
      return {ess::LogicalGeometry{48 * kWiresPerCassette, 2 * kStripsPerCassette}, 1, false, 95};
    case Instrument::kAmor:
    case Instrument::kTblMb:
      return {ess::LogicalGeometry{kStripsPerCassette, 14 * kWiresPerCassette}, 1, true, 13};
    case Instrument::kFreia:
      break;
  }
  return {ess::LogicalGeometry{kStripsPerCassette, 32 * kWiresPerCassette}, 0, true, 31};
}

// One Config[] entry, each field in range; the offsets are left for add_cassette().
CassetteConfig read_cassette(const JsonNode& e, std::uint32_t max_cassette) {
  if (!e.is_object()) e.fail("is not an object; expected a cassette entry");
  e.check_keys({"CassetteNumber", "Ring", "FEN", "Hybrid", "HybridId", "Thresholds"});
  CassetteConfig c{};
  c.cassette_number = static_cast<std::uint32_t>(e.get_int("CassetteNumber", 0, max_cassette));
  vmm3a::HybridLocation at = vmm3a::read_hybrid_location(e);
  c.ring = at.ring;
  c.fen = at.fen;
  c.hybrid = at.hybrid;
  c.hybrid_id = std::move(at.hybrid_id);
  const JsonNode thresholds = e.at("Thresholds");
  const auto per_vmm = thresholds.elements(2, 2);
  for (unsigned v = 0; v < 2; ++v) {
    const auto one = per_vmm[v].elements(1, 1);
    c.thresholds[v] = static_cast<std::uint16_t>(one[0].as_int(0, 1023));
  }
  return c;
}

}  // namespace

const char* instrument_name(Instrument i) noexcept {
  switch (i) {
    case Instrument::kEstia:
      return "Estia";
    case Instrument::kAmor:
      return "AMOR";
    case Instrument::kTblMb:
      return "TBL-MB";
    case Instrument::kFreia:
      break;
  }
  return "Freia";
}

Geometry Geometry::from_file(const std::string& path) {
  return load(JsonDocument::from_file(path, kWhat));
}

Geometry Geometry::from_json(std::string_view text, const std::string& origin) {
  return load(JsonDocument::from_text(text, kWhat, origin));
}

int Geometry::find_hybrid(std::string_view id) const noexcept {
  for (std::size_t i = 0; i < cassettes_.size(); ++i) {
    if (cassettes_[i].hybrid_id == id) return static_cast<int>(i);
  }
  return -1;
}

void Geometry::select_instrument(Instrument instrument) {
  const bool ok = instrument == Instrument::kFreia
                      ? rules_ == Instrument::kFreia || rules_ == Instrument::kAmor
                  : instrument == Instrument::kTblMb ? rules_ == Instrument::kAmor
                                                     : rules_ == instrument;
  if (!ok) {
    throw ConfigError(origin_ + ": /InstrumentGeometry: \"" + instrument_name(rules_) +
                      "\" cannot run as instrument " + instrument_name(instrument) + "; expected " +
                      (instrument == Instrument::kFreia   ? "Freia or AMOR"
                       : instrument == Instrument::kTblMb ? "AMOR"
                                                          : instrument_name(instrument)));
  }
  instrument_ = instrument;
}

Geometry Geometry::load(const JsonDocument& doc) {
  Geometry g;
  const JsonNode root = doc.root();
  g.origin_ = doc.name();
  if (!root.is_object()) root.fail("is not an object; expected the instrument config object");
  g.rules_ = read_rules(root);
  g.instrument_ = g.rules_;

  g.wire_ch_offset_ = static_cast<std::uint32_t>(
      root.get_int_or("WireChOffset", 16, 0, kChannelsPerVmm - kWiresPerCassette));
  g.max_pulse_time_ns_ = static_cast<std::uint64_t>(
      root.get_int_or("MaxPulseTimeNS", kDefaultMaxPulseTimeNs, 1, 0xFFFF'FFFFLL));
  g.max_gap_wire_ =
      static_cast<std::uint16_t>(root.get_int_or("MaxGapWire", 0, 0, kWiresPerCassette));
  g.max_gap_strip_ =
      static_cast<std::uint16_t>(root.get_int_or("MaxGapStrip", 0, 0, kStripsPerCassette));
  g.clustering_gap_ns_ =
      static_cast<std::uint64_t>(root.get_int_or("MaxClusteringTimeGap", 0, 1, 1'000'000'000));
  g.matching_gap_ns_ =
      static_cast<std::uint64_t>(root.get_int_or("MaxMatchingTimeGap", 0, 1, 1'000'000'000));

  const Layout layout = layout_of(g.rules_);
  g.logical_ = layout.logical;
  g.wire_vmm_parity_ = layout.wire_vmm_parity;
  g.wires_reversed_ = layout.wires_reversed;

  std::vector<std::uint8_t> cassette_seen(layout.max_cassette + 1, 0);
  const auto entries = root.at("Config").elements(1, layout.max_cassette + 1);
  for (const JsonNode& e : entries) {
    g.add_cassette(e, read_cassette(e, layout.max_cassette), cassette_seen);
  }
  return g;
}

void Geometry::add_cassette(const JsonNode& e, CassetteConfig c,
                            std::vector<std::uint8_t>& cassette_seen) {
  if (cassette_seen[c.cassette_number] != 0) {
    e.at("CassetteNumber")
        .fail("cassette " + std::to_string(c.cassette_number) +
              " is used twice; expected each cassette once");
  }
  cassette_seen[c.cassette_number] = 1;
  if (find_hybrid(c.hybrid_id) >= 0) {
    e.at("HybridId").fail("\"" + c.hybrid_id + "\" is used twice; expected each hybrid once");
  }
  if (hybrids_.index_of(c.ring, c.fen, c.hybrid) >= 0) {
    e.at("Hybrid").fail("ring " + std::to_string(c.ring) + ", FEN " + std::to_string(c.fen) +
                        ", hybrid " + std::to_string(c.hybrid) +
                        " is used twice; expected each hybrid once");
  }
  if (rules_ == Instrument::kEstia) {
    c.wire_offset = static_cast<std::uint16_t>((c.cassette_number % 48) * kWiresPerCassette);
    c.strip_offset = static_cast<std::uint16_t>((c.cassette_number / 48) * kStripsPerCassette);
  } else {
    c.wire_offset = static_cast<std::uint16_t>(c.cassette_number * kWiresPerCassette);
    c.strip_offset = 0;
  }
  hybrids_.add(c.ring, c.fen, c.hybrid, static_cast<std::uint16_t>(cassettes_.size()));
  cassettes_.push_back(std::move(c));
}

}  // namespace efu::multiblade
