// The baseline every detector benchmark measures in the same run as its pipeline: the same
// packets read once, one load per readout. A pipeline's items/s over the baseline's is what it
// costs against touching the data alone, a ratio that holds on a noisy, shared machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

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

}  // namespace efu::bench
