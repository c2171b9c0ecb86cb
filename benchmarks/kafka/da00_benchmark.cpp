// da00 costs: TofHistogram::add per readout (the hot path of a da00 beam monitor) and one window
// published through Da00Builder::build (a CBM-sized histogram: 71.4 ms period, 1000 bins of
// int32, 14 frames), each in steady state (the builder sized by a first message outside the
// timed loop). bytes_per_second of BM_Da00Build is the message bytes serialised per second.
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#include "efu/da00/tof_histogram.h"
#include "efu/kafka/da00_builder.h"

namespace {

constexpr std::int32_t kPeriodNs = 71'428'571;
constexpr std::int32_t kBins = 1000;
constexpr std::uint32_t kFrames = 14;

// Times of flight spread over the period (and 1 in 64 beyond it), made outside the timed loop.
std::vector<std::int64_t> make_tofs(std::size_t n) {
  std::vector<std::int64_t> tofs(n);
  for (std::size_t i = 0; i < n; ++i) {
    tofs[i] = static_cast<std::int64_t>((i * 2654435761U) % (kPeriodNs + kPeriodNs / 64));
  }
  return tofs;
}

struct NullSink final : efu::HistogramSink {
  void publish(const efu::DataArrayView&) override {}
};

void BM_TofHistogramAdd(benchmark::State& state) {
  efu::da00::TofHistogram h({kPeriodNs, kBins, kFrames, efu::da00::Aggregation::sum, "A"});
  const std::vector<std::int64_t> tofs = make_tofs(1 << 16);
  std::int64_t added = 0;
  for (auto _ : state) {
    for (const std::int64_t t : tofs) {
      added += h.add(t, 1) == efu::da00::TofHistogram::Add::added ? 1 : 0;
    }
  }
  benchmark::DoNotOptimize(added);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(tofs.size()));
}
BENCHMARK(BM_TofHistogramAdd);

void BM_Da00Build(benchmark::State& state) {
  efu::da00::TofHistogram h({kPeriodNs, kBins, kFrames, efu::da00::Aggregation::sum, "A"});
  for (const std::int64_t t : make_tofs(1 << 12)) (void)h.add(t, 3);
  const efu::DataArrayView view = h.view();
  efu::kafka::Da00Builder b("cbm_monitor_1");
  std::size_t bytes = b.build(view).size();  // sizes the builder
  for (auto _ : state) {
    const auto out = b.build(view);
    benchmark::DoNotOptimize(out.data());
    bytes = out.size();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
  state.counters["message_bytes"] = static_cast<double>(bytes);
  state.counters["max_size"] = static_cast<double>(b.max_size(view));
}
BENCHMARK(BM_Da00Build);

}  // namespace
