// CAEN processing speed on one core, per instrument: the readout parser with charge division
// and pixel ids, and the whole pipeline (header → readouts → pixels → an ev44 builder per
// source, as efu publishes them).
// BM_Baseline_TouchBytes reads the same packets once, one load per readout; compare items/s.
// Target: ≥ 20 M readouts/s for BM_Pipeline (each readout is one neutron candidate).
#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "caen_pipeline.h"
#include "caen_readout.h"
#include "detector_bench.h"
#include "efu/ess/header_writer.h"
#include "efu/ess/readout_header.h"
#include "ev44_bench_sink.h"
#include "event_digest.h"
#include "readout_lanes.h"

namespace efu::caen {
namespace {

constexpr std::uint64_t kPulseNs = 1'700'000'000'000'000'000ULL;
constexpr std::uint32_t kPacketSize = 8972;
constexpr const char* kInstruments[] = {"loki.json", "bifrost.json", "cspec.json", "miracles.json"};

const LoadedInstrument& instrument(int index) {
  static std::vector<LoadedInstrument> all = [] {
    std::vector<LoadedInstrument> out;
    for (const char* name : kInstruments) {
      CaenSettings s;
      s.geometry_path = shipped_config(name);
      out.push_back(load_instrument(s));
    }
    return out;
  }();
  return all[static_cast<std::size_t>(index)];
}

struct Stream {
  std::vector<std::vector<std::uint8_t>> packets;
  std::uint64_t readouts = 0;
};

// 200 k readouts of one pulse on the instrument's configured rings, FENs and groups, with
// random amplitudes near full scale (a few land between the calibration intervals and are
// rejected, as real data does), in full v1 packets.
const Stream& stream(int index) {
  static std::vector<Stream> streams(std::size(kInstruments));
  Stream& out = streams[static_cast<std::size_t>(index)];
  if (!out.packets.empty()) return out;
  const CaenConfig& c = instrument(index).config;
  std::mt19937_64 rng(11);
  std::vector<std::uint32_t> rings;
  for (std::uint32_t r = 0; r <= c.max_ring && r < kMaxRings; ++r) {
    if (c.instrument != Instrument::kLoki || c.rings[r].configured) rings.push_back(r);
  }
  std::vector<std::uint8_t> packet;
  std::uint32_t sequence = 0;
  auto flush = [&] {
    ess::HeaderFields f;
    f.type = detector_type(c.instrument);
    f.total_length = static_cast<std::uint16_t>(packet.size());
    f.pulse = ess::to_ess(kPulseNs);
    f.prev_pulse = ess::to_ess(kPulseNs - 71'428'571);
    f.sequence = sequence++;
    ess::write_header(packet.data(), f);
    out.packets.push_back(packet);
    packet.clear();
  };
  for (std::uint64_t n = 0; n < 200'000; ++n) {
    if (packet.size() + kReadoutSize > kPacketSize) flush();
    if (packet.empty()) packet.resize(ess::kHeaderSizeV1);
    CaenReadout r;
    const std::uint32_t ring = rings[rng() % rings.size()];
    r.fiber = static_cast<std::uint8_t>(ring * 2 + rng() % 2);
    switch (c.instrument) {
      case Instrument::kLoki:
        r.fen = static_cast<std::uint8_t>(rng() % c.rings[ring].fens);
        r.group = static_cast<std::uint8_t>(rng() % kLokiGroupsPerFen);
        break;
      case Instrument::kBifrost:
        r.group = static_cast<std::uint8_t>(rng() % (c.max_group + 1));
        break;
      case Instrument::kCspec:
        r.group = static_cast<std::uint8_t>(rng() % 24);
        break;
      case Instrument::kMiracles:
        r.group = static_cast<std::uint8_t>(rng() % 12);
        break;
    }
    const ess::EssTime t = ess::to_ess(kPulseNs + 10'000 + n * 300);
    r.time_high = t.high;
    r.time_low = t.low;
    const bool four = c.instrument == Instrument::kLoki;
    r.a = static_cast<std::uint16_t>(rng() % (four ? 8000 : 16000));
    r.b = static_cast<std::uint16_t>(rng() % (four ? 8000 : 16000));
    r.c = four ? static_cast<std::uint16_t>(rng() % 8000) : 0;
    r.d = four ? static_cast<std::uint16_t>(rng() % 8000) : 0;
    const std::size_t at = packet.size();
    packet.resize(at + kReadoutSize);
    write_readout(packet.data() + at, r);
    ++out.readouts;
  }
  if (!packet.empty()) flush();
  return out;
}

void BM_Baseline_TouchBytes(benchmark::State& state) {
  const Stream& s = stream(static_cast<int>(state.range(0)));
  bench::touch_bytes(state, s.packets, s.readouts, ess::kHeaderSizeV1, kReadoutSize, 16);
}

void BM_ReadoutParse(benchmark::State& state) {
  const int index = static_cast<int>(state.range(0));
  const LoadedInstrument& inst = instrument(index);
  CounterRegistry counters;
  const PixelMap pixels(inst.config, inst.calibration, 0);
  ess::HeaderParser header_parser(counters, detector_type(inst.config.instrument));
  ReadoutParser parser(counters, pixels, ReadoutSettings{inst.config.max_tof_ns, 0});
  const Stream& s = stream(index);
  bench::parse_readouts(state, s.packets, s.readouts, header_parser, parser);
}

// The lanes alone (readout_lanes.h), without the parser's hand-off of their outcomes: each
// packet's whole runs of eight through the instrument's lanes, 16 runs a call as the parser
// does, a lane of each run's outcome summed so that nothing is optimised away. Against
// BM_ReadoutParse it shows what the kernel costs and what the hand-off adds. Skipped without
// AVX2.
void BM_Lanes(benchmark::State& state) {
  if (!lanes::available()) return state.SkipWithError("no AVX2: no lanes");
  const int index = static_cast<int>(state.range(0));
  const LoadedInstrument& inst = instrument(index);
  const PixelMap pixels(inst.config, inst.calibration, 0);
  CounterRegistry counters;
  ess::HeaderParser header_parser(counters, detector_type(inst.config.instrument));
  const Stream& s = stream(index);
  const lanes::LokiLanes loki = lanes::LokiLanes::of(pixels);
  const lanes::BifrostLanes bifrost = lanes::BifrostLanes::of(pixels.bifrost());
  const lanes::CspecLanes cspec = lanes::CspecLanes::of(pixels.cspec());
  const lanes::MiraclesLanes miracles = lanes::MiraclesLanes::of(pixels.miracles());
  constexpr std::uint32_t kRunBytes = lanes::kLanes * kReadoutSize;
  lanes::Out out[16];
  std::uint64_t sum = 0;
  for (auto _ : state) {
    for (const auto& p : s.packets) {
      ess::PacketHeader h;
      header_parser.parse(p.data(), static_cast<std::uint32_t>(p.size()), h);
      const std::uint8_t* blocks = p.data() + h.header_size;
      const auto runs = static_cast<std::uint32_t>((p.size() - h.header_size) / kRunBytes);
      const lanes::TimeRule rule{h.pulse_time_ns, h.prev_pulse_time_ns, inst.config.max_tof_ns, 0};
      for (std::uint32_t done = 0; done < runs; done += 16) {
        const std::uint32_t n = std::min(runs - done, 16U);
        const std::uint8_t* first = blocks + std::size_t{done} * kRunBytes;
        switch (inst.config.instrument) {
          case Instrument::kLoki:
            lanes::loki(first, n, rule, loki, out);
            break;
          case Instrument::kBifrost:
            lanes::bifrost(first, n, rule, bifrost, out);
            break;
          case Instrument::kCspec:
            lanes::cspec(first, n, rule, cspec, out);
            break;
          case Instrument::kMiracles:
            lanes::miracles(first, n, rule, miracles, out);
            break;
        }
        for (std::uint32_t r = 0; r < n; ++r) sum += out[r].status[r % 8] + out[r].pixel[r % 8];
      }
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * s.readouts));
}

// As efu runs it: one ev44 sink per source (BIFROST's 45 triplets, the others' one).
void BM_Pipeline(benchmark::State& state) {
  const int index = static_cast<int>(state.range(0));
  const Stream& s = stream(index);
  const LoadedInstrument& inst = instrument(index);
  CounterRegistry counters;
  std::vector<std::unique_ptr<bench::Ev44BenchSink>> sinks;
  std::vector<EventSink*> pointers;
  for (std::uint32_t i = 0; i < source_count(inst.config); ++i) {
    sinks.push_back(std::make_unique<bench::Ev44BenchSink>("caen"));
    pointers.push_back(sinks.back().get());
  }
  CaenPipeline pipeline(inst, 0, counters, pointers);
  const std::uint64_t unused = 0;
  bench::run_pipeline(state, s.packets, s.readouts, pipeline, unused);
  std::uint64_t events = 0;
  for (const auto& sink : sinks) events += sink->events;
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["sources"] = static_cast<double>(sinks.size());
}

void instruments(benchmark::internal::Benchmark* b) {
  b->ArgName("instrument");  // 0 loki, 1 bifrost, 2 cspec, 3 miracles
  for (int i = 0; i < static_cast<int>(std::size(kInstruments)); ++i) b->Arg(i);
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Baseline_TouchBytes)->Apply(instruments);
BENCHMARK(BM_ReadoutParse)->Apply(instruments);
BENCHMARK(BM_Lanes)->Apply(instruments);
BENCHMARK(BM_Pipeline)->Apply(instruments);

// --digest: every instrument's stream once through the pipeline, the events' digests and the
// counters printed (benchmarks/event_digest.h), to show that a speed change keeps them.
void print_digests() {
  for (int index = 0; index < static_cast<int>(std::size(kInstruments)); ++index) {
    const LoadedInstrument& inst = instrument(index);
    CounterRegistry counters;
    bench::EventDigest digest;
    std::vector<std::unique_ptr<bench::DigestSink>> sinks;
    std::vector<EventSink*> pointers;
    for (std::uint32_t i = 0; i < source_count(inst.config); ++i) {
      sinks.push_back(std::make_unique<bench::DigestSink>(digest, i));
      pointers.push_back(sinks.back().get());
    }
    CaenPipeline pipeline(inst, 0, counters, pointers);
    const Stream& s = stream(index);
    std::vector<PacketView> views;
    for (const auto& p : s.packets)
      views.push_back({p.data(), static_cast<std::uint32_t>(p.size())});
    for (std::size_t i = 0; i < views.size(); i += 64) {
      pipeline.process(PacketBatch(views.data() + i, std::min<std::size_t>(64, views.size() - i)));
    }
    digest.print(kInstruments[index]);
    bench::print_counters(counters);
  }
}

}  // namespace
}  // namespace efu::caen

int main(int argc, char** argv) {
  return efu::bench::digest_or_benchmark_main(argc, argv, efu::caen::print_digests);
}
