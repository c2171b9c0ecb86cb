// A fingerprint of the events a pipeline forms from a benchmark's fixed stream, for checking
// that a speed change keeps the events bit-identical: run `<bench> --digest` before and after
// the change and compare the lines. Two digests per stream:
// - ordered: FNV-1a over every event's (pulse ns, TOF ns, pixel, source), in the order the
//   pipeline hands them to its sinks (source by source, as each sink receives them);
// - as a set: the sum of a 64-bit mix of each event, the same for any order of the same events
//   (what must hold where a change may reorder events inside a message, not change them).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string_view>

#include <benchmark/benchmark.h>

#include "efu/counters.h"
#include "efu/plugin.h"

namespace efu::bench {

struct EventDigest {
  std::uint64_t events = 0;
  std::uint64_t ordered = 14695981039346656037ULL;  // the FNV-1a 64 offset basis
  std::uint64_t as_set = 0;

  void add(std::uint64_t pulse_ns, std::uint32_t tof_ns, std::uint32_t pixel,
           std::uint32_t source) noexcept {
    ++events;
    const std::uint64_t words[] = {pulse_ns, tof_ns, pixel, source};
    for (std::uint64_t w : words) {
      for (int byte = 0; byte < 8; ++byte) {
        ordered ^= (w >> (8 * byte)) & 0xFF;
        ordered *= 1099511628211ULL;  // the FNV-1a 64 prime
      }
    }
    as_set += mix(mix(mix(pulse_ns) ^ tof_ns) ^ (std::uint64_t{pixel} << 32 | source));
  }

  /// Prints `name events ordered as_set` as one line.
  void print(const char* name) const {
    std::printf("%-24s events %10llu  ordered %016llx  as_set %016llx\n", name,
                static_cast<unsigned long long>(events), static_cast<unsigned long long>(ordered),
                static_cast<unsigned long long>(as_set));
  }

 private:
  // splitmix64's finaliser: every input bit reaches every output bit.
  static std::uint64_t mix(std::uint64_t z) noexcept {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
};

/// Prints every non-zero counter of `counters` as `  name value`, one per line (the accounting
/// must match before and after a change, as the events must).
inline void print_counters(const CounterRegistry& counters) {
  for (const CounterSample& c : counters.sample()) {
    if (c.value != 0) {
      std::printf("  %-40s %llu\n", c.name.c_str(), static_cast<unsigned long long>(c.value));
    }
  }
}

/// An event sink that adds each event to `digest` under source number `source`.
class DigestSink final : public EventSink {
 public:
  DigestSink(EventDigest& digest, std::uint32_t source) : digest_(digest), source_(source) {}
  void add(std::uint64_t pulse_ns, std::uint32_t tof_ns, std::uint32_t pixel) override {
    digest_.add(pulse_ns, tof_ns, pixel, source_);
  }

 private:
  EventDigest& digest_;
  std::uint32_t source_;
};

/// A benchmark binary's main(): `--digest` alone runs `print_digests` and exits, anything else
/// is Google Benchmark's command line.
inline int digest_or_benchmark_main(int argc, char** argv, void (*print_digests)()) {
  if (argc == 2 && std::string_view(argv[1]) == "--digest") {
    print_digests();
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace efu::bench
