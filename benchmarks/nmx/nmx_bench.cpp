// NMX processing speed on one core (docs/nmx.md): VMM3a parsing and the whole pipeline into an
// ev44 builder, on particle tracks across both planes of nmx.json's panels with readouts in time
// order (order:0), shuffled inside every packet (order:1), and shuffled with 20 % of the readouts
// delayed by 1..3 packets (order:2). BM_Baseline_TouchBytes reads the same packets once; the
// pipeline's readouts/s are reported against it, and the disordered orders against order:0
// (compare the items/s of one run). The target is 20 M readouts/s for BM_Pipeline order:1.
#include <memory>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "ev44_bench_sink.h"
#include "nmx_pipeline.h"
#include "vmm3a_bench.h"

namespace efu::nmx {
namespace {

using bench::Order;

const Config& config() {
  static const Config c = Config::from_file(shipped_config("nmx.json"));
  return c;
}

bench::Vmm3aReadout make_readout(std::uint32_t panel, std::uint32_t plane, std::uint32_t strip,
                                 std::uint16_t adc, std::uint64_t time) {
  Config::Channel ch{};
  config().channel_of(panel, plane, strip, ch);
  const HybridConfig& h = config().hybrid(ch.hybrid_index);
  return bench::vmm3a_readout(h.ring, h.fen, ch.vmm, ch.channel, adc, time);
}

// 20'000 tracks 3 us apart on random panels: 4..7 x strips and 3..6 y strips in a row, 30 ns
// apart (the track's drift), ADCs 100..900. Packed into full v1 packets of one pulse, one queue.
bench::Vmm3aStream make_stream(Order order) {
  std::mt19937_64 rng(24);
  std::vector<bench::Vmm3aReadout> readouts;
  for (std::uint64_t n = 0; n < 20'000; ++n) {
    const auto panel = static_cast<std::uint32_t>(rng() % 4);
    const std::uint64_t t = bench::kPulseNs + 10'000 + n * 3'000;
    for (std::uint32_t plane = 0; plane < 2; ++plane) {
      const auto count = static_cast<std::uint32_t>((plane == kX ? 4 : 3) + rng() % 4);
      const std::uint32_t base = 640 * (plane == kX ? panel & 1U : panel >> 1U);
      const auto first = static_cast<std::uint32_t>(base + rng() % (640 - count));
      for (std::uint32_t i = 0; i < count; ++i) {
        readouts.push_back(make_readout(panel, plane, first + i,
                                        static_cast<std::uint16_t>(100 + rng() % 800), t + 30 * i));
      }
    }
  }
  return bench::vmm3a_stream(readouts, 20'000, order, rng, kNmxType);
}

constexpr auto stream = bench::cached_stream<make_stream>;

void BM_Baseline_TouchBytes(benchmark::State& state) {
  bench::touch_readouts(state, stream(Order::kTimeOrdered));
}

void BM_ReadoutParse(benchmark::State& state) {
  bench::parse_hits(state, stream(static_cast<Order>(state.range(0))), kNmxType, config(),
                    vmm3a::ReadoutSettings{1'000'000'000});
}

// Parse -> ev44, the whole plugin on one core.
void BM_Pipeline(benchmark::State& state) {
  const bench::Vmm3aStream& s = stream(static_cast<Order>(state.range(0)));
  NmxSettings settings;
  settings.geometry_path = shipped_config("nmx.json");
  const std::unique_ptr<NmxShared> shared = load_shared(settings);
  bench::Ev44BenchSink sink("nmx");
  bench::replay_pulse(state, s, [&](CounterRegistry& counters) {
    return std::make_unique<NmxPipeline>(*shared, counters, sink);
  });
  state.counters["events_per_neutron"] =
      static_cast<double>(sink.events) / static_cast<double>(state.iterations() * s.neutrons);
}

BENCHMARK(BM_Baseline_TouchBytes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadoutParse)->Apply(bench::orders<3>);
BENCHMARK(BM_Pipeline)->Apply(bench::orders<3>);

}  // namespace
}  // namespace efu::nmx
