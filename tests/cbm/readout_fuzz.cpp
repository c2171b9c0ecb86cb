// libFuzzer target for the CBM readout path (tests/cbm/CMakeLists.txt says how to build it;
// seeds in tests/fuzz/corpus/cbm_readout/): the first byte picks the config (the shipped
// cbm.json or beer.json), the rest is one ESS packet for CbmPipeline::process(). It must never
// read outside the packet, never throw, account for every packet and readout exactly once, and
// publish only well-formed da00 arrays (each variable's bytes the product of its shape).
//
// One pipeline per config for the whole run (made when first needed); the accounting is checked
// on the counters' increments. What a pipeline carries across inputs (the last pulse, the
// histograms' windows) only widens what is reached.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cbm_pipeline.h"

namespace {

class CountingSink final : public efu::EventSink {
 public:
  void add(std::uint64_t, std::uint32_t, std::uint32_t) override { ++events; }
  std::uint64_t events = 0;
};

std::size_t element_size(efu::Da00Type t) {
  switch (t) {
    case efu::Da00Type::int8:
    case efu::Da00Type::uint8:
      return 1;
    case efu::Da00Type::int16:
    case efu::Da00Type::uint16:
      return 2;
    case efu::Da00Type::int32:
    case efu::Da00Type::uint32:
    case efu::Da00Type::float32:
      return 4;
    case efu::Da00Type::int64:
    case efu::Da00Type::uint64:
    case efu::Da00Type::float64:
      return 8;
    case efu::Da00Type::none:
      break;
  }
  std::abort();
}

class CheckingHistogramSink final : public efu::HistogramSink {
 public:
  void publish(const efu::DataArrayView& array) override {
    for (const efu::Da00Variable& v : array.variables) {
      std::size_t n = 1;
      for (const std::int64_t d : v.shape) n *= static_cast<std::size_t>(d);
      if (n * element_size(v.type) != v.bytes) std::abort();
      // Touch every byte, so ASan sees a short array.
      const auto* p = static_cast<const std::uint8_t*>(v.data);
      std::uint8_t x = 0;
      for (std::size_t i = 0; i < v.bytes; ++i) x ^= p[i];
      sink_ ^= x;
    }
    ++published;
  }
  std::uint64_t published = 0;

 private:
  std::uint8_t sink_ = 0;
};

class Sources final : public efu::SourceOutputs {
 public:
  efu::EventSink& events(std::string_view) override { return events_; }
  efu::HistogramSink& histograms(std::string_view name) override {
    auto& s = histograms_[std::string(name)];
    if (!s) s = std::make_unique<CheckingHistogramSink>();
    return *s;
  }
  std::uint64_t event_count() const { return events_.events; }

 private:
  CountingSink events_;
  std::map<std::string, std::unique_ptr<CheckingHistogramSink>> histograms_;
};

struct Harness {
  efu::OptionValues options;
  efu::CounterRegistry counters;
  CountingSink host;
  Sources sources;
  std::unique_ptr<efu::cbm::CbmShared> shared;
  std::unique_ptr<efu::cbm::CbmPipeline> pipeline;
  std::vector<const efu::Counter*> header_outcomes;   // one of these per packet
  std::vector<const efu::Counter*> readout_outcomes;  // one of these per readout
  std::vector<const efu::Counter*> accepted;
  const efu::Counter* readouts;

  explicit Harness(const char* config) {
    shared =
        efu::cbm::make_shared(efu::cbm::load_config_file(efu::cbm::shipped_config_path(config)));
    pipeline = std::make_unique<efu::cbm::CbmPipeline>(
        *shared, efu::PipelineContext{options, counters, host, 0, 1, shared.get(), &sources});
    add(header_outcomes, "parser.essheader.packets");
    for (const char* r : efu::ess::kHeaderErrorNames) {
      if (std::string(r) != "sequence") {
        add(header_outcomes, std::string("parser.essheader.errors.") + r);
      }
    }
    for (const char* name : {"readouts.errors.length", "readouts.errors.truncated"}) {
      add(readout_outcomes, name);
    }
    for (const char* r : efu::cbm::kReadoutErrorNames) {
      add(readout_outcomes, std::string("readouts.errors.") + r);
    }
    for (const char* a : efu::cbm::kAcceptedNames) {
      add(readout_outcomes, std::string("readouts.accepted.") + a);
      add(accepted, std::string("readouts.accepted.") + a);
    }
    readouts = counters.find("readouts.received");
    if (readouts == nullptr) std::abort();
  }

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
  static std::unique_ptr<Harness> harnesses[2];
  const unsigned which = data[0] & 1U;
  std::unique_ptr<Harness>& slot = harnesses[which];
  if (!slot) slot = std::make_unique<Harness>(which == 0 ? "cbm.json" : "beer.json");
  Harness& h = *slot;

  const std::uint64_t headers_before = Harness::sum(h.header_outcomes);
  const std::uint64_t outcomes_before = Harness::sum(h.readout_outcomes);
  const std::uint64_t readouts_before = h.readouts->get();
  const std::uint64_t accepted_before = Harness::sum(h.accepted);
  const std::uint64_t events_before = h.sources.event_count() + h.host.events;

  // A copy of exactly the packet's bytes, so ASan sees any read past its end.
  std::vector<std::uint8_t> packet(data + 1, data + size);
  const efu::PacketView view{packet.data(), static_cast<std::uint32_t>(packet.size())};
  h.pipeline->process(efu::PacketBatch(&view, 1));
  if (data[0] & 2U) h.pipeline->flush();

  if (Harness::sum(h.header_outcomes) - headers_before != 1) std::abort();
  if (Harness::sum(h.readout_outcomes) - outcomes_before != h.readouts->get() - readouts_before) {
    std::abort();
  }
  // Every ev44 event is an accepted readout (da00 readouts are accepted without an event).
  if (h.sources.event_count() + h.host.events - events_before >
      Harness::sum(h.accepted) - accepted_before) {
    std::abort();
  }
  return 0;
}
