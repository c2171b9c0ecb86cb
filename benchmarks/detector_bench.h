// What every detector family's benchmark runs the same way (caen_bench, cdt_bench,
// multiblade_bench): the touch-bytes baseline, the readout-parse loop and the whole-pipeline
// loop over one stream of packets. The baseline reads the same packets once, one load per
// readout; a pipeline's items/s over the baseline's, in the same run, is what it costs against
// touching the data alone, a ratio that holds on a noisy, shared machine.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#include "efu/ess/readout_header.h"
#include "efu/plugin.h"

namespace efu::bench {

/// Reads byte `byte` of every `readout_size`-byte readout from offset `first` of each packet;
/// counts `readouts` items per iteration.
inline void touch_bytes(benchmark::State& state,
                        const std::vector<std::vector<std::uint8_t>>& packets,
                        std::uint64_t readouts, std::size_t first, std::size_t readout_size,
                        std::size_t byte) {
  for (auto _ : state) {
    std::uint64_t sum = 0;
    for (const auto& p : packets) {
      for (std::size_t i = first; i + byte < p.size(); i += readout_size) sum += p[i + byte];
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * readouts));
}

/// The readout-parse benchmark: each packet's ESS header with `header_parser`, then its readouts
/// with `parser.parse(data, size, header, on_event)`, the events summed so that nothing is
/// optimised away; counts `readouts` items per iteration and reports events per readout.
template <typename HeaderParser, typename ReadoutParser>
void parse_readouts(benchmark::State& state,
                    const std::vector<std::vector<std::uint8_t>>& packets, std::uint64_t readouts,
                    HeaderParser& header_parser, ReadoutParser& parser) {
  std::uint64_t events = 0;
  for (auto _ : state) {
    for (const auto& p : packets) {
      ess::PacketHeader h;
      header_parser.parse(p.data(), static_cast<std::uint32_t>(p.size()), h);
      std::uint64_t sum = 0;
      parser.parse(p.data() + h.header_size, static_cast<std::uint32_t>(p.size() - h.header_size),
                   h, [&](std::uint64_t, std::uint32_t tof, std::uint32_t pixel) {
                     sum += tof + pixel;
                     ++events;
                   });
      benchmark::DoNotOptimize(sum);
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * readouts));
  state.counters["events_per_readout"] =
      static_cast<double>(events) / static_cast<double>(state.iterations() * readouts);
}

/// The whole-pipeline benchmark: the packets through `pipeline.process()` in batches of 64, as
/// the host hands them; `events` is the sink's count, reported as a rate.
template <typename Pipeline>
void run_pipeline(benchmark::State& state, const std::vector<std::vector<std::uint8_t>>& packets,
                  std::uint64_t readouts, Pipeline& pipeline, const std::uint64_t& events) {
  std::vector<PacketView> views;
  for (const auto& p : packets) views.push_back({p.data(), static_cast<std::uint32_t>(p.size())});
  for (auto _ : state) {
    for (std::size_t i = 0; i < views.size(); i += 64) {
      pipeline.process(PacketBatch(views.data() + i, std::min<std::size_t>(64, views.size() - i)));
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * readouts));
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}

}  // namespace efu::bench
