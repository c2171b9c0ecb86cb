// Instrument configs and calibrations for the caen tests, written in the facility's format,
// and a sink that records events.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "efu/plugin.h"

namespace efu::caen::test {

struct Event {
  std::uint64_t pulse_ns;
  std::uint32_t tof_ns;
  std::uint32_t pixel;
  bool operator==(const Event&) const = default;
};

class RecordingSink : public EventSink {
 public:
  void add(std::uint64_t pulse_time_ns, std::uint32_t tof_ns, std::uint32_t pixel) override {
    events.push_back(Event{pulse_time_ns, tof_ns, pixel});
  }
  std::vector<Event> events;
};

// LoKI: a rear bank (GroupsN 8, YOffset 0) on rings 0 and 1 (FENOffset 0 and 2) and a side bank
// (GroupsN 4, YOffset 224) on ring 2. Resolution 256; total groups (8 + 4)·4 = 48, so the grid
// is 256 × 336.
inline const char* const kLokiConfig = R"({
  "Detector" : "loki",
  "Resolution" : 256,
  "GroupsZ" : 4,
  "ReadoutConstDelayNS" : 0,
  "MaxPulseTimeNS" : 357142855,
  "MaxTOFNS" : 1000000000,
  "Banks" : [
     {"Bank" : 0, "ID" : "rear", "GroupsN" : 8, "YOffset" : 0},
     {"Bank" : 1, "ID" : "side", "GroupsN" : 4, "YOffset" : 224}
  ],
  "Config" : [
    { "Ring" : 0, "Bank" : 0, "FENs" : 2, "FENOffset" : 0},
    { "Ring" : 1, "Bank" : 0, "FENs" : 2, "FENOffset" : 2},
    { "Ring" : 2, "Bank" : 1, "FENs" : 2, "FENOffset" : 0}
  ]
})";

inline const char* const kBifrostConfig =
    R"({"Detector": "bifrost", "MaxRing": 2, "Resolution": 300, "MaxGroup": 14, "MaxAmpl": 32767})";
inline const char* const kCspecConfig =
    R"({"Detector": "cspec", "MaxRing": 4, "Resolution": 180, "MaxGroup": 23})";
inline const char* const kMiraclesConfig =
    R"({"Detector": "miracles", "MaxRing": 3, "Resolution": 128, "MaxTOFNS": 1000000000})";

/// A calibration file: `groups` groups with the same `intervals` (one JSON array) and a zero
/// polynomial per unit, except group `special` whose polynomials are `special_poly`.
inline std::string calibration_text(const std::string& instrument, int groups, int size,
                                    const std::string& intervals, int special = -1,
                                    const std::string& special_poly = "") {
  std::string zero = "[";
  for (int u = 0; u < size; ++u) zero += std::string(u ? ", " : "") + "[0.0, 0.0, 0.0, 0.0]";
  zero += "]";
  std::string s = R"({"Calibration": {"version": 0, "instrument": ")" + instrument +
                  R"(", "groups": )" + std::to_string(groups) + R"(, "groupsize": )" +
                  std::to_string(size) + R"(, "Parameters": [)";
  for (int g = 0; g < groups; ++g) {
    s += std::string(g ? ", " : "") + R"({"groupindex": )" + std::to_string(g) +
         R"(, "intervals": )" + intervals + R"(, "polynomials": )" +
         (g == special ? special_poly : zero) + "}";
  }
  return s + "]}}";
}

inline const char* const kLokiIntervals =
    "[[0.0, 0.143], [0.144, 0.286], [0.287, 0.429], [0.43, 0.571], [0.572, 0.714], "
    "[0.715, 0.857], [0.858, 1.0]]";
// Binary fractions, so the hand arithmetic of the tests is exact.
inline const char* const kBifrostIntervals = "[[0.0, 0.25], [0.375, 0.625], [0.75, 1.0]]";

}  // namespace efu::caen::test
