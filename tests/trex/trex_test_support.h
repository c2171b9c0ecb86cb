// TREX test configs, on the VMM3a test packets and recording sink of tests/common/vmm3a_packets.h
// (written byte by byte from the format's definition, not with the project's own writers). Configs
// are facility-format JSON written out as text.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "efu/ess/ess_time.h"
#include "efu/plugin.h"
#include "reference_snapshot.h"
#include "vmm3a_packets.h"

namespace efu::trex::test {

inline constexpr std::uint8_t kTrexType = 0x40;

using namespace efu::test::vmm3a;  // kPulseNs, Event, RecordingSink, put8.., decoded, ...
using PacketBuilder = efu::test::vmm3a::PacketBuilder<kTrexType>;

/// A HybridId of 32 characters ending in n.
inline std::string hybrid_id(unsigned n) {
  const std::string s = std::to_string(n);
  return "E55" + std::string(29 - s.size(), '0') + s;
}

/// One Config[] entry.
inline std::string entry(unsigned ring, const std::string& vessel, unsigned fen, unsigned hybrid,
                         const std::string& id) {
  return R"({"Ring": )" + std::to_string(ring) + R"(, "VesselId": ")" + vessel + R"(", "FEN": )" +
         std::to_string(fen) + R"(, "Hybrid": )" + std::to_string(hybrid) + R"(, "HybridId": ")" +
         id + R"("})";
}

/// The TREX test instrument (docs/trex.md "Channels and pixels" works its pixels out):
///   vessel A: full, not rotated, XOffset 12            ring 0, FENs 0 and 1, hybrids 0, 1, 2
///   vessel B: full, rotated, XOffset 24, YOffset 139    ring 0, FENs 2 and 3, hybrids 0, 1, 2
///   vessel C: short, rotated, XOffset 300, YOffset 51   ring 1, FENs 0 and 1, hybrids 0, 1
///   vessel D: short, not rotated, XOffset 300, YOffset 89, MinADC 20
///                                                       ring 1, FENs 2 and 3, hybrids 0, 1
/// Volume 384 x 140 x 16, DefaultMinADC 50, MaxGridsSpan 3.
inline std::string trex_config(const std::string& extra = "") {
  std::string entries;
  unsigned id = 0;
  const auto add = [&](unsigned ring, const char* vessel, unsigned fen, unsigned hybrids) {
    for (unsigned h = 0; h < hybrids; ++h) {
      entries += (entries.empty() ? "" : ",\n    ") + entry(ring, vessel, fen, h, hybrid_id(id++));
    }
  };
  add(0, "A", 0, 3);
  add(0, "A", 1, 3);
  add(0, "B", 2, 3);
  add(0, "B", 3, 3);
  add(1, "C", 0, 2);
  add(1, "C", 1, 2);
  add(1, "D", 2, 2);
  add(1, "D", 3, 2);
  return R"({"Detector": "TREX", "InstrumentGeometry": "TREX",
  "Vessel_Config": {
    "A": {"NumGrids": 140, "Rotation": false, "XOffset": 12},
    "B": {"NumGrids": 140, "Rotation": true, "XOffset": 24, "YOffset": 139},
    "C": {"NumGrids": 51, "Rotation": true, "XOffset": 300, "Short": true, "YOffset": 51},
    "D": {"NumGrids": 51, "Rotation": false, "XOffset": 300, "Short": true, "YOffset": 89,
          "MinADC": 20}},
  "Config": [)" +
         entries + R"(],)" + extra + R"(
  "MaxGridsSpan": 3, "DefaultMinADC": 50, "SizeX": 384, "SizeY": 140, "SizeZ": 16})";
}

/// The LET test instrument: one short vessel "0" read by rings 0 and 1, FEN 0, hybrids 0 (grids)
/// and 1 (wires), with the placeholder HybridId, volume 12 x 51 x 16. `vessel` is its
/// Vessel_Config entry.
inline std::string let_config(const std::string& vessel) {
  const std::string zero(32, '0');
  return R"({"Detector": "TREX", "InstrumentGeometry": "LET",
  "Vessel_Config": {"0": )" +
         vessel + R"(},
  "Config": [)" +
         entry(0, "0", 0, 0, zero) + "," + entry(0, "0", 0, 1, zero) + "," +
         entry(1, "0", 0, 0, zero) + "," + entry(1, "0", 0, 1, zero) + R"(],
  "DefaultMinADC": 50, "MaxGridsPerEvent": 5, "SizeX": 12, "SizeY": 51, "SizeZ": 16})";
}

/// A file holding `text`, removed with the object.
class TempFile {
 public:
  explicit TempFile(const std::string& text, const std::string& suffix = ".json") {
    char name[] = "/tmp/efu_trex_test_XXXXXX";
    const int fd = mkstemp(name);
    if (fd >= 0) close(fd);
    path_ = std::string(name) + suffix;
    std::rename(name, path_.c_str());
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// A file of the reference's src/modules/trex/configs/ at its HEAD; "" without the snapshot.
inline std::string reference_config(const std::string& name) {
  return efu::test::reference_file("src/modules/trex/configs/" + name);
}

}  // namespace efu::trex::test
