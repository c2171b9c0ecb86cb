// Per-datagram cost of the udp plugin's accounting, against a baseline in the same run that only
// reads each datagram's sequence field (the least any link test must do). Compare the ratio of
// the "baseline" and "tracker" times, not the absolute figures. `pipeline` is the whole plugin
// (flow lookup per datagram, one tracker per sender, counters per batch) against `tracker`.
#include <arpa/inet.h>

#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#include "payload.h"
#include "sequence_tracker.h"
#include "udp_pipeline.h"

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

class NoEvents : public efu::EventSink {
 public:
  void add(std::uint64_t, std::uint32_t, std::uint32_t) override {}
};

// The udp plugin's process() on batches of kBatch datagrams from `flows` senders (distinct
// source ports); interleaved: the sender changes every datagram (the flow lookup's worst case),
// else every batch (as recvmmsg and GRO deliver a burst of one flow).
void pipeline(benchmark::State& state) {
  const auto flows = static_cast<std::uint32_t>(state.range(0));
  const bool interleaved = state.range(1) != 0;
  efu::OptionValues options;
  options.set(efu::udp::kOptionSeqFormat, "efu64", true);
  options.set(efu::udp::kOptionVerifyPayload, "off", false);
  options.set(efu::udp::kOptionMaxFlows, "16", false);
  efu::CounterRegistry counters;
  NoEvents sink;
  efu::udp::UdpPipeline p(efu::PipelineContext{options, counters, sink, 0, 1});
  std::vector<efu::PacketSource> sources(flows);
  for (std::uint32_t f = 0; f < flows; ++f) {
    sources[f].v4.sin_family = AF_INET;
    sources[f].v4.sin_port = htons(static_cast<std::uint16_t>(40000 + f));
    sources[f].v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  }
  Batch batch(0);
  std::vector<efu::PacketView> views(kBatch);
  std::vector<std::uint64_t> next(flows, 0);
  std::uint64_t round = 0;
  for (auto _ : state) {
    for (std::size_t i = 0; i < kBatch; ++i) {
      const std::uint32_t f = static_cast<std::uint32_t>(interleaved ? i % flows : round % flows);
      std::uint8_t* d = batch.data.data() + i * kSize;
      efu::udp::write_seq(SeqFormat::kEfu64, next[f]++, d);
      views[i] = efu::PacketView{d, kSize, &sources[f]};
    }
    ++round;
    p.process(views);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBatch));
  state.counters["lost"] = static_cast<double>(p.totals().lost);
  state.counters["flows"] = static_cast<double>(p.flows());
}

BENCHMARK(baseline_read_seq);
BENCHMARK(tracker);
BENCHMARK(tracker_verify_payload);
BENCHMARK(pipeline)
    ->ArgNames({"flows", "interleaved"})
    ->Args({1, 0})
    ->Args({4, 0})
    ->Args({4, 1})
    ->Args({16, 1});

}  // namespace
