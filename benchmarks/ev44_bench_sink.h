// The event sink a detector benchmark puts its events in: what efu's processing thread does
// with them (an ev44 message built per max_bytes and serialised when full), without Kafka.
#pragma once

#include <cstdint>

#include <benchmark/benchmark.h>

#include "efu/kafka/ev44_builder.h"
#include "efu/plugin.h"

namespace efu::bench {

class Ev44BenchSink : public EventSink {
 public:
  explicit Ev44BenchSink(const char* source_name) : builder_{source_name, 1'000'000} {}

  void add(std::uint64_t pulse_ns, std::uint32_t tof_ns, std::uint32_t pixel) override {
    if (builder_.full()) {
      benchmark::DoNotOptimize(builder_.finish(message_id_++).data());
      builder_.reset();
    }
    builder_.add(pulse_ns, tof_ns, pixel);
    ++events;
  }
  void add_pulse(std::uint64_t pulse_ns, const std::uint32_t* tof_ns, const std::uint32_t* pixel,
                 std::size_t n) override {
    events += n;
    while (n != 0) {
      if (builder_.full()) {
        benchmark::DoNotOptimize(builder_.finish(message_id_++).data());
        builder_.reset();
      }
      const std::size_t k = builder_.add_pulse(pulse_ns, tof_ns, pixel, n);
      tof_ns += k;
      pixel += k;
      n -= k;
    }
  }
  std::uint64_t events = 0;

 private:
  kafka::Ev44Builder builder_;
  std::int64_t message_id_ = 0;
};

}  // namespace efu::bench
