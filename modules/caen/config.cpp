#include "config.h"

#include <string>

#include "caen_readout.h"
#include "efu/json_config.h"

namespace efu::caen {
namespace {

constexpr std::int64_t kMaxU32 = 0xFFFF'FFFF;

CaenConfig parse(const JsonDocument& doc, const std::string& origin) {
  const JsonNode root = doc.root();
  CaenConfig c;
  c.path = origin;
  const JsonNode detector = root.at("Detector");
  const std::string& name = detector.as_string();
  if (name == "loki") {
    c.instrument = Instrument::kLoki;
  } else if (name == "bifrost") {
    c.instrument = Instrument::kBifrost;
  } else if (name == "cspec") {
    c.instrument = Instrument::kCspec;
  } else if (name == "miracles") {
    c.instrument = Instrument::kMiracles;
  } else {
    detector.fail("'" + name +
                  "' is not a CAEN instrument; expected loki, bifrost, cspec or miracles");
  }
  // Resolution is the pixel count along a straw or tube (LoKI, CSPEC, MIRACLES) or BIFROST's
  // per-ring x stride; every shipped config has it and a pixel formula needs it.
  c.resolution = static_cast<std::uint32_t>(root.get_int("Resolution", 1, 65536));
  c.max_pulse_time_ns = static_cast<std::uint64_t>(root.get_int_or(
      "MaxPulseTimeNS", static_cast<std::int64_t>(c.max_pulse_time_ns), 0, kMaxU32));
  c.max_tof_ns = static_cast<std::uint64_t>(
      root.get_int_or("MaxTOFNS", static_cast<std::int64_t>(c.max_tof_ns), 0, kMaxU32));
  c.readout_delay_ns = root.get_int_or("ReadoutConstDelayNS", 0, -1'000'000'000, 1'000'000'000);
  c.max_ring =
      static_cast<std::uint32_t>(root.get_int_or("MaxRing", kMaxRings - 1, 0, kMaxRings - 1));
  c.max_fen = static_cast<std::uint32_t>(root.get_int_or("MaxFEN", 0, 0, 255));
  c.max_group = static_cast<std::uint32_t>(root.get_int_or("MaxGroup", 0, 0, 255));
  c.max_amplitude = root.get_int_or("MaxAmpl", c.max_amplitude, 0, c.max_amplitude);

  if (c.instrument == Instrument::kLoki) {
    c.groups_z = static_cast<std::uint32_t>(root.get_int("GroupsZ", 1, kLokiLayers * 64));
    for (const JsonNode& b : root.at("Banks").elements(1, kLokiBanks)) {
      const auto index = static_cast<std::uint32_t>(b.get_int("Bank", 0, kLokiBanks - 1));
      LokiBank& bank = c.banks[index];
      if (bank.configured)
        b.at("Bank").fail("bank " + std::to_string(index) +
                          " is given twice; expected each bank once");
      bank.configured = true;
      bank.id = b.get_string_or("ID", "");
      bank.groups_n = static_cast<std::uint32_t>(b.get_int("GroupsN", 1, 4096));
      bank.y_offset = static_cast<std::uint32_t>(b.get_int("YOffset", 0, 1'000'000));
      c.total_groups += bank.groups_n * c.groups_z;
    }
    for (const JsonNode& r : root.at("Config").elements(1, kMaxRings)) {
      const auto index = static_cast<std::uint32_t>(r.get_int("Ring", 0, kMaxRings - 1));
      LokiRing& ring = c.rings[index];
      if (ring.configured)
        r.at("Ring").fail("ring " + std::to_string(index) +
                          " is given twice; expected each ring once");
      ring.configured = true;
      ring.bank = static_cast<std::uint32_t>(r.get_int("Bank", 0, kLokiBanks - 1));
      if (!c.banks[ring.bank].configured) {
        r.at("Bank").fail("bank " + std::to_string(ring.bank) +
                          " is not in Banks[]; expected a configured bank");
      }
      ring.fens = static_cast<std::uint32_t>(r.get_int("FENs", 1, kMaxFen + 1));
      ring.fen_offset = static_cast<std::uint32_t>(r.get_int("FENOffset", 0, 255));
    }
    // ev44 pixel ids are int32: the whole grid must fit.
    const std::uint64_t pixels = std::uint64_t{c.resolution} * c.total_groups * kLokiStrawsPerGroup;
    if (pixels > 0x7FFF'FFFF) {
      root.at("Resolution")
          .fail(std::to_string(c.resolution) + " × " +
                std::to_string(c.total_groups * kLokiStrawsPerGroup) + " straws is " +
                std::to_string(pixels) + " pixels; expected at most 2147483647");
    }
  }
  return c;
}

}  // namespace

std::uint8_t detector_type(Instrument instrument) noexcept {
  switch (instrument) {
    case Instrument::kLoki:
      return kTypeLoki;
    case Instrument::kBifrost:
      return kTypeBifrost;
    case Instrument::kCspec:
      return kTypeCspec;
    case Instrument::kMiracles:
      return kTypeMiracles;
  }
  return 0;
}

const char* instrument_name(Instrument instrument) noexcept {
  switch (instrument) {
    case Instrument::kLoki:
      return "loki";
    case Instrument::kBifrost:
      return "bifrost";
    case Instrument::kCspec:
      return "cspec";
    case Instrument::kMiracles:
      return "miracles";
  }
  return "";
}

CaenConfig CaenConfig::from_file(const std::string& path) {
  return parse(JsonDocument::from_file(path, "caen geometry"), path);
}

CaenConfig CaenConfig::from_text(std::string_view text, const std::string& origin) {
  return parse(JsonDocument::from_text(text, "caen geometry", origin), origin);
}

}  // namespace efu::caen
