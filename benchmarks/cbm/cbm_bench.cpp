// Beam-monitor processing speed on one core: the whole pipeline (ESS header → CBM readout checks
// → per monitor ev44 events or a da00 histogram) on one monitor's stream.
// BM_Baseline_TouchBytes reads the same packets once, one load per readout; compare items/s.
// Targets: ≥ 100 M readouts/s for EVENT_0D into ev44 (BM_Event0DEv44, events into the ev44
// builder as efu's processing thread does) and ≥ 50 M readouts/s for IBM into da00
// (BM_IbmDa00, the histogram serialised as a da00 message once per pulse).
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "cbm_pipeline.h"
#include "cbm_readout.h"
#include "detector_bench.h"
#include "efu/ess/header_writer.h"
#include "efu/ess/readout_header.h"
#include "efu/kafka/da00_builder.h"
#include "ev44_bench_sink.h"

namespace efu::cbm {
namespace {

constexpr std::uint64_t kPulseNs = 1'700'000'000'000'000'000ULL;
constexpr std::uint64_t kPeriodNs = 71'428'571;
constexpr std::uint32_t kPacketSize = 8972;
constexpr std::uint64_t kPulses = 10;
constexpr std::uint64_t kReadoutsPerPulse = 20'000;

// One monitor on FEN 0, Channel 0, ring 11.
std::string config_text(MonitorType type) {
  if (type == MonitorType::kEvent0D) {
    return R"({"Detector": "CBM", "MaxFENId": 0, "MaxTOFNS": 1000000000, "Topology": [
      {"FEN": 0, "Channel": 0, "Type": "EVENT_0D", "Source": "m", "Schema": "ev44", "PixelOffset": 1}]})";
  }
  return R"({"Detector": "CBM", "MaxFENId": 0, "MaxTOFNS": 1000000000, "Topology": [
    {"FEN": 0, "Channel": 0, "Type": "IBM", "Source": "m", "Schema": "da00", "MaxTofBin": 71428571,
     "BinCount": 1000, "AggregatedFrames": 1}]})";
}

struct Stream {
  std::vector<std::vector<std::uint8_t>> packets;
  std::uint64_t readouts = 0;
};

// kPulses pulses of kReadoutsPerPulse readouts each, spread over the pulse's 71 ms, in full v1
// packets; every pulse starts a new packet (so the da00 window closes once per pulse).
Stream make_stream(MonitorType type) {
  Stream out;
  std::vector<std::uint8_t> packet;
  std::uint32_t sequence = 0;
  std::uint64_t pulse = kPulseNs;
  auto flush = [&] {
    ess::HeaderFields f;
    f.type = kCbmDetectorType;
    f.total_length = static_cast<std::uint16_t>(packet.size());
    f.pulse = ess::to_ess(pulse);
    f.prev_pulse = ess::to_ess(pulse - kPeriodNs);
    f.sequence = sequence++;
    ess::write_header(packet.data(), f);
    out.packets.push_back(packet);
    packet.clear();
  };
  for (std::uint64_t p = 0; p < kPulses; ++p) {
    pulse = kPulseNs + p * kPeriodNs;
    for (std::uint64_t n = 0; n < kReadoutsPerPulse; ++n) {
      if (packet.size() + kReadoutSize > kPacketSize) flush();
      if (packet.empty()) packet.resize(ess::kHeaderSizeV1);
      CbmReadout r;
      r.fiber = 22;
      r.type = static_cast<std::uint8_t>(type);
      const ess::EssTime t = ess::to_ess(pulse + 1000 + n * 3500);
      r.time_high = t.high;
      r.time_low = t.low;
      if (type == MonitorType::kIbm)
        r.set_ibm(1000 + n % 5000, static_cast<std::uint8_t>(1 + n % 7));
      const std::size_t at = packet.size();
      packet.resize(at + kReadoutSize);
      write_readout(packet.data() + at, r);
      ++out.readouts;
    }
    if (!packet.empty()) flush();
  }
  return out;
}

const Stream& stream(MonitorType type) {
  static const Stream s0d = make_stream(MonitorType::kEvent0D);
  static const Stream sibm = make_stream(MonitorType::kIbm);
  return type == MonitorType::kEvent0D ? s0d : sibm;
}

/// The monitor's one source: ev44 into the builder, da00 serialised per window.
class BenchSources final : public SourceOutputs {
 public:
  class Da00Sink final : public HistogramSink {
   public:
    void publish(const DataArrayView& array) override {
      benchmark::DoNotOptimize(builder_.build(array).data());
      ++messages;
    }
    std::uint64_t messages = 0;

   private:
    kafka::Da00Builder builder_{"m"};
  };
  EventSink& events(std::string_view) override { return ev44; }
  HistogramSink& histograms(std::string_view) override { return da00; }
  bench::Ev44BenchSink ev44{"m"};
  Da00Sink da00;
};

void run(benchmark::State& state, MonitorType type) {
  const Stream& s = stream(type);
  auto shared = make_shared(load_config_json(config_text(type), "bench.json"));
  OptionValues options;
  CounterRegistry counters;
  BenchSources sources;
  CbmPipeline pipeline(
      *shared, PipelineContext{options, counters, sources.ev44, 0, 1, shared.get(), &sources});
  // Each iteration replays the same pulses: the sequence numbers restart (counted as a gap beside
  // the packet, not a rejection) and every readout passes again (accepted_per_readout = 1).
  bench::run_pipeline(state, s.packets, s.readouts, pipeline, sources.ev44.events);
  pipeline.flush();
  state.counters["da00_messages"] = static_cast<double>(sources.da00.messages);
  state.counters["accepted_per_readout"] =
      static_cast<double>(counters.value(
          type == MonitorType::kIbm ? "readouts.accepted.ibm" : "readouts.accepted.event_0d")) /
      static_cast<double>(state.iterations() * s.readouts);
}

void BM_Baseline_TouchBytes(benchmark::State& state) {
  const Stream& s = stream(MonitorType::kEvent0D);
  bench::touch_bytes(state, s.packets, s.readouts, ess::kHeaderSizeV1, kReadoutSize, 13);
}

void BM_Event0DEv44(benchmark::State& state) { run(state, MonitorType::kEvent0D); }
void BM_IbmDa00(benchmark::State& state) { run(state, MonitorType::kIbm); }

BENCHMARK(BM_Baseline_TouchBytes)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Event0DEv44)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_IbmDa00)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace efu::cbm
