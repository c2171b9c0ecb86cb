// Multi-Blade processing speed on one core: header parsing, VMM3a parsing, clustering and the
// whole pipeline into an ev44 builder, on readouts in time order (order:0), shuffled inside
// every packet (order:1), shuffled and 20 % delayed by 1..3 packets (order:2), and the facility
// generator's random-time pairs (order:3). BM_Baseline_TouchBytes reads the same packets once;
// the pipeline's cost is reported against it and the disordered orders against order:0 (compare
// the items/s in one run). BM_PipelineLiveHistograms is BM_Pipeline with efu --histograms on.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "clusterer.h"
#include "detector_bench.h"
#include "efu/ess/readout_header.h"
#include "efu/kafka/da00_builder.h"
#include "efu/live_histograms.h"
#include "efu/vmm3a/readout.h"
#include "ev44_bench_sink.h"
#include "event_digest.h"
#include "multiblade_pipeline.h"
#include "vmm3a_bench.h"

namespace efu::multiblade {
namespace {

class CountingSink : public EventSink {
 public:
  void add(std::uint64_t, std::uint32_t, std::uint32_t) override { ++events; }
  std::uint64_t events = 0;
};

// EFU_MB_BENCH_GEOMETRY=FILE runs the benchmarks on another instrument config (for example one
// ring's four cassettes, as one output queue carries them on the real Freia).
std::string geometry_path() {
  const char* path = std::getenv("EFU_MB_BENCH_GEOMETRY");
  return path != nullptr && *path != '\0' ? std::string(path) : default_geometry_path();
}

const Geometry& geometry() {
  static const Geometry g = Geometry::from_file(geometry_path());
  return g;
}

constexpr std::uint8_t kFreiaType = 0x48;

// How the readouts of the stream are ordered on the wire: bench::Order's three, and the
// facility generator's random times.
enum class Order : int {
  kTimeOrdered = 0,  // as generated, time ordered
  kShuffled = 1,     // every packet's readouts in random order
  kDelayed = 2,      // shuffled, and 20 % of the readouts moved 1..3 packets later
  kRandomTime = 3,   // the facility generator's kind: each wire/strip pair at a random time
};

using Stream = bench::Vmm3aStream;
using Readout = bench::Vmm3aReadout;

Readout make_readout(std::uint32_t cassette, Plane plane, std::uint32_t local, std::uint16_t adc,
                     std::uint64_t time) {
  const Geometry& g = geometry();
  return bench::vmm3a_readout(g.cassette(cassette).ring, g.cassette(cassette).fen,
                              g.vmm_of(cassette, plane), g.channel_of(plane, local), adc, time);
}

// Time ordered: neutrons 2 us apart, 3 wires + 3 strips each. Random time: 90'000 wire/strip
// pairs at random times in the pulse. Packed into full v1 packets of one pulse, one queue.
Stream make_stream(Order order) {
  std::uint64_t neutrons = 0;
  std::mt19937_64 rng(7);
  const Geometry& g = geometry();
  std::vector<Readout> readouts;
  if (order == Order::kRandomTime) {
    for (std::uint64_t n = 0; n < 90'000; ++n) {
      const auto c = static_cast<std::uint32_t>(rng() % g.cassettes());
      const std::uint64_t t = bench::kPulseNs + 10'000 + rng() % 70'000'000;
      readouts.push_back(
          make_readout(c, Plane::kWire, static_cast<std::uint32_t>(rng() % 32), 600, t));
      readouts.push_back(
          make_readout(c, Plane::kStrip, static_cast<std::uint32_t>(rng() % 64), 600, t));
      ++neutrons;
    }
  } else {
    for (std::uint64_t n = 0; n < 30'000; ++n) {
      const auto c = static_cast<std::uint32_t>(rng() % g.cassettes());
      const auto wire = static_cast<std::uint32_t>(1 + rng() % (kWiresPerCassette - 2));
      const auto strip = static_cast<std::uint32_t>(1 + rng() % (kStripsPerCassette - 2));
      const std::uint64_t t = bench::kPulseNs + 10'000 + n * 2000;
      for (std::uint32_t k = 0; k < 3; ++k)
        readouts.push_back(make_readout(c, Plane::kWire, wire - 1 + k,
                                        static_cast<std::uint16_t>(200 + 100 * (k == 1)),
                                        t + k * 10));
      for (std::uint32_t k = 0; k < 3; ++k)
        readouts.push_back(make_readout(c, Plane::kStrip, strip - 1 + k,
                                        static_cast<std::uint16_t>(200 + 100 * (k == 1)),
                                        t + k * 15));
      ++neutrons;
    }
  }
  const auto wire_order =
      order == Order::kRandomTime ? bench::Order::kTimeOrdered : static_cast<bench::Order>(order);
  return bench::vmm3a_stream(readouts, neutrons, wire_order, rng, kFreiaType);
}

const Stream& stream(Order order = Order::kTimeOrdered) {
  static const Stream streams[] = {make_stream(Order::kTimeOrdered), make_stream(Order::kShuffled),
                                   make_stream(Order::kDelayed), make_stream(Order::kRandomTime)};
  return streams[static_cast<int>(order)];
}

void BM_Baseline_TouchBytes(benchmark::State& state) {
  const Stream& s = stream();
  bench::touch_bytes(state, s.packets, s.readouts, 0, 20, 19);
}

void BM_HeaderParse(benchmark::State& state) {
  CounterRegistry counters;
  ess::HeaderParser parser(counters, kFreiaType);
  std::vector<std::uint8_t> packet = stream().packets.front();
  std::uint32_t sequence = 0;
  for (auto _ : state) {
    ess::store_u32(packet.data() + 26, sequence++);  // a clean sequence, as on the wire
    ess::PacketHeader h;
    benchmark::DoNotOptimize(
        parser.parse(packet.data(), static_cast<std::uint32_t>(packet.size()), h));
    benchmark::DoNotOptimize(h);
  }
  state.SetItemsProcessed(state.iterations());  // packets
}

void BM_ReadoutParse(benchmark::State& state) {
  bench::parse_hits(state, stream(static_cast<Order>(state.range(0))), kFreiaType, geometry(),
                    ReadoutSettings{200'000'000});
}

void BM_Clustering(benchmark::State& state) {
  // Hits as the parser would hand them over, packet by packet.
  const auto order = static_cast<Order>(state.range(0));
  std::vector<std::vector<std::pair<std::uint32_t, Hit>>> packets;
  {
    CounterRegistry counters;
    ess::HeaderParser header_parser(counters, kFreiaType);
    const Calibration calibration;
    ReadoutParser parser(counters, geometry(), calibration, ReadoutSettings{200'000'000});
    for (const auto& p : stream(order).packets) {
      ess::PacketHeader h;
      header_parser.parse(p.data(), static_cast<std::uint32_t>(p.size()), h);
      packets.emplace_back();
      parser.parse(p.data() + h.header_size, static_cast<std::uint32_t>(p.size() - h.header_size),
                   h,
                   [&](std::uint32_t c, const Hit& hit) { packets.back().emplace_back(c, hit); });
    }
  }
  CounterRegistry counters;
  CountingSink sink;
  std::uint64_t shift = 0;
  std::uint64_t hits = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Clusterer clusterer(counters, geometry(), ClusterSettings{}, sink);
    state.ResumeTiming();
    for (const auto& p : packets) {
      clusterer.begin_packet(0);
      for (auto [cassette, hit] : p) {
        hit.time_ns += shift;
        clusterer.add(cassette, hit);
      }
      clusterer.end_packet();
      hits += p.size();
    }
    clusterer.close_all();
    shift += 1'000'000'000;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(hits));
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(sink.events), benchmark::Counter::kIsRate);
}

/// The plugin's config as efu would make it: every option at its default, the bench geometry.
MultibladeConfig bench_config() {
  OptionValues options;
  for (std::size_t i = 0; i < kOptionCount; ++i)
    options.set(kOptions[i].name, kOptions[i].default_value, false);
  options.set("geometry", geometry_path(), true);
  return config_from_options(options);
}

// Parse -> ev44, the whole plugin on one core. Compare the items/s (readouts/s) of the orders
// in one run: shuffled and delayed against time ordered.
void BM_Pipeline(benchmark::State& state) {
  const auto order = static_cast<Order>(state.range(0));
  const Stream& s = stream(order);
  const MultibladeConfig config = bench_config();
  bench::Ev44BenchSink sink("multiblade");
  bench::replay_pulse(state, s, [&](CounterRegistry& counters) {
    return std::make_unique<MultibladePipeline>(config, counters, sink);
  });
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(sink.events), benchmark::Counter::kIsRate);
  state.counters["events_per_readout"] =
      static_cast<double>(sink.events) / static_cast<double>(state.iterations() * s.readouts);
}

// The host's live histograms (efu --histograms) on the same pipeline: every event also counted
// in a TOF and a pixel histogram, each serialised as da00 every 14 pulses, as the host does.
// Compare its items/s with BM_Pipeline's of the same order in one run: the cost of
// --histograms is 1 - (this / BM_Pipeline).
class Da00BenchSink final : public HistogramSink {
 public:
  explicit Da00BenchSink(const char* source) : builder_(source) {}
  void publish(const DataArrayView& array) override {
    benchmark::DoNotOptimize(builder_.build(array).data());
    ++messages;
  }
  std::uint64_t messages = 0;

 private:
  kafka::Da00Builder builder_;
};

/// Moves every event one pulse period later per round, so that each round of the replayed
/// pulse is a new pulse to the live histograms and a window closes every 14 rounds (the bench
/// stream's pulse is smaller than a real one, so this publishes more often than efu would).
class NextPulseSink final : public EventSink {
 public:
  explicit NextPulseSink(EventSink& next) : next_(next) {}
  void next_round() { shift_ += 71'428'571; }
  void add(std::uint64_t pulse_ns, std::uint32_t tof_ns, std::uint32_t pixel) override {
    next_.add(pulse_ns + shift_, tof_ns, pixel);
  }
  void add_pulse(std::uint64_t pulse_ns, const std::uint32_t* tof_ns, const std::uint32_t* pixel,
                 std::size_t n) override {
    next_.add_pulse(pulse_ns + shift_, tof_ns, pixel, n);
  }

 private:
  EventSink& next_;
  std::uint64_t shift_ = 0;
};

void BM_PipelineLiveHistograms(benchmark::State& state) {
  const auto order = static_cast<Order>(state.range(0));
  const Stream& s = stream(order);
  const MultibladeConfig config = bench_config();
  bench::Ev44BenchSink sink("multiblade");
  Da00BenchSink tof_out("multiblade_tof");
  Da00BenchSink pixel_out("multiblade_pixels");
  CounterRegistry histogram_counters;
  LiveHistogramSettings live_settings;  // the defaults: 14 pulses, 500 bins, 16384 pixels
  live_settings.topic = "live";
  LiveHistograms live(live_settings, tof_out, pixel_out, histogram_counters);
  HistogrammedSink tee(sink, live);
  NextPulseSink rounds(tee);
  bench::replay_pulse(state, s, [&](CounterRegistry& counters) {
    rounds.next_round();
    return std::make_unique<MultibladePipeline>(config, counters, rounds);
  });
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(sink.events), benchmark::Counter::kIsRate);
  state.counters["da00_messages"] = static_cast<double>(tof_out.messages + pixel_out.messages);
}

/// Keeps every event, for replaying them alone.
class CollectingSink final : public EventSink {
 public:
  void add(std::uint64_t pulse_ns, std::uint32_t tof_ns, std::uint32_t pixel) override {
    pulses.push_back(pulse_ns);
    tofs.push_back(tof_ns);
    pixels.push_back(pixel);
  }
  std::vector<std::uint64_t> pulses;
  std::vector<std::uint32_t> tofs;
  std::vector<std::uint32_t> pixels;
};

// The live histograms alone, per event: the events BM_Pipeline forms from the same order, each
// round one pulse later, through the tee into a sink that does nothing. Its ns per event times
// BM_Pipeline's events per readout, over BM_Pipeline's ns per readout, is the share of the
// processing time --histograms costs, less noisy than the difference of two pipeline runs.
void BM_LiveHistogramsPerEvent(benchmark::State& state) {
  const auto order = static_cast<Order>(state.range(0));
  const MultibladeConfig config = bench_config();
  CollectingSink events;
  {
    CounterRegistry counters;
    MultibladePipeline pipeline(config, counters, events);
    std::vector<PacketView> views;
    for (const auto& p : stream(order).packets)
      views.push_back({p.data(), static_cast<std::uint32_t>(p.size())});
    for (std::size_t i = 0; i < views.size(); i += 64) {
      pipeline.process(PacketBatch(views.data() + i, std::min<std::size_t>(64, views.size() - i)));
    }
    pipeline.flush();
  }
  class NullSink final : public EventSink {
   public:
    void add(std::uint64_t, std::uint32_t, std::uint32_t) override {}
  } null;
  Da00BenchSink tof_out("multiblade_tof");
  Da00BenchSink pixel_out("multiblade_pixels");
  CounterRegistry counters;
  LiveHistogramSettings live_settings;
  live_settings.topic = "live";
  LiveHistograms live(live_settings, tof_out, pixel_out, counters);
  HistogrammedSink tee(null, live);
  std::uint64_t shift = 0;
  for (auto _ : state) {
    for (std::size_t i = 0; i < events.pulses.size(); ++i) {
      tee.add(events.pulses[i] + shift, events.tofs[i], events.pixels[i]);
    }
    shift += 71'428'571;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * events.pulses.size()));
  state.counters["da00_messages"] = static_cast<double>(tof_out.messages + pixel_out.messages);
}

BENCHMARK(BM_Baseline_TouchBytes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HeaderParse);
BENCHMARK(BM_ReadoutParse)->Apply(bench::orders<4>);
BENCHMARK(BM_Clustering)->Apply(bench::orders<4>);
BENCHMARK(BM_Pipeline)->Apply(bench::orders<4>);
BENCHMARK(BM_PipelineLiveHistograms)->Apply(bench::orders<4>);
BENCHMARK(BM_LiveHistogramsPerEvent)->Apply(bench::orders<4>);

// --digest: each order's stream once through the pipeline (then flushed), the events' digests
// and the counters printed (benchmarks/event_digest.h), to show that a speed change keeps them.
void print_digests() {
  const MultibladeConfig config = bench_config();
  const char* names[] = {"order:0 time-ordered", "order:1 shuffled", "order:2 delayed",
                         "order:3 random-time"};
  for (int order = 0; order < 4; ++order) {
    const Stream& s = stream(static_cast<Order>(order));
    CounterRegistry counters;
    bench::EventDigest digest;
    bench::DigestSink sink(digest, 0);
    MultibladePipeline pipeline(config, counters, sink);
    std::vector<PacketView> views;
    for (const auto& p : s.packets)
      views.push_back({p.data(), static_cast<std::uint32_t>(p.size())});
    for (std::size_t i = 0; i < views.size(); i += 64) {
      pipeline.process(PacketBatch(views.data() + i, std::min<std::size_t>(64, views.size() - i)));
    }
    pipeline.flush();
    digest.print(names[order]);
    bench::print_counters(counters);
  }
}

}  // namespace
}  // namespace efu::multiblade

int main(int argc, char** argv) {
  return efu::bench::digest_or_benchmark_main(argc, argv, efu::multiblade::print_digests);
}
