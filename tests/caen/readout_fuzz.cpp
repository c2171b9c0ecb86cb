// libFuzzer target for the CAEN readout path (tests/caen/CMakeLists.txt says how to build it;
// seeds in tests/fuzz/corpus/caen_readout/): the first byte picks the instrument (its shipped config and
// calibration) and the amplitude threshold, the rest is one ESS packet for
// CaenPipeline::process(). It must never read outside the packet, never throw, and account for
// every packet and readout exactly once.
//
// One pipeline per first byte for the whole run (made when first needed), and the accounting is
// checked on the counters' increments: a pipeline and registry per input cost ten times the
// packet. What a pipeline carries across inputs (the last pulse time, the sequence number) only
// widens what is reached.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
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

/// A pipeline with its own counters, and the counters each outcome adds to.
struct Harness {
  efu::CounterRegistry counters;
  CountingSink sink;
  efu::caen::CaenPipeline pipeline;
  std::vector<const efu::Counter*> header_outcomes;   // one of these per packet
  std::vector<const efu::Counter*> readout_outcomes;  // one of these per readout
  const efu::Counter* readouts;
  const efu::Counter* events;

  explicit Harness(std::uint8_t first) : pipeline(instrument(first), first >> 4, counters, sink) {
    // parser.essheader.packets counts every accepted packet, heartbeats included; a sequence
    // gap is counted beside the packet's outcome, not instead of it.
    add(header_outcomes, "parser.essheader.packets");
    for (const char* r : efu::ess::kHeaderErrorNames) {
      if (std::string(r) != "sequence")
        add(header_outcomes, std::string("parser.essheader.errors.") + r);
    }
    for (const char* name :
         {"events.formed", "readouts.errors.length", "readouts.errors.truncated"}) {
      add(readout_outcomes, name);
    }
    for (const char* r : efu::caen::kReadoutErrorNames) {
      add(readout_outcomes, std::string("readouts.errors.") + r);
    }
    readouts = counters.find("readouts.received");
    events = counters.find("events.formed");
    if (readouts == nullptr || events == nullptr) std::abort();
  }

  // The pipeline's own instance of a counter it registered (registering the name again here
  // would make a second instance that nothing increments).
  void add(std::vector<const efu::Counter*>& to, const std::string& name) {
    const efu::Counter* c = counters.find(name);
    if (c == nullptr) std::abort();  // a name the accounting needs and the pipeline lacks
    to.push_back(c);
  }

  static std::uint64_t sum(const std::vector<const efu::Counter*>& counters) {
    std::uint64_t total = 0;
    for (const efu::Counter* c : counters) total += c->get();
    return total;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2 || size > 9000) return 0;
  static std::unique_ptr<Harness> harnesses[256];
  std::unique_ptr<Harness>& slot = harnesses[data[0]];
  if (!slot) slot = std::make_unique<Harness>(data[0]);
  Harness& h = *slot;

  const std::uint64_t headers_before = Harness::sum(h.header_outcomes);
  const std::uint64_t outcomes_before = Harness::sum(h.readout_outcomes);
  const std::uint64_t readouts_before = h.readouts->get();
  const std::uint64_t sink_before = h.sink.events;
  const std::uint64_t events_before = h.events->get();

  // A copy of exactly the packet's bytes, so ASan sees any read past its end.
  std::vector<std::uint8_t> packet(data + 1, data + size);
  const efu::PacketView view{packet.data(), static_cast<std::uint32_t>(packet.size())};
  h.pipeline.process(efu::PacketBatch(&view, 1));

  if (Harness::sum(h.header_outcomes) - headers_before != 1) std::abort();
  if (Harness::sum(h.readout_outcomes) - outcomes_before != h.readouts->get() - readouts_before) {
    std::abort();
  }
  if (h.sink.events - sink_before != h.events->get() - events_before) std::abort();
  return 0;
}
