// TREX processing speed on one core, on the shipped trex.json (docs/trex.md "Tests and
// measurements"): the VMM3a parsing on TREX's channel map, and the whole pipeline into an ev44
// builder (parse → time groups → clusters → events), on readouts in time order (order:0),
// shuffled inside every packet (order:1), and shuffled with 20 % of them delayed by 1..3 packets
// (order:2). BM_Baseline_TouchBytes reads the same packets once; the pipeline's readouts/s is
// reported against it, and the disordered orders against order:0 (compare the items/s in one
// run; the target is 25 M readouts/s shuffled).
#include <memory>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "ev44_bench_sink.h"
#include "trex_pipeline.h"
#include "vmm3a_bench.h"

namespace efu::trex {
namespace {

using bench::Order;
using Readout = bench::Vmm3aReadout;

const TrexConfig& config() {
  static const TrexConfig c = load_config_file(default_config_path());
  return c;
}

Readout make_readout(const HybridEntry& h, std::uint8_t vmm, std::uint8_t channel,
                     std::uint16_t adc, std::uint64_t time) {
  return bench::vmm3a_readout(h.ring, h.fen, vmm, channel, adc, time);
}

// 40'000 neutrons 1 us apart over the full-length vessels' (ring, FEN)s: three neighbouring
// wires (hybrid 0) and two neighbouring grids (hybrid 1, VMM 1: y 6..50, inside SizeY 51).
std::vector<Readout> neutrons(std::mt19937_64& rng) {
  std::vector<const HybridEntry*> wires;
  for (const HybridEntry& h : config().hybrids) {
    if (h.hybrid == 0 && !config().vessels[h.vessel].short_vessel) wires.push_back(&h);
  }
  std::vector<Readout> out;
  for (std::uint64_t n = 0; n < 40'000; ++n) {
    const HybridEntry& h = *wires[rng() % wires.size()];
    const auto wire = static_cast<std::uint8_t>(rng() % 62);
    const auto grid = static_cast<std::uint8_t>(rng() % 44);
    const std::uint64_t t = bench::kPulseNs + 10'000 + n * 1000;
    for (std::uint8_t k = 0; k < 3; ++k) {
      out.push_back(make_readout(h, 1, static_cast<std::uint8_t>(wire + k),
                                 static_cast<std::uint16_t>(200 + 100 * (k == 1)), t + k * 10));
    }
    for (std::uint8_t k = 0; k < 2; ++k) {
      out.push_back(make_readout(h, 3, static_cast<std::uint8_t>(grid + k), 300, t + 5 + k * 15));
    }
  }
  return out;
}

bench::Vmm3aStream make_stream(Order order) {
  std::mt19937_64 rng(7);
  const std::vector<Readout> readouts = neutrons(rng);
  return bench::vmm3a_stream(readouts, readouts.size() / 5 /* readouts a neutron */, order, rng,
                             kDetectorType);
}

constexpr auto stream = bench::cached_stream<make_stream>;

void BM_Baseline_TouchBytes(benchmark::State& state) {
  bench::touch_readouts(state, stream(Order::kTimeOrdered));
}

void BM_ReadoutParse(benchmark::State& state) {
  bench::parse_hits(state, stream(static_cast<Order>(state.range(0))), kDetectorType,
                    ChannelMap(config()), vmm3a::ReadoutSettings{1'000'000'000});
}

// Parse -> ev44, the whole plugin on one core.
void BM_Pipeline(benchmark::State& state) {
  const bench::Vmm3aStream& s = stream(static_cast<Order>(state.range(0)));
  OptionValues options;
  for (std::size_t i = 0; i < kOptionCount; ++i) {
    options.set(kOptions[i].name, kOptions[i].default_value, false);
  }
  const auto shared = load_shared(settings_from_options(options));
  bench::Ev44BenchSink sink("trex");
  const bench::PulseCounts counts = bench::replay_pulse(state, s, [&](CounterRegistry& counters) {
    return std::make_unique<TrexPipeline>(*shared, counters, sink, 1);
  });
  const auto readouts = static_cast<double>(state.iterations() * s.readouts);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(sink.events), benchmark::Counter::kIsRate);
  state.counters["formed_per_readout"] = static_cast<double>(counts.formed) / readouts;
}

BENCHMARK(BM_Baseline_TouchBytes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadoutParse)->Apply(bench::orders<3>);
BENCHMARK(BM_Pipeline)->Apply(bench::orders<3>);

}  // namespace
}  // namespace efu::trex
