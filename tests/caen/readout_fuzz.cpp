// libFuzzer target for the CAEN readout path (tests/caen/CMakeLists.txt says how to build it;
// seeds in fuzz_seeds/readout/): the first byte picks the instrument (its shipped config and
// calibration), the rest is one ESS packet for CaenPipeline::process(). It must never read
// outside the packet, never throw, and account for every packet and readout exactly once.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "caen_pipeline.h"

namespace {

class CountingSink : public efu::EventSink {
 public:
  void add(std::uint64_t, std::uint32_t, std::uint32_t pixel) override {
    if (pixel == 0) std::abort();
    ++events;
  }
  std::uint64_t events = 0;
};

const efu::caen::LoadedInstrument& instrument(unsigned index) {
  static const std::vector<efu::caen::LoadedInstrument> all = [] {
    std::vector<efu::caen::LoadedInstrument> out;
    for (const char* name : {"loki.json", "bifrost.json", "cspec.json", "miracles.json"}) {
      efu::caen::CaenSettings s;
      s.geometry_path = efu::caen::shipped_config(name);
      out.push_back(efu::caen::load_instrument(s));
    }
    return out;
  }();
  return all[index % all.size()];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2 || size > 9000) return 0;
  efu::CounterRegistry counters;
  CountingSink sink;
  efu::caen::CaenPipeline pipeline(instrument(data[0]), data[0] >> 4, counters, sink);
  // A copy of exactly the packet's bytes, so ASan sees any read past its end.
  std::vector<std::uint8_t> packet(data + 1, data + size);
  const efu::PacketView view{packet.data(), static_cast<std::uint32_t>(packet.size())};
  pipeline.process(efu::PacketBatch(&view, 1));

  // parser.essheader.packets counts every accepted packet, heartbeats included.
  std::uint64_t header_outcomes = counters.value("parser.essheader.packets");
  for (const char* r : efu::ess::kHeaderErrorNames) {
    if (std::string(r) != "sequence")
      header_outcomes += counters.value(std::string("parser.essheader.errors.") + r);
  }
  if (header_outcomes != 1) std::abort();
  std::uint64_t readout_outcomes = counters.value("events.formed") +
                                   counters.value("readouts.errors.length") +
                                   counters.value("readouts.errors.truncated");
  for (const char* r : efu::caen::kReadoutErrorNames) {
    readout_outcomes += counters.value(std::string("readouts.errors.") + r);
  }
  if (readout_outcomes != counters.value("readouts.received")) std::abort();
  if (sink.events != counters.value("events.formed")) std::abort();
  return 0;
}
