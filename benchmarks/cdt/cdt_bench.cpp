// CDT processing speed on one core, per instrument's full configuration (the shipped
// DreamInst.json, MagicInst.json, HeimdalInst.json): the readout parser with pixel ids, and the
// whole pipeline (header → readouts → pixels → ev44 builder). BM_Baseline_TouchBytes reads the
// same packets once, one load per readout; compare items/s.
// Target: ≥ 100 M readouts/s for BM_Pipeline on the clean streams (each readout is one neutron;
// noisy:1 is DREAM with random rejections, reported beside it).
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "cdt_pipeline.h"
#include "cdt_readout.h"
#include "pixel_map.h"
#include "efu/ess/header_writer.h"
#include "efu/ess/readout_header.h"
#include "ev44_bench_sink.h"
#include "detector_bench.h"

namespace efu::cdt {
namespace {

constexpr std::uint64_t kPulseNs = 1'700'000'000'000'000'000ULL;
constexpr std::uint32_t kPacketSize = 8972;
constexpr const char* kInstruments[] = {"DreamInst.json", "MagicInst.json", "HeimdalInst.json"};

const CdtConfig& instrument(int index) {
  static const std::vector<CdtConfig> all = [] {
    std::vector<CdtConfig> out;
    for (const char* name : kInstruments) out.push_back(CdtConfig::from_file(shipped_config(name)));
    return out;
  }();
  return all[static_cast<std::size_t>(index)];
}

struct Stream {
  std::vector<std::vector<std::uint8_t>> packets;
  std::uint64_t readouts = 0;
};

// 200 k readouts of one pulse over every configured (ring, FEN) pair, with random UnitId (the
// module type's valid ones), anode and cathode, in full v1 packets. As the readout masters send
// them, each packet carries one ring's readouts (its FENs mixed); the rings take turns packet by
// packet. Two streams per instrument:
// - clean: every readout is a pixel (counters drawn again until the formula gives one), as a
//   detector's own readouts are; the target is measured on it;
// - noisy: the counters as drawn, so 14 % of DREAM's readouts fall outside a SUMO's cassettes
//   and are rejected at random, which costs a mispredicted branch each (MAGIC and HEIMDAL have
//   no such gaps: their streams are the same).
enum class Noise : int { kClean = 0, kNoisy = 1 };
std::uint8_t unit_of(ModuleType type, std::mt19937_64& rng) {
  if (type == ModuleType::kBwEndCap || type == ModuleType::kFwEndCap) {
    return static_cast<std::uint8_t>(3 + rng() % 4);
  }
  return static_cast<std::uint8_t>(rng() % 2);
}

const Stream& stream(int index, Noise noise = Noise::kClean) {
  static std::vector<Stream> streams(2 * std::size(kInstruments));
  Stream& out = streams[static_cast<std::size_t>(2 * index + static_cast<int>(noise))];
  if (!out.packets.empty()) return out;
  const CdtConfig& c = instrument(index);
  std::vector<std::vector<std::uint32_t>> rings;  // the configured table entries, per ring
  for (std::uint32_t ring = 0; ring < kRings; ++ring) {
    std::vector<std::uint32_t> fens;
    for (std::uint32_t fen = 0; fen < kFens; ++fen) {
      if (c.module(ring, fen).configured) fens.push_back(ring * kFens + fen);
    }
    if (!fens.empty()) rings.push_back(fens);
  }
  std::mt19937_64 rng(11);
  std::vector<std::uint8_t> packet;
  std::uint32_t sequence = 0;
  auto flush = [&] {
    ess::HeaderFields f;
    f.type = type_byte(c.instrument);
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
    const std::vector<std::uint32_t>& fens = rings[sequence % rings.size()];
    const std::uint32_t k = fens[rng() % fens.size()];
    CdtReadout r;
    r.fiber = static_cast<std::uint8_t>((k / kFens) * 2 + rng() % 2);
    r.fen = static_cast<std::uint8_t>(k % kFens);
    const ess::EssTime t = ess::to_ess(kPulseNs + 10'000 + n * 300);
    r.time_high = t.high;
    r.time_low = t.low;
    for (int attempt = 0; attempt < 1000; ++attempt) {
      r.unit = unit_of(c.modules[k].type, rng);
      r.anode = static_cast<std::uint8_t>(rng() % 64);
      r.cathode = static_cast<std::uint8_t>(rng() % 128);
      if (noise == Noise::kNoisy || pixel(c.modules, r).status == PixelStatus::kOk) break;
    }
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
  bench::touch_bytes(state, s.packets, s.readouts, ess::kHeaderSizeV1, kReadoutSize, 15);
}

void BM_ReadoutParse(benchmark::State& state) {
  const int index = static_cast<int>(state.range(0));
  const CdtConfig& c = instrument(index);
  CounterRegistry counters;
  ess::HeaderParser header_parser(counters, type_byte(c.instrument));
  ReadoutParser parser(counters, c.modules, kDefaultMaxTofNs);
  const Stream& s = stream(index);
  bench::parse_readouts(state, s.packets, s.readouts, header_parser, parser);
}

void BM_Pipeline(benchmark::State& state) {
  const int index = static_cast<int>(state.range(0));
  const Stream& s = stream(index, static_cast<Noise>(state.range(1)));
  CounterRegistry counters;
  bench::Ev44BenchSink sink("cdt");
  CdtPipeline pipeline(
      std::make_unique<const CdtShared>(CdtShared{instrument(index), kDefaultMaxTofNs}), counters,
      sink);
  bench::run_pipeline(state, s.packets, s.readouts, pipeline, sink.events);
}

// One module of each type alone (Index 0, the second cuboid too), readouts as above: what the
// geometry costs per type on the hot path (the parser's PixelMap lookup), to name the most
// expensive one. Random counters, so a SUMO rejects some (events_per_readout).
void BM_ModuleType(benchmark::State& state) {
  const auto type = static_cast<ModuleType>(state.range(0));
  ModuleTable table{};
  table[0] = Module{true, type, 0, 1};  // ring 0, FEN 0
  const PixelMap map(table);
  std::mt19937_64 rng(5);
  std::vector<CdtReadout> readouts(4096);
  for (CdtReadout& r : readouts) {
    r.unit = unit_of(type, rng);
    r.anode = static_cast<std::uint8_t>(rng() % 64);
    r.cathode = static_cast<std::uint8_t>(rng() % 128);
  }
  std::uint64_t events = 0;
  for (auto _ : state) {
    std::uint64_t sum = 0;
    for (const CdtReadout& r : readouts) {
      const PixelResult p = map.pixel(0, 0, r.unit, r.anode, r.cathode);
      sum += p.pixel;
      events += p.status == PixelStatus::kOk ? 1 : 0;
    }
    benchmark::DoNotOptimize(sum);
  }
  const auto items = static_cast<std::int64_t>(state.iterations() * readouts.size());
  state.SetItemsProcessed(items);
  state.SetLabel(info(type).name);
  state.counters["events_per_readout"] = static_cast<double>(events) / static_cast<double>(items);
}
BENCHMARK(BM_ModuleType)->DenseRange(0, static_cast<int>(kModuleTypes) - 1);

void instruments(benchmark::internal::Benchmark* b) {
  b->ArgName("instrument");  // 0 DREAM, 1 MAGIC, 2 HEIMDAL
  for (int i = 0; i < static_cast<int>(std::size(kInstruments)); ++i) b->Arg(i);
  b->Unit(benchmark::kMillisecond);
}

void instruments_and_noise(benchmark::internal::Benchmark* b) {
  b->ArgNames({"instrument", "noisy"});
  for (int i = 0; i < static_cast<int>(std::size(kInstruments)); ++i) {
    b->Args({i, static_cast<int>(Noise::kClean)});
  }
  b->Args({0, static_cast<int>(Noise::kNoisy)});  // DREAM: the only one with gaps to hit
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Baseline_TouchBytes)->Apply(instruments);
BENCHMARK(BM_ReadoutParse)->Apply(instruments);
BENCHMARK(BM_Pipeline)->Apply(instruments_and_noise);

}  // namespace
}  // namespace efu::cdt
