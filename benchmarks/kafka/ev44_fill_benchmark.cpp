// ev44 fill rate: Ev44Builder::add for one full 1 MB message plus finish(), against the
// baseline of writing the same events into plain preallocated arrays. Compare items_per_second
// of the two in the same run: the ratio is the cost of building ev44.
#include <memory>
#include <vector>

#include <benchmark/benchmark.h>

#include "efu/kafka/ev44_builder.h"

namespace {

constexpr std::size_t kMaxBytes = 1'000'000;
constexpr std::uint32_t kEventsPerPulse = 500;

struct Events {
  std::vector<std::uint64_t> pulse;
  std::vector<std::uint32_t> tof;
  std::vector<std::uint32_t> pixel;
};

// The events of one full message, generated outside the timed loop.
Events make_events(std::size_t n) {
  Events e;
  for (std::size_t i = 0; i < n; ++i) {
    e.pulse.push_back(1'700'000'000'000'000'000ULL + (i / kEventsPerPulse) * 71'428'571ULL);
    e.tof.push_back(static_cast<std::uint32_t>((i * 2654435761U) % 71'000'000U));
    e.pixel.push_back(static_cast<std::uint32_t>((i * 40503U) % 65536U));
  }
  return e;
}

std::size_t events_per_message() {
  efu::kafka::Ev44Builder b("loki", kMaxBytes);
  std::size_t n = 0;
  for (; !b.full(); ++n)
    b.add(1'700'000'000'000'000'000ULL + (n / kEventsPerPulse) * 71'428'571ULL, 1, 1);
  return n;
}

void BM_PlainArrays(benchmark::State& state) {
  const Events e = make_events(events_per_message());
  const std::size_t n = e.pulse.size();
  auto pulse = std::make_unique<std::uint64_t[]>(n);
  auto tof = std::make_unique<std::uint32_t[]>(n);
  auto pixel = std::make_unique<std::uint32_t[]>(n);
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) {
      pulse[i] = e.pulse[i];
      tof[i] = e.tof[i];
      pixel[i] = e.pixel[i];
    }
    benchmark::DoNotOptimize(pulse.get());
    benchmark::DoNotOptimize(tof.get());
    benchmark::DoNotOptimize(pixel.get());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}
BENCHMARK(BM_PlainArrays);

void BM_Ev44BuilderFill(benchmark::State& state) {
  const Events e = make_events(events_per_message());
  const std::size_t n = e.pulse.size();
  efu::kafka::Ev44Builder b("loki", kMaxBytes);
  std::int64_t id = 0;
  std::size_t bytes = 0;
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) b.add(e.pulse[i], e.tof[i], e.pixel[i]);
    const auto message = b.finish(id++);
    bytes += message.size();
    benchmark::DoNotOptimize(message.data());
    b.reset();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["events_per_message"] = static_cast<double>(n);
}
BENCHMARK(BM_Ev44BuilderFill);

}  // namespace
