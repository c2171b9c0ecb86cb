// Per-datagram cost of the udp plugin's accounting, against a baseline in the same run that only
// reads each datagram's sequence field (the least any link test must do). Compare the ratio of
// the "baseline" and "tracker" times, not the absolute figures.
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#include "payload.h"
#include "sequence_tracker.h"

namespace {

using efu::udp::SeqFormat;

constexpr std::uint32_t kSize = 1472;
constexpr std::size_t kBatch = 64;

struct Batch {
  explicit Batch(std::uint64_t first) : data(kBatch * kSize) { fill(first); }
  void fill(std::uint64_t first) {
    for (std::size_t i = 0; i < kBatch; ++i) {
      efu::udp::write_seq(SeqFormat::kEfu64, first + i, data.data() + i * kSize);
      efu::udp::write_filler(SeqFormat::kEfu64, first + i, data.data() + i * kSize, kSize);
    }
  }
  std::vector<std::uint8_t> data;
};

void baseline_read_seq(benchmark::State& state) {
  Batch batch(0);
  std::uint64_t sum = 0;
  for (auto _ : state) {
    for (std::size_t i = 0; i < kBatch; ++i) {
      sum += efu::udp::read_seq(SeqFormat::kEfu64, batch.data.data() + i * kSize);
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBatch));
}

// The stream advances by kBatch per iteration; rewriting only the sequence fields keeps the
// fixture cost out of the loop (filler stays that of the first batch, so no verification here).
void tracker(benchmark::State& state) {
  Batch batch(0);
  efu::udp::SequenceTracker t(SeqFormat::kEfu64);
  std::uint64_t next = 0;
  for (auto _ : state) {
    for (std::size_t i = 0; i < kBatch; ++i) {
      std::uint8_t* p = batch.data.data() + i * kSize;
      efu::udp::write_seq(SeqFormat::kEfu64, next++, p);
      t.on_packet(p, kSize);
    }
    benchmark::DoNotOptimize(t.stats());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBatch));
  state.counters["lost"] = static_cast<double>(t.stats().lost);
}

void tracker_verify_payload(benchmark::State& state) {
  Batch batch(0);
  efu::udp::SequenceTracker t(SeqFormat::kEfu64, true);
  for (auto _ : state) {
    // The same batch again: duplicates after the first pass, but the filler check runs each time.
    for (std::size_t i = 0; i < kBatch; ++i) t.on_packet(batch.data.data() + i * kSize, kSize);
    benchmark::DoNotOptimize(t.stats());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBatch));
  state.counters["corrupted"] = static_cast<double>(t.stats().corrupted);
}

BENCHMARK(baseline_read_seq);
BENCHMARK(tracker);
BENCHMARK(tracker_verify_payload);

}  // namespace
