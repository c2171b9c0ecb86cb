// Multi-Blade processing speed on one core: header parsing, VMM3a parsing, clustering and the
// whole pipeline into an ev44 builder. BM_Baseline_TouchBytes reads the same packets once; the
// pipeline's cost is reported against it (compare the items/s of the two in one run).
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "clusterer.h"
#include "efu/ess/header_writer.h"
#include "efu/ess/readout_header.h"
#include "efu/kafka/ev44_builder.h"
#include "multiblade_pipeline.h"
#include "readout_parser.h"
#include "vmm3_readout.h"

namespace efu::multiblade {
namespace {

constexpr std::uint64_t kPulseNs = 1'700'000'000'000'000'000ULL;
constexpr std::uint32_t kPacketSize = 8972;

/// The sink the host would use: an ev44 message per max_bytes, serialised when full.
class Ev44Sink : public EventSink {
 public:
  void add(std::uint64_t pulse_ns, std::uint32_t tof_ns, std::uint32_t pixel) override {
    if (builder_.full()) {
      benchmark::DoNotOptimize(builder_.finish(message_id_++).data());
      builder_.reset();
    }
    builder_.add(pulse_ns, tof_ns, pixel);
    ++events;
  }
  std::uint64_t events = 0;

 private:
  kafka::Ev44Builder builder_{"multiblade", 1'000'000};
  std::int64_t message_id_ = 0;
};

class CountingSink : public EventSink {
 public:
  void add(std::uint64_t, std::uint32_t, std::uint32_t) override { ++events; }
  std::uint64_t events = 0;
};

const Geometry& geometry() {
  static const Geometry g = Geometry::from_file(default_geometry_path());
  return g;
}

struct Stream {
  std::vector<std::vector<std::uint8_t>> packets;
  std::uint64_t readouts = 0;
  std::uint64_t neutrons = 0;
};

// Neutrons 2 us apart, 3 wires + 3 strips each, packed into full v1 packets of one pulse.
const Stream& stream() {
  static const Stream s = [] {
    Stream out;
    std::mt19937_64 rng(7);
    const Geometry& g = geometry();
    std::vector<std::uint8_t> packet;
    std::uint32_t sequence = 0;
    auto flush = [&] {
      ess::HeaderFields f;
      f.type = kDetectorType;
      f.total_length = static_cast<std::uint16_t>(packet.size());
      f.pulse = ess::to_ess(kPulseNs);
      f.prev_pulse = ess::to_ess(kPulseNs - 71'428'571);
      f.sequence = sequence++;
      ess::write_header(packet.data(), f);
      out.packets.push_back(packet);
      packet.clear();
    };
    auto readout = [&](std::uint32_t cassette, Plane plane, std::uint32_t coordinate,
                       std::uint16_t adc, std::uint64_t time) {
      if (packet.size() + kReadoutSize > kPacketSize) flush();
      if (packet.empty()) packet.resize(ess::kHeaderSizeV1);
      const PlaneLocation& loc = g.location(cassette, plane);
      const ess::EssTime t = ess::to_ess(time);
      const std::size_t at = packet.size();
      packet.resize(at + kReadoutSize);
      write_readout(
          packet.data() + at,
          Vmm3Readout{loc.fiber, loc.fen, kReadoutSize, t.high, t.low, 0, adc, 0, 0, loc.vmm,
                      static_cast<std::uint8_t>(loc.first_channel + coordinate)});
      ++out.readouts;
    };
    for (std::uint64_t n = 0; n < 30'000; ++n) {
      const auto cassette = static_cast<std::uint32_t>(rng() % g.cassettes());
      const auto wire = static_cast<std::uint32_t>(1 + rng() % (g.wires() - 2));
      const auto strip = static_cast<std::uint32_t>(1 + rng() % (g.strips() - 2));
      const std::uint64_t t = kPulseNs + 10'000 + n * 2000;
      for (std::uint32_t k = 0; k < 3; ++k)
        readout(cassette, Plane::kWire, wire - 1 + k, 200 + 100 * (k == 1), t + k * 10);
      for (std::uint32_t k = 0; k < 3; ++k)
        readout(cassette, Plane::kStrip, strip - 1 + k, 200 + 100 * (k == 1), t + k * 15);
      ++out.neutrons;
    }
    if (!packet.empty()) flush();
    return out;
  }();
  return s;
}

void BM_Baseline_TouchBytes(benchmark::State& state) {
  const Stream& s = stream();
  for (auto _ : state) {
    std::uint64_t sum = 0;
    for (const auto& p : s.packets) {
      for (std::size_t i = 0; i < p.size(); i += 20) sum += p[i + 19];  // one load per readout
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * s.readouts));
}

void BM_HeaderParse(benchmark::State& state) {
  CounterRegistry counters;
  ess::HeaderParser parser(counters, kDetectorType);
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
  CounterRegistry counters;
  ess::HeaderParser header_parser(counters, kDetectorType);
  ReadoutParser parser(counters, geometry(), ReadoutSettings{50, 200'000'000});
  const Stream& s = stream();
  std::uint64_t readouts = 0;
  for (auto _ : state) {
    for (const auto& p : s.packets) {
      ess::PacketHeader h;
      if (header_parser.parse(p.data(), static_cast<std::uint32_t>(p.size()), h) !=
          ess::HeaderStatus::kData) {
        state.SkipWithError("bad packet");
        return;
      }
      std::uint64_t sum = 0;
      parser.parse(
          p.data() + h.header_size, static_cast<std::uint32_t>(p.size() - h.header_size), h,
          [&](std::uint32_t cassette, const Hit& hit) { sum += cassette + hit.coordinate; });
      benchmark::DoNotOptimize(sum);
    }
    readouts += s.readouts;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(readouts));
}

void BM_Clustering(benchmark::State& state) {
  // Hits as the parser would hand them over.
  std::vector<std::pair<std::uint32_t, Hit>> hits;
  {
    CounterRegistry counters;
    ess::HeaderParser header_parser(counters, kDetectorType);
    ReadoutParser parser(counters, geometry(), ReadoutSettings{50, 200'000'000});
    for (const auto& p : stream().packets) {
      ess::PacketHeader h;
      header_parser.parse(p.data(), static_cast<std::uint32_t>(p.size()), h);
      parser.parse(p.data() + h.header_size, static_cast<std::uint32_t>(p.size() - h.header_size),
                   h, [&](std::uint32_t c, const Hit& hit) { hits.emplace_back(c, hit); });
    }
  }
  CounterRegistry counters;
  CountingSink sink;
  std::uint64_t shift = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Clusterer clusterer(counters, geometry(), ClusterSettings{}, sink);
    state.ResumeTiming();
    for (auto [cassette, hit] : hits) {
      hit.time_ns += shift;
      clusterer.add(cassette, hit);
    }
    clusterer.close_all();
    shift += 1'000'000'000;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * hits.size()));
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(sink.events), benchmark::Counter::kIsRate);
}

void BM_Pipeline(benchmark::State& state) {
  const Stream& s = stream();
  OptionValues options;
  for (std::size_t i = 0; i < kOptionCount; ++i)
    options.set(kOptions[i].name, kOptions[i].default_value, false);
  CounterRegistry counters;
  Ev44Sink sink;
  MultibladePipeline pipeline(config_from_options(options), counters, sink);
  std::vector<PacketView> views;
  for (const auto& p : s.packets) views.push_back({p.data(), static_cast<std::uint32_t>(p.size())});
  for (auto _ : state) {
    // Each round replays the same pulse; flush() closes every group in between, so rounds do
    // not mix (the header parser counts one sequence error per round, which is negligible).
    for (std::size_t i = 0; i < views.size(); i += 64) {
      pipeline.process(PacketBatch(views.data() + i, std::min<std::size_t>(64, views.size() - i)));
    }
    pipeline.flush();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * s.readouts));
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(sink.events), benchmark::Counter::kIsRate);
  state.counters["events_per_neutron"] =
      static_cast<double>(sink.events) / static_cast<double>(state.iterations() * s.neutrons);
}

BENCHMARK(BM_Baseline_TouchBytes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HeaderParse);
BENCHMARK(BM_ReadoutParse)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Clustering)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Pipeline)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace efu::multiblade
