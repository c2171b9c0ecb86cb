// NMX test configs, on the VMM3a test packets and recording sink of tests/common/vmm3a_packets.h
// (written byte by byte from the format's definition, not with the project's own writers).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "efu/ess/ess_time.h"
#include "efu/plugin.h"
#include "vmm3a_packets.h"

namespace efu::nmx::test {

using namespace efu::test::vmm3a;  // kPulseNs, Event, RecordingSink, put8.., decoded, ...
using PacketBuilder = efu::test::vmm3a::PacketBuilder<0x44>;

/// A small instrument config: panel 0 reads x on ring 0 FEN 0 hybrid 0 (strips 0..127, normal)
/// and y on FEN 0 hybrid 1 (strips 0..127, reversed); `extra` is spliced into the top level
/// (e.g. "\"MinSpanX\": 2,").
inline std::string small_config(const std::string& extra = "") {
  return R"({"Detector": "NMX", "InstrumentGeometry": "NMX", "SizeX": 1280, "SizeY": 1280,
  "DefaultMinADC": 50, )" +
         extra + R"(
  "Config": [
    {"Ring": 0, "FEN": 0, "Hybrid": 0, "Plane": 0, "Offset": 0, "ReversedChannels": false,
     "Panel": 0, "HybridId": "E5533333222222221111111100000000"},
    {"Ring": 0, "FEN": 0, "Hybrid": 1, "Plane": 1, "Offset": 0, "ReversedChannels": true,
     "Panel": 0, "HybridId": "E5533333222222221111111100000001"}]})";
}

}  // namespace efu::nmx::test
