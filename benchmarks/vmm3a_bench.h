// What the VMM3a detector families' benchmarks (multiblade_bench, nmx_bench, trex_bench) share:
// the stream of full v1 packets of one pulse that a family's generated readouts are packed into,
// in time order, shuffled inside every packet, or shuffled with 20 % of the readouts delayed by
// 1..3 packets (what a readout master's queues do to them); the readout-parse loop over such a
// stream and the touch-bytes baseline on it; and the whole-pipeline loop that replays the pulse
// into a fresh pipeline every round. A family generates its readouts from its own seed and config,
// so its streams, and the results of earlier runs, stay what they were.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "detector_bench.h"
#include "efu/counters.h"
#include "efu/ess/ess_time.h"
#include "efu/ess/header_writer.h"
#include "efu/ess/readout_header.h"
#include "efu/plugin.h"
#include "efu/vmm3a/hybrid_calibration.h"
#include "efu/vmm3a/readout.h"
#include "efu/vmm3a/readout_parser.h"

namespace efu::bench {

inline constexpr std::uint64_t kPulseNs = 1'700'000'000'000'000'000ULL;
inline constexpr std::uint32_t kPacketSize = 8972;  // a jumbo frame's UDP payload

/// How the readouts of a stream are ordered on the wire (the benchmarks' argument `order`).
enum class Order : int {
  kTimeOrdered = 0,  // as generated, time ordered
  kShuffled = 1,     // every packet's readouts in random order
  kDelayed = 2,      // shuffled, and 20 % of the readouts moved 1..3 packets later
};

struct Vmm3aStream {
  std::vector<std::vector<std::uint8_t>> packets;
  std::uint64_t readouts = 0;
  std::uint64_t neutrons = 0;
};

using Vmm3aReadout = std::array<std::uint8_t, vmm3a::kReadoutSize>;

/// One readout of the hybrid at (`ring`, `fen`): fibre = ring * 2, no BC, GEO or TDC.
inline Vmm3aReadout vmm3a_readout(std::uint8_t ring, std::uint8_t fen, std::uint8_t vmm,
                                  std::uint8_t channel, std::uint16_t adc, std::uint64_t time_ns) {
  const ess::EssTime t = ess::to_ess(time_ns);
  Vmm3aReadout r{};
  vmm3a::write_readout(r.data(),
                       vmm3a::Readout{static_cast<std::uint8_t>(ring * 2), fen, vmm3a::kReadoutSize,
                                      t.high, t.low, 0, adc, 0, 0, vmm, channel});
  return r;
}

/// A v1 packet of detector type `type` with `readouts`, in the pulse at kPulseNs (the previous
/// one a 14 Hz period before).
inline std::vector<std::uint8_t> vmm3a_packet(const std::vector<Vmm3aReadout>& readouts,
                                              std::uint8_t type, std::uint32_t sequence) {
  std::vector<std::uint8_t> packet(ess::kHeaderSizeV1);
  for (const Vmm3aReadout& r : readouts) packet.insert(packet.end(), r.begin(), r.end());
  ess::HeaderFields f;
  f.type = type;
  f.total_length = static_cast<std::uint16_t>(packet.size());
  f.pulse = ess::to_ess(kPulseNs);
  f.prev_pulse = ess::to_ess(kPulseNs - 71'428'571);
  f.sequence = sequence;
  ess::write_header(packet.data(), f);
  return packet;
}

/// `readouts` (of `neutrons` neutrons) packed into full packets of type `type` in `order`; the
/// delays and shuffles draw from `rng`, the generator the readouts were drawn from, so that a
/// stream depends on its family's seed alone. A packet that the delays left empty is not sent,
/// and the sequence numbers count the packets sent.
inline Vmm3aStream vmm3a_stream(const std::vector<Vmm3aReadout>& readouts, std::uint64_t neutrons,
                                Order order, std::mt19937_64& rng, std::uint8_t type) {
  const std::size_t per_packet = (kPacketSize - ess::kHeaderSizeV1) / vmm3a::kReadoutSize;
  std::vector<std::vector<Vmm3aReadout>> packets;
  for (std::size_t i = 0; i < readouts.size(); i += per_packet) {
    packets.emplace_back(
        readouts.begin() + static_cast<std::ptrdiff_t>(i),
        readouts.begin() + static_cast<std::ptrdiff_t>(std::min(i + per_packet, readouts.size())));
  }
  if (order == Order::kDelayed) {
    std::vector<std::vector<Vmm3aReadout>> delayed(packets.size() + 3);
    for (std::size_t p = 0; p < packets.size(); ++p) {
      for (const Vmm3aReadout& r : packets[p])
        delayed[p + (rng() % 5 == 0 ? 1 + rng() % 3 : 0)].push_back(r);
    }
    packets.swap(delayed);
  }
  if (order != Order::kTimeOrdered) {
    for (auto& p : packets) std::shuffle(p.begin(), p.end(), rng);
  }
  Vmm3aStream out;
  out.readouts = readouts.size();
  out.neutrons = neutrons;
  std::uint32_t sequence = 0;
  for (const auto& p : packets) {
    if (!p.empty()) out.packets.push_back(vmm3a_packet(p, type, sequence++));
  }
  return out;
}

/// The three orders' streams from `make(order)`, made on first use and kept for the run.
template <Vmm3aStream (*Make)(Order)>
const Vmm3aStream& cached_stream(Order order) {
  static const Vmm3aStream streams[] = {Make(Order::kTimeOrdered), Make(Order::kShuffled),
                                        Make(Order::kDelayed)};
  return streams[static_cast<int>(order)];
}

/// The touch-bytes baseline (detector_bench.h) on the stream: the last byte of every readout.
inline void touch_readouts(benchmark::State& state, const Vmm3aStream& s) {
  touch_bytes(state, s.packets, s.readouts, ess::kHeaderSizeV1, vmm3a::kReadoutSize,
              vmm3a::kReadoutSize - 1);
}

/// The readout-parse benchmark: each packet's ESS header, then its readouts with a
/// vmm3a::ReadoutParser on `map` (identity calibration, `settings`), the hits' units and
/// coordinates summed so that nothing is optimised away; counts the stream's readouts as items
/// per iteration.
template <typename Map>
void parse_hits(benchmark::State& state, const Vmm3aStream& s, std::uint8_t type, const Map& map,
                const vmm3a::ReadoutSettings& settings) {
  CounterRegistry counters;
  ess::HeaderParser header_parser(counters, type);
  const vmm3a::HybridCalibration calibration;
  vmm3a::ReadoutParser<Map> parser(counters, map, calibration, settings);
  for (auto _ : state) {
    for (const auto& p : s.packets) {
      ess::PacketHeader h;
      if (header_parser.parse(p.data(), static_cast<std::uint32_t>(p.size()), h) !=
          ess::HeaderStatus::kData) {
        state.SkipWithError("bad packet");
        return;
      }
      std::uint64_t sum = 0;
      parser.parse(p.data() + h.header_size, static_cast<std::uint32_t>(p.size() - h.header_size),
                   h, [&](std::uint32_t unit, const auto& hit) { sum += unit + hit.coordinate; });
      benchmark::DoNotOptimize(sum);
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * s.readouts));
}

/// What replay_pulse() counted over all its rounds.
struct PulseCounts {
  std::uint64_t late = 0;    // hits.late
  std::uint64_t formed = 0;  // events.formed
};

/// The whole-pipeline benchmark: every round replays the stream's pulse, in batches of 64 as the
/// host hands them, into a fresh pipeline from `make(counters)` and flushes it. The pipeline is
/// made and destroyed outside the timing, so no round's hits are late against the one before.
/// Counts the readouts as items and reports late_per_readout; returns the rounds' counts.
template <typename MakePipeline>
PulseCounts replay_pulse(benchmark::State& state, const Vmm3aStream& s, MakePipeline make) {
  std::vector<PacketView> views;
  for (const auto& p : s.packets) views.push_back({p.data(), static_cast<std::uint32_t>(p.size())});
  PulseCounts counts;
  for (auto _ : state) {
    state.PauseTiming();
    CounterRegistry counters;
    auto pipeline = make(counters);
    state.ResumeTiming();
    for (std::size_t i = 0; i < views.size(); i += 64) {
      pipeline->process(PacketBatch(views.data() + i, std::min<std::size_t>(64, views.size() - i)));
    }
    pipeline->flush();
    state.PauseTiming();
    counts.late += counters.value("hits.late");
    counts.formed += counters.value("events.formed");
    pipeline.reset();
    state.ResumeTiming();
  }
  const auto readouts = static_cast<double>(state.iterations() * s.readouts);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * s.readouts));
  state.counters["late_per_readout"] = static_cast<double>(counts.late) / readouts;
  return counts;
}

/// The benchmark's argument `order`, 0..`Count` - 1, timed in milliseconds (for Apply()).
template <int Count>
void orders(benchmark::internal::Benchmark* b) {
  b->ArgName("order")->Unit(benchmark::kMillisecond);
  for (int order = 0; order < Count; ++order) b->Arg(order);
}

}  // namespace efu::bench
