// Outputs for --broker none: plugin development without Kafka. Events are counted and dropped,
// so the counters still show what would have been published.
#include <memory>
#include <string_view>
#include <vector>

#include "efu/outputs.h"

namespace efu {
namespace {

/// Counts the arrays a pipeline publishes ("da00.discarded").
class CountingHistogramSink final : public HistogramSink {
 public:
  explicit CountingHistogramSink(CounterRegistry& counters)
      : discarded_(counters.counter("da00.discarded")) {}
  void publish(const DataArrayView&) override { discarded_.add(); }

 private:
  Counter& discarded_;
};

/// Every source of a thread, the host's own and the named ones, counts into the same
/// "events.discarded".
class CountingEventOutput final : public EventOutput, public SourceOutputs {
 public:
  explicit CountingEventOutput(CounterRegistry& counters)
      : discarded_(counters.counter("events.discarded")), histograms_(counters) {}
  void add(std::uint64_t, std::uint32_t, std::uint32_t) override { discarded_.add(); }
  void add_pulse(std::uint64_t, const std::uint32_t*, const std::uint32_t*,
                 std::size_t n) override {
    discarded_.add(n);
  }
  void tick(std::uint64_t) override {}
  void flush() override {}
  SourceOutputs* sources() override { return this; }
  EventSink& events(std::string_view) override { return *this; }
  HistogramSink& histograms(std::string_view) override { return histograms_; }

 private:
  Counter& discarded_;
  CountingHistogramSink histograms_;
};

class NullOutputs final : public Outputs {
 public:
  NullOutputs(const OutputSettings& settings, CounterRegistry& counters) {
    events_.reserve(settings.threads);
    for (unsigned i = 0; i < settings.threads; ++i) {
      events_.push_back(std::make_unique<CountingEventOutput>(counters));
    }
  }
  EventOutput& events(unsigned thread) override { return *events_.at(thread); }
  RawOutput* raw(unsigned) override { return nullptr; }
  StatsSink* status() override { return nullptr; }
  void poll() override {}
  std::uint64_t flush(std::chrono::milliseconds) override { return 0; }

 private:
  std::vector<std::unique_ptr<CountingEventOutput>> events_;
};

}  // namespace

std::unique_ptr<Outputs> make_null_outputs(const OutputSettings& settings,
                                           CounterRegistry& counters) {
  return std::make_unique<NullOutputs>(settings, counters);
}

}  // namespace efu
