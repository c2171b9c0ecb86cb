// Multiblade test configs, on the VMM3a test packets and recording sink of
// tests/common/vmm3a_packets.h (written byte by byte from the format's definition, not with the
// project's own writers).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "clusterer.h"
#include "efu/ess/ess_time.h"
#include "efu/plugin.h"
#include "reference_snapshot.h"
#include "vmm3a_packets.h"

namespace efu::multiblade::test {

using namespace efu::test::vmm3a;  // kPulseNs, Event, RecordingSink, put8.., decoded, ...
using PacketBuilder = efu::test::vmm3a::PacketBuilder<0x48>;

inline std::string hybrid_id(unsigned cassette) {
  const std::string n = std::to_string(cassette);
  return "TEST" + std::string(28 - n.size(), '0') + n;
}

/// A facility-format instrument config with `entries` Config[] lines (already formatted).
inline std::string instrument_config(const std::string& geometry, const std::string& entries,
                                     const std::string& extra = "") {
  return R"({"Detector": "Freia", "InstrumentGeometry": ")" + geometry +
         R"(", "Version": 1, "Comment": "test", "WireChOffset": 16,)" + extra + R"( "Config": [)" +
         entries + "]}";
}

/// One Config[] entry; Thresholds are [[even VMM], [odd VMM]] of the hybrid.
inline std::string entry(unsigned cassette, unsigned ring, unsigned fen, unsigned hybrid,
                         unsigned even_threshold = 0, unsigned odd_threshold = 0) {
  const std::string id = hybrid_id(cassette);
  return R"({"CassetteNumber": )" + std::to_string(cassette) + R"(, "Ring": )" +
         std::to_string(ring) + R"(, "FEN": )" + std::to_string(fen) + R"(, "Hybrid": )" +
         std::to_string(hybrid) + R"(, "Thresholds": [[)" + std::to_string(even_threshold) + "],[" +
         std::to_string(odd_threshold) + R"(]], "HybridId": ")" + id + R"("})";
}

/// A file of the reference system's src/modules/freia/configs/ (the facility's own instrument
/// and calibration files) at its HEAD; "" when there is none on this machine, and the test skips.
inline std::string reference_file(const std::string& name) {
  return efu::test::reference_file("src/modules/freia/configs/" + name);
}

}  // namespace efu::multiblade::test
