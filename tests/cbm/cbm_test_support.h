// CBM test support: readouts written byte by byte from the format's definition (docs/cbm.md
// "Readout"; not with modules/cbm/cbm_readout.h, so a bug there cannot hide behind a matching bug
// here) in the ESS packets of tests/common/vmm3a_packets.h, the test instrument's config, and
// sinks that record what each named source receives (ev44 events, da00 messages).
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cbm_pipeline.h"
#include "efu/counters.h"
#include "efu/options.h"
#include "efu/plugin.h"
#include "recorded_da00.h"
#include "vmm3a_packets.h"

namespace efu::cbm::test {

using efu::test::vmm3a::decoded;
using efu::test::vmm3a::Event;
using efu::test::vmm3a::kPeriodNs;
using efu::test::vmm3a::kPulseNs;
using efu::test::vmm3a::put16;
using efu::test::vmm3a::put32;
using efu::test::vmm3a::put8;
using efu::test::vmm3a::quantised_tof;
using efu::test::vmm3a::RecordingSink;
using CbmPacket = efu::test::vmm3a::PacketBuilder<0x10>;
using BeerPacket = efu::test::vmm3a::PacketBuilder<0x50>;

/// The 20 bytes of one CBM readout: FiberId, FENId, DataLength, TimeHigh, TimeLow, Type, Channel,
/// ADC, then the four type-specific bytes (`tail`: XPos | YPos << 16 for 2D, NADC | MCASum << 24
/// for IBM), all little-endian.
inline std::vector<std::uint8_t> readout(std::uint8_t fiber, std::uint8_t fen, std::uint16_t length,
                                         std::uint32_t high, std::uint32_t low, std::uint8_t type,
                                         std::uint8_t channel, std::uint16_t adc,
                                         std::uint32_t tail) {
  std::vector<std::uint8_t> b;
  put8(b, fiber);
  put8(b, fen);
  put16(b, length);
  put32(b, high);
  put32(b, low);
  put8(b, type);
  put8(b, channel);
  put16(b, adc);
  put32(b, tail);
  return b;
}

/// The monitors' fiber: ring 11 (MonitorRing of the test config) is fibers 22 and 23.
inline constexpr std::uint8_t kFiber = 22;

/// A readout of `type` at pulse + tof_ns (on the nearest tick) on the monitor ring.
inline std::vector<std::uint8_t> at(std::uint64_t pulse_ns, std::uint64_t tof_ns, std::uint8_t fen,
                                    std::uint8_t channel, std::uint8_t type, std::uint32_t tail = 0,
                                    std::uint8_t fiber = kFiber) {
  const ess::EssTime t = ess::to_ess(pulse_ns + tof_ns);
  return readout(fiber, fen, 20, t.high, t.low, type, channel, 0, tail);
}
inline std::uint32_t position(std::uint16_t x, std::uint16_t y) {
  return std::uint32_t{x} | std::uint32_t{y} << 16;
}
inline std::uint32_t ibm(std::uint32_t nadc, std::uint8_t mca_sum) {
  return (nadc & 0xFFFFFFU) | std::uint32_t{mca_sum} << 24;
}

/// The test instrument (MonitorRing 11, MaxFENId 3, MaxTOFNS 1 s):
///   FEN 0 Ch 0  EVENT_0D ev44  "m0d"      PixelOffset 7
///   FEN 0 Ch 1  EVENT_0D da00  "h0d"      1 ms in 10 bins
///   FEN 1 Ch 0  EVENT_2D ev44  "m2d"      512 × 256, PixelOffset 1024
///   FEN 2 Ch 0  IBM      ev44  "ibm_ev"
///   FEN 2 Ch 1  IBM      da00  "ibm_sum"  1 ms in 10 bins, 2 frames summed
///   FEN 2 Ch 2  IBM      da00  "ibm_avg"  1 ms in 10 bins, 2 frames averaged
/// `root` is inserted among the root's keys (e.g. R"("MaxRing": 10,)").
inline std::string cbm_config(const std::string& root = "") {
  return R"({"Detector": "CBM", "MaxPulseTimeDiffNS": 1000000000, "MaxTOFNS": 1000000000,
  "MonitorRing": 11, "MaxFENId": 3, )" +
         root + R"(
  "Topology": [
    {"FEN": 0, "Channel": 0, "Type": "EVENT_0D", "Source": "m0d", "Schema": "ev44", "PixelOffset": 7},
    {"FEN": 0, "Channel": 1, "Type": "EVENT_0D", "Source": "h0d", "Schema": "da00", "MaxTofBin": 1000000, "BinCount": 10},
    {"FEN": 1, "Channel": 0, "Type": "EVENT_2D", "Source": "m2d", "Schema": "ev44", "PixelOffset": 1024, "Width": 512, "Height": 256},
    {"FEN": 2, "Channel": 0, "Type": "IBM", "Source": "ibm_ev", "Schema": "ev44", "MaxTofBin": 1000000, "BinCount": 10},
    {"FEN": 2, "Channel": 1, "Type": "IBM", "Source": "ibm_sum", "Schema": "da00", "MaxTofBin": 1000000, "BinCount": 10, "AggregatedFrames": 2},
    {"FEN": 2, "Channel": 2, "Type": "IBM", "Source": "ibm_avg", "Schema": "da00", "MaxTofBin": 1000000, "BinCount": 10, "AggregatedFrames": 2, "AggregationMode": 1}
  ]})";
}

/// BEER: two 2D monitors 512 × 512 on ring 11, FEN 0 Channels 0 and 1 (PixelOffset 0, 262144).
inline std::string beer_config() {
  return R"({"Detector": "BEER", "MaxFENId": 1, "MaxTOFNS": 1000000000,
  "Topology": [
    {"FEN": 0, "Channel": 0, "Source": "beer1", "PixelOffset": 0, "Width": 512, "Height": 512},
    {"FEN": 0, "Channel": 1, "Source": "beer2", "PixelOffset": 262144, "Width": 512, "Height": 512}
  ]})";
}

// --- da00 messages, copied out of the views (tests/common/recorded_da00.h) ----------------

using Message = efu::test::RecordedArray;
using Variable = efu::test::RecordedVariable;
using efu::test::RecordingHistogramSink;

/// The host's named sources, recorded per name; asking twice for a name gives the same sink.
class FakeSources final : public SourceOutputs {
 public:
  EventSink& events(std::string_view name) override {
    auto& s = event_sinks[std::string(name)];
    if (!s) s = std::make_unique<RecordingSink>();
    return *s;
  }
  HistogramSink& histograms(std::string_view name) override {
    auto& s = histogram_sinks[std::string(name)];
    if (!s) s = std::make_unique<RecordingHistogramSink>();
    return *s;
  }
  const std::vector<Event>& events_of(const std::string& name) const {
    static const std::vector<Event> none;
    const auto it = event_sinks.find(name);
    return it == event_sinks.end() ? none : it->second->events;
  }
  const std::vector<Message>& messages_of(const std::string& name) const {
    static const std::vector<Message> none;
    const auto it = histogram_sinks.find(name);
    return it == histogram_sinks.end() ? none : it->second->messages;
  }
  std::map<std::string, std::unique_ptr<RecordingSink>> event_sinks;
  std::map<std::string, std::unique_ptr<RecordingHistogramSink>> histogram_sinks;
};

/// A pipeline on a config text, with its counters, its sources and the host's default sink.
struct Harness {
  explicit Harness(const std::string& config_text)
      : shared(make_shared(load_config_json(config_text, "test.json"))),
        pipeline(*shared,
                 PipelineContext{options, counters, host_events, 0, 1, shared.get(), &sources}) {}

  void feed(const std::vector<std::uint8_t>& packet) {
    const PacketView view{packet.data(), static_cast<std::uint32_t>(packet.size())};
    pipeline.process(PacketBatch(&view, 1));
  }
  std::uint64_t value(const std::string& name) const { return counters.value(name); }
  /// Every counter's value by name.
  std::map<std::string, std::uint64_t> snapshot() const {
    std::map<std::string, std::uint64_t> out;
    for (const CounterSample& s : counters.sample()) out[s.name] = s.value;
    return out;
  }
  /// readouts.received minus every readout error and accepted readout: 0 when each readout
  /// landed in exactly one counter.
  std::int64_t unaccounted() const {
    std::int64_t n = static_cast<std::int64_t>(value("readouts.received"));
    for (const CounterSample& s : counters.sample()) {
      if (s.name.rfind("readouts.errors.", 0) == 0 || s.name.rfind("readouts.accepted.", 0) == 0) {
        n -= static_cast<std::int64_t>(s.value);
      }
    }
    return n;
  }

  OptionValues options;
  CounterRegistry counters;
  RecordingSink host_events;
  FakeSources sources;
  std::unique_ptr<CbmShared> shared;
  CbmPipeline pipeline;
};

}  // namespace efu::cbm::test
