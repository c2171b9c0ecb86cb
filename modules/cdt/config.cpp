#include "config.h"

#include <limits>
#include <optional>
#include <string>

#include "efu/json_config.h"

namespace efu::cdt {
namespace {

constexpr std::array<Instrument, 3> kInstruments{Instrument::kDream, Instrument::kMagic,
                                                 Instrument::kHeimdal};

Instrument parse_instrument(const JsonNode& detector) {
  const std::string& name = detector.as_string();
  for (const Instrument i : kInstruments) {
    if (name == instrument_name(i)) return i;
  }
  detector.fail("'" + name + "' is not a CDT instrument; expected DREAM, MAGIC or HEIMDAL");
}

/// The module types `instrument` has, for error messages: "BwEndCap, FwEndCap, ...".
std::string type_names(Instrument instrument) {
  std::string names;
  for (const ModuleTypeInfo& t : kModuleTypeInfo) {
    if (t.instrument != instrument) continue;
    if (!names.empty()) names += ", ";
    names += t.name;
  }
  return names;
}

ModuleType parse_type(const JsonNode& type, Instrument instrument) {
  const std::string& name = type.as_string();
  for (std::size_t i = 0; i < kModuleTypes; ++i) {
    if (name != kModuleTypeInfo[i].name) continue;
    if (kModuleTypeInfo[i].instrument != instrument) break;
    return static_cast<ModuleType>(i);
  }
  type.fail("'" + name + "' is not a " + instrument_name(instrument) +
            " module type; expected one of " + type_names(instrument));
}

/// Index or Index2 (`key`): 0 when absent, else in 0..max, or kNoCuboid where `may_be_absent`.
std::uint8_t parse_index(const JsonNode& entry, std::string_view key, const ModuleTypeInfo& t,
                         std::uint8_t max, bool may_be_absent) {
  const std::optional<JsonNode> node = entry.find(key);
  if (!node) return 0;
  const std::int64_t v = node->as_int(0, 255);
  if (v > max && !(may_be_absent && v == kNoCuboid)) {
    node->fail(std::to_string(v) + " is out of range for " + t.name + "; expected 0.." +
               std::to_string(max) + (may_be_absent ? " or 255 (no second cuboid)" : ""));
  }
  return static_cast<std::uint8_t>(v);
}

void parse_entry(const JsonNode& entry, CdtConfig& c) {
  entry.check_keys({"Ring", "FEN", "Type", "Index", "Index2"});
  const auto ring = static_cast<std::uint32_t>(entry.get_int("Ring", 0, kRings - 1));
  const auto fen = static_cast<std::uint32_t>(entry.get_int("FEN", 0, kFens - 1));
  Module& m = c.modules[ring * kFens + fen];
  if (m.configured) {
    entry.at("FEN").fail("ring " + std::to_string(ring) + " FEN " + std::to_string(fen) +
                         " is given twice; expected each (Ring, FEN) pair once");
  }
  m.type = parse_type(entry.at("Type"), c.instrument);
  const ModuleTypeInfo& t = info(m.type);
  m.index = parse_index(entry, "Index", t, t.index_max, false);
  m.index2 = parse_index(entry, "Index2", t, t.index2_max, t.index2_may_be_absent);
  m.configured = true;
  ++c.configured;
}

CdtConfig parse(const JsonDocument& doc, const std::string& origin) {
  const JsonNode root = doc.root();
  CdtConfig c;
  c.path = origin;
  c.instrument = parse_instrument(root.at("Detector"));
  c.max_pulse_time_diff_ns = static_cast<std::uint64_t>(
      root.get_int_or("MaxPulseTimeDiffNS", static_cast<std::int64_t>(c.max_pulse_time_diff_ns), 0,
                      std::numeric_limits<std::int64_t>::max()));
  for (const JsonNode& entry : root.at("Config").elements(1, kRings * kFens)) {
    parse_entry(entry, c);
  }
  return c;
}

}  // namespace

const char* instrument_name(Instrument instrument) noexcept {
  switch (instrument) {
    case Instrument::kDream:
      return "DREAM";
    case Instrument::kMagic:
      return "MAGIC";
    case Instrument::kHeimdal:
      return "HEIMDAL";
  }
  return "";
}

CdtConfig CdtConfig::from_file(const std::string& path) {
  return parse(JsonDocument::from_file(path, "cdt geometry"), path);
}

CdtConfig CdtConfig::from_text(std::string_view text, const std::string& origin) {
  return parse(JsonDocument::from_text(text, "cdt geometry", origin), origin);
}

}  // namespace efu::cdt
