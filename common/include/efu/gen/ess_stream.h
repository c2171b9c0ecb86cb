// The ESS readout stream of a detector generator: packets assembled per output queue, sent paced
// (gen::Pacer, gen::PacketSender), header faults injected after good packets (gen::FaultInjector),
// pulses on the ESS 14 Hz ticks until --pulses / --count / --duration. The detector writes its
// readouts into packets() and hands each finished packet to send_data().
//
//   gen::EssStream stream(o, "efu-mygen", kMyType, kAcceptedFaults, kOtherType);
//   stream.run_pulses([&](std::uint64_t pulse, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
//     ... write readouts with stream.packets().append(q, n); when a queue is full:
//     stream.send_data(q, stream.packets().finish(q, to_ess(pulse_ns), to_ess(prev_ns)), pulse_ns,
//                      prev_ns, rng, [&](unsigned q) { ... broken readouts into q ... });
//   });
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "efu/errors.h"
#include "efu/ess/ess_time.h"
#include "efu/ess/packet_assembler.h"
#include "efu/gen/faults.h"
#include "efu/gen/generator_options.h"
#include "efu/gen/pacer.h"
#include "efu/gen/packet_sender.h"
#include "efu/gen/random.h"
#include "efu/gen/result_files.h"

namespace efu::gen {

inline constexpr std::uint64_t kPulsePeriodNs = 1'000'000'000 / 14;  // 71.43 ms, the ESS 14 Hz
/// The earliest neutron of a pulse, after the pulse time.
inline constexpr std::uint64_t kFirstTofNs = 10'000;
/// The span a pulse's neutrons are spread over from kFirstTofNs. It ends 100 us before the next
/// pulse, so every neutron and its hits belong to their own pulse.
inline constexpr std::uint64_t kNeutronWindowNs = kPulsePeriodNs - kFirstTofNs - 100'000;

/// The time between a pulse's neutrons, spread evenly over kNeutronWindowNs: the window over
/// --neutrons-per-pulse (the whole window for 0). ConfigError when there are more neutrons than
/// nanoseconds in the window.
inline std::uint64_t neutron_spacing_ns(std::uint64_t neutrons_per_pulse) {
  const std::uint64_t spacing =
      neutrons_per_pulse == 0 ? kNeutronWindowNs : kNeutronWindowNs / neutrons_per_pulse;
  if (spacing == 0) {
    throw ConfigError("--neutrons-per-pulse: '" + std::to_string(neutrons_per_pulse) +
                      "' is too many; expected at most " + std::to_string(kNeutronWindowNs));
  }
  return spacing;
}

/// The packet's readouts in random order: a Fisher-Yates shuffle of its `block`-byte readouts
/// after its `header` bytes, into a copy in `scratch` (kept by the caller, so that no packet
/// allocates once it has grown). Draws rng.below(i) for i = n..2, n the packet's readouts; the
/// header and any bytes past the last whole readout stay in place. Returns `scratch`.
std::span<const std::uint8_t> shuffle_readouts(std::span<const std::uint8_t> packet,
                                               std::size_t header, std::size_t block, Random& rng,
                                               std::vector<std::uint8_t>& scratch);

/// The queue's packet finished with the pulse times (ess::PacketAssembler::finish()), its
/// `block`-byte readouts shuffled into `scratch` with --shuffle (shuffle_readouts()): what a
/// generator of fixed-size readouts hands to EssStream::send_data().
std::span<const std::uint8_t> finish_packet(ess::PacketAssembler& packets, unsigned queue,
                                            std::uint64_t pulse_ns, std::uint64_t prev_ns,
                                            const ReorderOptions& o, std::size_t block, Random& rng,
                                            std::vector<std::uint8_t>& scratch);

/// --delay-fraction: whether to hold the next readout back, and if so by how long. Draws
/// rng.uniform(0, 1) when the fraction is above 0, then rng.below(max_delay_ns + 1) (the delay
/// in ns) when it is held; nothing when the fraction is 0.
inline std::optional<std::uint64_t> draw_delay_ns(Random& rng, const ReorderOptions& o) {
  if (o.delay_fraction > 0 && rng.uniform(0, 1) < o.delay_fraction) {
    return rng.below(o.max_delay_ns + 1);
  }
  return std::nullopt;
}

/// Readouts held back by --delay-fraction, each with its output queue and the generator time
/// (in the detector's unit) at which it may go out. release() hands the due ones to the
/// detector in the order they were held and keeps the rest in order; held() counts them all.
template <typename Item>
class HeldReadouts {
 public:
  void hold(unsigned queue, std::uint64_t release_at, const Item& item) {
    held_.push_back(Entry{queue, release_at, item});
    ++held_total_;
  }
  /// --delay-fraction: holds `item` back with the drawn delay (draw_delay_ns()) and returns
  /// true, or returns false when it goes out now. Its release time is `at` + to_unit(delay ns),
  /// `at` its time in the detector's unit: the readout lands in a later packet of its queue once
  /// the generator has moved on by up to --max-delay-ns, its own time unchanged.
  template <typename ToUnit>
  bool draw_and_hold(Random& rng, const ReorderOptions& o, unsigned queue, std::uint64_t at,
                     const Item& item, ToUnit&& to_unit) {
    const std::optional<std::uint64_t> delay_ns = draw_delay_ns(rng, o);
    if (delay_ns) hold(queue, at + to_unit(*delay_ns), item);
    return delay_ns.has_value();
  }
  bool draw_and_hold(Random& rng, const ReorderOptions& o, unsigned queue, std::uint64_t at_ns,
                     const Item& item) {
    return draw_and_hold(rng, o, queue, at_ns, item, [](std::uint64_t ns) { return ns; });
  }
  bool empty() const noexcept { return held_.empty(); }
  std::uint64_t held() const noexcept { return held_total_; }

  /// send(queue, item) for every readout due at `now` (release time <= now); max() releases all.
  template <typename Send>
  void release(std::uint64_t now, Send&& send) {
    std::size_t kept = 0;
    for (const Entry& e : held_) {
      if (e.release_at <= now) {
        send(e.queue, e.item);
      } else {
        held_[kept++] = e;
      }
    }
    held_.resize(kept);
  }

 private:
  struct Entry {
    unsigned queue;
    std::uint64_t release_at;
    Item item;
  };
  std::vector<Entry> held_;
  std::uint64_t held_total_ = 0;
};

/// ConfigError when neutrons `spacing_ns` apart (neutron_spacing_ns()) are closer than
/// `min_spacing_ns`, the least the detector needs between neutrons: "--neutrons-per-pulse: 'N'
/// spaces neutrons S ns apart; expected at most M" + `why`, M the neutrons kNeutronWindowNs holds
/// at that minimum and `why` where the minimum comes from (" (--min-spacing-ns 2000)", or "").
void check_neutron_spacing(std::uint64_t neutrons_per_pulse, std::uint64_t spacing_ns,
                           std::uint64_t min_spacing_ns, const std::string& why);

class EssStream {
 public:
  /// Connects, then parses --fault-kinds against the kinds `faults` (ConfigError on a bad --host,
  /// --gso or --fault-kinds, in that order). `type` is the detector's ESS type byte, `wrong_type`
  /// what a kType fault writes instead.
  EssStream(const GeneratorOptions& o, const std::string& program, std::uint8_t type,
            std::span<const Fault> faults, std::uint8_t wrong_type = 0);
  EssStream(const EssStream&) = delete;
  EssStream& operator=(const EssStream&) = delete;

  ess::PacketAssembler& packets() noexcept { return packets_; }
  FaultInjector& faults() noexcept { return faults_; }
  const FaultInjector& faults() const noexcept { return faults_; }

  /// Calls on_pulse(index, pulse_ns, prev_pulse_ns) for each pulse, from --start-time-ns (0: now)
  /// every kPulsePeriodNs, until --pulses pulses, or at the first pulse end after --count packets
  /// or --duration seconds; then sends what is queued. With --replay-pulses N, on_pulse runs for
  /// the first N pulses only, and every later pulse k resends the datagrams pulse k mod N sent,
  /// byte for byte (their headers' pulse times and sequence numbers included). Pulse times sit on
  /// ESS ticks, so what efu decodes is exactly what the ground truth says. The first pulse's
  /// previous pulse time is one period earlier, not on a tick. Throws on a fatal send error.
  template <typename OnPulse>
  void run_pulses(OnPulse&& on_pulse) {
    const auto start = std::chrono::steady_clock::now();
    pacer_.restart();
    std::uint64_t start_ns = start_time_ns_;
    if (start_ns == 0) {
      start_ns = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                std::chrono::system_clock::now().time_since_epoch())
                                                .count());
    }
    std::uint64_t prev_pulse = start_ns - kPulsePeriodNs;
    for (std::uint64_t pulse = 0;; ++pulse) {
      if (pulses_ != 0 && pulse >= pulses_) break;
      if (count_ != 0 && sent_packets_ >= count_) break;
      if (duration_s_ > 0 &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >=
              duration_s_) {
        break;
      }
      if (replay_pulses_ != 0 && pulse >= replay_pulses_) {
        replay(pulse % replay_pulses_);
        continue;
      }
      const ess::EssTime pulse_ess = ess::to_ess(start_ns + pulse * kPulsePeriodNs);
      const std::uint64_t pulse_ns = ess::to_ns(pulse_ess.high, pulse_ess.low);
      recording_ = replay_pulses_ != 0;
      on_pulse(pulse, pulse_ns, prev_pulse);
      if (recording_) recorded_pulse_end_.push_back(recorded_sizes_.size());
      recording_ = false;
      prev_pulse = pulse_ns;
    }
    if (!sender_.flush()) throw std::runtime_error(sender_.error());
  }

  /// run_pulses() for a generator with late neutrons (those of the previous pulse that arrive
  /// after this pulse's time): on_late(pulse_ns, prev_ns) before every pulse but the first (its
  /// previous pulse is not on a tick, so no late neutron may refer to it), then
  /// on_pulse(pulse_ns, prev_ns).
  template <typename OnLate, typename OnPulse>
  void run_pulses_with_late(OnLate&& on_late, OnPulse&& on_pulse) {
    run_pulses([&](std::uint64_t pulse, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
      if (pulse > 0) on_late(pulse_ns, prev_ns);
      on_pulse(pulse_ns, prev_ns);
    });
  }

  /// Sends `packet` (queue's finished packet, or the detector's reordering of it) as data, then,
  /// with --fault-fraction, a fault after it: a header fault made here, or for kCorrupt the packet
  /// write_corrupt(queue) fills with broken readouts (it counts each with faults().count()).
  template <typename WriteCorrupt>
  void send_data(unsigned queue, std::span<const std::uint8_t> packet, std::uint64_t pulse_ns,
                 std::uint64_t prev_ns, Random& rng, WriteCorrupt&& write_corrupt) {
    send(packet);
    ++data_packets_;
    if (recording_) recorded_data_.back() = 1;
    const auto kind = faults_.draw(rng);
    if (!kind) return;
    if (*kind != Fault::kCorrupt) {
      send(faults_.damage(*kind, packet, rng));
      return;
    }
    write_corrupt(queue);
    send(packets_.finish(queue, ess::to_ess(pulse_ns), ess::to_ess(prev_ns)));
    faults_.count(fault_name(Fault::kCorrupt));
  }

  /// Sends one datagram (counted in sent_packets()); throws on a fatal send error.
  void send(std::span<const std::uint8_t> bytes);

  /// The summary keys the stream knows, which open and close every generator's summary:
  /// "packets", "data_packets" (add_sent) and "send_errors", "faults" (add_errors).
  SummaryJson& add_sent(SummaryJson& json) const;
  SummaryJson& add_errors(SummaryJson& json) const;
  /// The line on stdout at the end: "sent P packets (D data), R readouts, N neutrons, M <noise>,
  /// E send errors".
  void print_summary(std::uint64_t readouts, std::uint64_t neutrons, std::uint64_t noise,
                     const char* noise_name) const;

  std::uint64_t sent_packets() const noexcept { return sent_packets_; }
  std::uint64_t data_packets() const noexcept { return data_packets_; }
  std::uint64_t send_errors() const noexcept { return sender_.send_errors(); }
  /// sendmmsg() calls so far: one per packet with --batch 1, one per --batch packets otherwise
  /// (and one for what is left at the end).
  std::uint64_t send_calls() const noexcept { return sender_.send_calls(); }

 private:
  std::uint64_t pulses_;
  std::uint64_t count_;
  double duration_s_;
  std::uint64_t start_time_ns_;
  Pacer pacer_;
  PacketSender sender_;  // after pacer_: it holds a reference to it
  ess::PacketAssembler packets_;
  FaultInjector faults_;  // after sender_: a bad --host is reported first
  std::uint64_t sent_packets_ = 0;
  std::uint64_t data_packets_ = 0;
  // --replay-pulses: every datagram the first N pulses sent, back to back; per datagram its
  // offset, size and whether it was data (not a fault); per pulse the end of its datagrams.
  void replay(std::uint64_t pulse);
  std::uint64_t replay_pulses_;
  bool recording_ = false;
  std::vector<std::uint8_t> recorded_;
  std::vector<std::size_t> recorded_offsets_;
  std::vector<std::uint32_t> recorded_sizes_;
  std::vector<std::uint8_t> recorded_data_;
  std::vector<std::size_t> recorded_pulse_end_;
};

}  // namespace efu::gen
