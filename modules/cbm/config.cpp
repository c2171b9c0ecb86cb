#include "config.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "efu/json_config.h"

namespace efu::cbm {
namespace {

constexpr const char* kWhat = "cbm config";
constexpr std::int64_t kMaxU16 = 0xFFFF;
constexpr std::int64_t kMaxU32 = 0xFFFF'FFFFLL;
constexpr std::int64_t kMaxI32 = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kMaxI64 = std::numeric_limits<std::int64_t>::max();
// One entry per (FEN, Channel) at most.
constexpr std::size_t kMaxEntries = std::size_t{kMaxFen + 1} * 256;

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// Detector (required, as the reference checks): "CBM" or "BEER" picks the instrument.
Instrument read_instrument(const JsonNode& root) {
  const JsonNode detector = root.at("Detector");
  const std::string& name = detector.as_string();
  if (name == "CBM") return Instrument::kCbm;
  if (name == "BEER") return Instrument::kBeer;
  detector.fail(quoted(name) + " is not a beam-monitor detector; expected \"CBM\" or \"BEER\"");
}

// The scalars at the root: MaxFENId is required (the reference checks it), the rest optional
// with the reference's defaults. NumberOfMonitors (in some of the facility's files) is what the
// reference computes from Topology; it is accepted and not used.
void read_scalars(const JsonNode& root, CbmConfig& c) {
  c.max_pulse_time_diff_ns = static_cast<std::uint64_t>(root.get_int_or(
      "MaxPulseTimeDiffNS", static_cast<std::int64_t>(c.max_pulse_time_diff_ns), 1, kMaxU32));
  // 64 bits, as the files write 10 s (the reference truncates it to 32 bits: 1.41 s).
  c.max_tof_ns = static_cast<std::uint64_t>(
      root.get_int_or("MaxTOFNS", static_cast<std::int64_t>(c.max_tof_ns), 1, kMaxI64));
  c.max_ring = static_cast<std::uint8_t>(root.get_int_or("MaxRing", c.max_ring, 0, kMaxRing));
  c.monitor_ring =
      static_cast<std::uint8_t>(root.get_int_or("MonitorRing", c.monitor_ring, 0, kMaxRing));
  if (c.monitor_ring > c.max_ring) {
    const auto ring = root.find("MonitorRing");
    (ring ? *ring : root)
        .fail("MonitorRing " + std::to_string(c.monitor_ring) + " is above MaxRing " +
              std::to_string(c.max_ring) + "; expected a ring the readouts can come from");
  }
  c.max_fen_id = static_cast<std::uint8_t>(root.get_int("MaxFENId", 0, kMaxFen));
  c.normalize_ibm = root.get_bool_or("NormalizeIBMReadouts", c.normalize_ibm);
  if (const auto n = root.find("NumberOfMonitors")) n->as_int(0, kMaxI32);
}

// Type: "EVENT_0D", "EVENT_2D" or "IBM", any case (the reference upper-cases it).
MonitorType read_type(const JsonNode& entry) {
  const JsonNode node = entry.at("Type");
  const std::string name = upper(node.as_string());
  if (name == "EVENT_0D") return MonitorType::kEvent0D;
  if (name == "EVENT_2D") return MonitorType::kEvent2D;
  if (name == "IBM") return MonitorType::kIbm;
  node.fail(quoted(node.as_string()) +
            " is not a CBM type; expected \"EVENT_0D\", \"EVENT_2D\" or \"IBM\"");
}

// Schema: "ev44" or "da00", any case. Required: the reference refuses an entry without it.
Schema read_schema(const JsonNode& entry) {
  const auto node = entry.find("Schema");
  if (!node) {
    entry.fail(
        "missing \"Schema\"; expected \"ev44\" or \"da00\" (every CBM Topology entry "
        "names its schema)");
  }
  const std::string name = upper(node->as_string());
  if (name == "EV44") return Schema::kEv44;
  if (name == "DA00") return Schema::kDa00;
  node->fail(quoted(node->as_string()) + " is not a schema; expected \"ev44\" or \"da00\"");
}

// The da00 histogram: MaxTofBin (ns, the TOF range) and BinCount required; AggregatedFrames
// (default 1) and AggregationMode (0 sum, 1 average; default 0) optional.
void read_histogram(const JsonNode& e, Monitor& m) {
  m.max_tof_bin = static_cast<std::int32_t>(e.get_int("MaxTofBin", 1, kMaxI32));
  m.bin_count = static_cast<std::int32_t>(e.get_int("BinCount", 1, kMaxBinCount));
  if (m.max_tof_bin < m.bin_count) {
    // Bins of 0 ns: the reference divides by that width on every readout.
    e.at("BinCount")
        .fail(std::to_string(m.bin_count) + " is above MaxTofBin " + std::to_string(m.max_tof_bin) +
              "; expected bins at least 1 ns wide (BinCount <= MaxTofBin)");
  }
  m.aggregated_frames =
      static_cast<std::uint32_t>(e.get_int_or("AggregatedFrames", 1, 1, kMaxAggregatedFrames));
  m.aggregation = static_cast<AggregationMode>(e.get_int_or("AggregationMode", 0, 0, 1));
}

// EVENT_2D: Width and Height (1..65535) required, PixelOffset optional; the largest pixel,
// width * height + PixelOffset, must fit the 32-bit pixel id.
void read_2d(const JsonNode& e, Monitor& m) {
  m.width = static_cast<std::uint16_t>(e.get_int("Width", 1, kMaxU16));
  m.height = static_cast<std::uint16_t>(e.get_int("Height", 1, kMaxU16));
  m.pixel_offset = static_cast<std::uint32_t>(e.get_int_or("PixelOffset", 0, 0, kMaxI32));
  const std::uint64_t last = std::uint64_t{m.width} * m.height + m.pixel_offset;
  if (last > static_cast<std::uint64_t>(kMaxU32)) {
    e.at("PixelOffset")
        .fail(std::to_string(m.pixel_offset) + " makes the largest pixel " + std::to_string(last) +
              "; expected Width * Height + PixelOffset to fit 32 bits");
  }
}

// The keys of an entry of this type and schema, so that a misspelt or misplaced key (a Width on
// an IBM entry) is refused instead of ignored.
void check_entry_keys(const JsonNode& e, MonitorType type, Schema schema) {
  switch (type) {
    case MonitorType::kEvent0D:
      if (schema == Schema::kDa00) {
        e.check_keys({"FEN", "Channel", "Type", "Source", "Schema", "PixelOffset", "MaxTofBin",
                      "BinCount", "AggregatedFrames", "AggregationMode"});
      } else {
        e.check_keys({"FEN", "Channel", "Type", "Source", "Schema", "PixelOffset"});
      }
      return;
    case MonitorType::kEvent2D:
      e.check_keys(
          {"FEN", "Channel", "Type", "Source", "Schema", "PixelOffset", "Width", "Height"});
      return;
    case MonitorType::kIbm:
      e.check_keys({"FEN", "Channel", "Type", "Source", "Schema", "MaxTofBin", "BinCount",
                    "AggregatedFrames", "AggregationMode"});
      return;
  }
}

// The per-type parameters, with the reference's rules and the refusals of docs/cbm.md.
void read_parameters(const JsonNode& e, Monitor& m) {
  check_entry_keys(e, m.type, m.schema);
  switch (m.type) {
    case MonitorType::kEvent0D:
      if (m.schema == Schema::kDa00) {
        // A histogram of counts: the reference would take PixelOffset as the TOF range and
        // leave BinCount 0 (its Topology keeps both in one union); efu asks for the histogram.
        m.pixel_offset = static_cast<std::uint32_t>(e.get_int_or("PixelOffset", 0, 0, kMaxI32));
        read_histogram(e, m);
      } else {
        m.pixel_offset = static_cast<std::uint32_t>(e.get_int("PixelOffset", 0, kMaxI32));
      }
      return;
    case MonitorType::kEvent2D:
      if (m.schema != Schema::kEv44) {
        e.at("Schema").fail(quoted(e.at("Schema").as_string()) +
                            " is not possible for an EVENT_2D monitor; expected \"ev44\" "
                            "(the reference allows only ev44 for 2D)");
      }
      read_2d(e, m);
      return;
    case MonitorType::kIbm:
      read_histogram(e, m);
      return;
  }
}

// BEER (the reference's beer::Config): every entry is EVENT_2D into ev44; Type and Schema may be
// left out, and if given must say exactly that.
void read_beer_kind(const JsonNode& e, Monitor& m) {
  m.type = MonitorType::kEvent2D;
  m.schema = Schema::kEv44;
  if (const auto t = e.find("Type"); t && upper(t->as_string()) != "EVENT_2D") {
    t->fail(quoted(t->as_string()) + " is not possible for BEER; expected \"EVENT_2D\" or no Type");
  }
  if (const auto s = e.find("Schema"); s && upper(s->as_string()) != "EV44") {
    s->fail(quoted(s->as_string()) + " is not possible for BEER; expected \"ev44\" or no Schema");
  }
}

std::string read_source(const JsonNode& e, const CbmConfig& c) {
  const JsonNode node = e.at("Source");
  const std::string& name = node.as_string();
  if (name.empty()) node.fail("\"\" is empty; expected the source name of the monitor's stream");
  for (const Monitor& other : c.monitors) {
    if (other.source == name) {
      node.fail(quoted(name) + " is used twice; expected each monitor to publish its own source");
    }
  }
  return name;
}

Monitor read_entry(const JsonNode& e, const CbmConfig& c) {
  if (!e.is_object()) e.fail("is not an object; expected a monitor entry");
  Monitor m;
  m.fen = static_cast<std::uint8_t>(e.get_int("FEN", 0, c.max_fen_id));
  m.channel = static_cast<std::uint8_t>(e.get_int("Channel", 0, 0xFF));
  if (c.find(m.fen, m.channel) >= 0) {
    e.at("Channel").fail("FEN " + std::to_string(m.fen) + ", Channel " + std::to_string(m.channel) +
                         " is used twice; expected each monitor channel once");
  }
  if (c.instrument == Instrument::kBeer) {
    read_beer_kind(e, m);
  } else {
    m.type = read_type(e);
    m.schema = read_schema(e);
  }
  m.source = read_source(e, c);
  read_parameters(e, m);
  return m;
}

CbmConfig load(const JsonDocument& doc) {
  CbmConfig c;
  c.origin = doc.name();
  const JsonNode root = doc.root();
  if (!root.is_object()) root.fail("is not an object; expected the beam-monitor config object");
  root.check_keys({"Detector", "MaxPulseTimeDiffNS", "MaxTOFNS", "MonitorRing", "MaxRing",
                   "MaxFENId", "NormalizeIBMReadouts", "NumberOfMonitors", "Topology"});
  c.instrument = read_instrument(root);
  read_scalars(root, c);
  for (const JsonNode& e : root.at("Topology").elements(1, kMaxEntries)) {
    c.monitors.push_back(read_entry(e, c));
  }
  return c;
}

}  // namespace

const char* instrument_name(Instrument i) noexcept {
  return i == Instrument::kBeer ? "BEER" : "CBM";
}

std::uint8_t detector_type(Instrument i) noexcept {
  return i == Instrument::kBeer ? kBeerDetectorType : kCbmDetectorType;
}

const char* schema_name(Schema s) noexcept { return s == Schema::kDa00 ? "da00" : "ev44"; }

const char* type_name(MonitorType t) noexcept {
  switch (t) {
    case MonitorType::kEvent0D:
      return "EVENT_0D";
    case MonitorType::kEvent2D:
      return "EVENT_2D";
    case MonitorType::kIbm:
      return "IBM";
  }
  return "?";
}

int CbmConfig::find(std::uint8_t fen, std::uint8_t channel) const noexcept {
  for (std::size_t i = 0; i < monitors.size(); ++i) {
    if (monitors[i].fen == fen && monitors[i].channel == channel) return static_cast<int>(i);
  }
  return -1;
}

CbmConfig load_config_file(const std::string& path) {
  return load(JsonDocument::from_file(path, kWhat));
}

CbmConfig load_config_json(std::string_view text, const std::string& origin) {
  return load(JsonDocument::from_text(text, kWhat, origin));
}

}  // namespace efu::cbm
