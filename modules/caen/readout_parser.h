// CAEN readout blocks of one ESS packet → (pulse, TOF, pixel) events. Every rejected readout is
// counted under readouts.errors.<reason> and skipped; the blocks around it are still used.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>

#include "caen_readout.h"
#include "efu/counter_group.h"
#include "efu/counters.h"
#include "efu/ess/ess_time.h"
#include "efu/ess/readout_blocks.h"
#include "efu/ess/readout_header.h"
#include "pixel_map.h"
#include "readout_lanes.h"

namespace efu::caen {

/// Why a well-framed readout was rejected: readouts.errors.<name>. (A wrong data_length or a
/// short tail is counted by the block walker as readouts.errors.length / .truncated.) The
/// entries from kRing on are PixelMap's MapStatus, in the same order.
enum class ReadoutError : std::uint8_t {
  kFiber,
  kFen,
  kTimeFraction,
  kTofNegative,
  kTofTooLarge,
  kRing,
  kGroup,
  kAmplitudeZero,
  kAmplitudeLow,
  kAmplitudeHigh,
  kPosition,
  kCalibrationGroup,
  kOutsideInterval,
  kPixel,
  kCount
};
inline constexpr std::array<const char*, static_cast<std::size_t>(ReadoutError::kCount)>
    kReadoutErrorNames{"fiber",
                       "fen",
                       "time_fraction",
                       "tof_negative",
                       "tof_too_large",
                       "ring",
                       "group",
                       "amplitude_zero",
                       "amplitude_low",
                       "amplitude_high",
                       "position",
                       "calibration_group",
                       "outside_interval",
                       "pixel"};

inline constexpr ReadoutError to_error(MapStatus s) noexcept {
  switch (s) {
    case MapStatus::kRing:
      return ReadoutError::kRing;
    case MapStatus::kFen:
      return ReadoutError::kFen;
    case MapStatus::kGroup:
      return ReadoutError::kGroup;
    case MapStatus::kAmplitudeZero:
      return ReadoutError::kAmplitudeZero;
    case MapStatus::kAmplitudeLow:
      return ReadoutError::kAmplitudeLow;
    case MapStatus::kAmplitudeHigh:
      return ReadoutError::kAmplitudeHigh;
    case MapStatus::kPosition:
      return ReadoutError::kPosition;
    case MapStatus::kCalibrationGroup:
      return ReadoutError::kCalibrationGroup;
    case MapStatus::kOutsideInterval:
      return ReadoutError::kOutsideInterval;
    case MapStatus::kOk:
    case MapStatus::kPixel:
      break;
  }
  return ReadoutError::kPixel;
}

struct ReadoutSettings {
  std::uint64_t max_tof_ns = 0;
  std::int64_t readout_delay_ns = 0;  // added to each readout's time before the TOF
  /// Eight readouts at a time with AVX2 where the CPU has it and the instrument has lanes
  /// (readout_lanes.h); false: the scalar walk alone (tests compare the two).
  bool lanes = true;
};

/// A sink that takes each event's source: on_event(pulse_ns, tof_ns, pixel, source).
template <typename OnEvent>
inline constexpr bool kTakesSource =
    std::is_invocable_v<OnEvent&, std::uint64_t, std::uint32_t, std::uint32_t, std::uint32_t>;

/// A one-source sink that also takes eight events of one pulse at once, in readout order:
/// on_event(pulse_ns, tof_ns[8], pixel[8]) (EventBuffer::add of a run).
template <typename OnEvent>
inline constexpr bool kTakesRuns =
    std::is_invocable_v<OnEvent&, std::uint64_t, const std::uint32_t (&)[lanes::kLanes],
                        const std::uint32_t (&)[lanes::kLanes]>;

class ReadoutParser {
 public:
  ReadoutParser(CounterRegistry& counters, const PixelMap& pixels, const ReadoutSettings& settings)
      : pixels_(pixels),
        settings_(settings),
        blocks_(counters, kReadoutSize),
        events_(counters.counter("events.formed")),
        clamp_low_(counters.counter("calibration.clamp_low")),
        clamp_high_(counters.counter("calibration.clamp_high")),
        errors_(counters, "readouts.errors.", kReadoutErrorNames) {
    if (!settings.lanes || !lanes::available()) return;
    switch (pixels.instrument()) {
      case Instrument::kLoki:
        lanes_ = lanes::LokiLanes::supports(pixels);
        if (lanes_) loki_lanes_ = lanes::LokiLanes::of(pixels);
        break;
      case Instrument::kMiracles:
        lanes_ = lanes::MiraclesLanes::supports(pixels.miracles());
        if (lanes_) miracles_lanes_ = lanes::MiraclesLanes::of(pixels.miracles());
        break;
      case Instrument::kBifrost:
        lanes_ = lanes::BifrostLanes::supports(pixels.bifrost());
        if (lanes_) bifrost_lanes_ = lanes::BifrostLanes::of(pixels.bifrost());
        break;
      case Instrument::kCspec:
        lanes_ = lanes::CspecLanes::supports(pixels.cspec());
        if (lanes_) cspec_lanes_ = lanes::CspecLanes::of(pixels.cspec());
        break;
    }
  }

  /// Whether parse() takes this instrument's readouts eight at a time (ReadoutSettings::lanes).
  bool uses_lanes() const noexcept { return lanes_; }

  /// Parses the bytes after the header; per good readout `on_event(pulse_ns, tof_ns, pixel,
  /// source)` with the event's source index (MapResult::source), or `on_event(pulse_ns, tof_ns,
  /// pixel)` for a caller that has one sink (tools and benchmarks). A one-source sink that also
  /// takes runs (kTakesRuns) gets some of its events eight at a time, in the same order.
  ///
  /// The instrument is chosen once per packet, so that each walk calls its own formula inlined
  /// (PixelMap::bifrost() ..., values the walk keeps in registers) instead of a switch and a
  /// call per readout; LoKI's in batches (parse_loki). Where uses_lanes(), eight readouts at a
  /// time instead (parse_lanes, readout_lanes.h).
  template <typename OnEvent>
  void parse(const std::uint8_t* data, std::uint32_t size, const ess::PacketHeader& header,
             OnEvent&& on_event) noexcept {
    switch (pixels_.instrument()) {
      case Instrument::kLoki:
        if (!lanes_) return parse_loki(data, size, header, on_event);
        return parse_lanes<lanes::loki>(
            data, size, header, on_event, loki_lanes_,
            [this](const CaenReadout& r) { return pixels_.map_loki(r); });
      case Instrument::kBifrost:
        return parse_map<lanes::bifrost>(data, size, header, on_event, bifrost_lanes_,
                                         pixels_.bifrost());
      case Instrument::kCspec:
        return parse_map<lanes::cspec>(data, size, header, on_event, cspec_lanes_, pixels_.cspec());
      case Instrument::kMiracles:
        return parse_map<lanes::miracles>(data, size, header, on_event, miracles_lanes_,
                                          pixels_.miracles());
    }
  }

 private:
  using Errors = CounterGroup<ReadoutError, kReadoutErrorNames.size()>;

  /// The checks before any instrument's formula: fibre, FEN, time fraction and time of flight,
  /// a rejection counted under its name. False: rejected; else `tof` is the readout's.
  bool timed(const CaenReadout& r, const ess::PacketHeader& header, ess::Tof& tof) noexcept {
    if (r.fiber > kMaxFiber) return errors_[ReadoutError::kFiber].add(), false;
    if (r.fen > kMaxFen) return errors_[ReadoutError::kFen].add(), false;
    if (r.time_low > ess::kMaxTimeLow) return errors_[ReadoutError::kTimeFraction].add(), false;
    const std::uint64_t time_ns = ess::to_ns(r.time_high, r.time_low) +
                                  static_cast<std::uint64_t>(settings_.readout_delay_ns);
    tof = ess::time_of_flight(time_ns, header.pulse_time_ns, header.prev_pulse_time_ns,
                              settings_.max_tof_ns);
    if (tof.status == ess::TofStatus::kOk) return true;
    errors_[tof.status == ess::TofStatus::kNegative ? ReadoutError::kTofNegative
                                                    : ReadoutError::kTofTooLarge]
        .add();
    return false;
  }

  /// A packet's events and clamps, counted in locals and added to the counters once per packet
  /// (add_to): a counter is an atomic in memory, and a load-add-store per readout was a chain
  /// through it.
  struct PacketTally {
    std::uint64_t formed = 0;
    // The clamps as two 32-bit counts in one word, low in the lower half: a readout adds
    // kClampStep[clamp] (one load and one add, where two compares and two adds were). A packet
    // holds fewer than 2^32 readouts, so neither half carries into the other.
    std::uint64_t clamped = 0;
    static constexpr std::uint64_t kClampStep[3] = {0, 1, std::uint64_t{1} << 32};

    /// The mapped readout: its rejection counted, or its event handed to `on_event`, with its
    /// source when on_event takes one.
    template <typename OnEvent>
    void emit(OnEvent& on_event, std::uint64_t pulse_ns, std::uint32_t tof_ns, const MapResult& m,
              Errors& errors) noexcept {
      if (m.status != MapStatus::kOk) return errors[to_error(m.status)].add();
      clamped += kClampStep[static_cast<std::uint8_t>(m.clamp)];
      event(on_event, pulse_ns, tof_ns, m.pixel, m.source);
    }
    /// An event formed (unclamped, or its clamp counted by the caller).
    template <typename OnEvent>
    void event(OnEvent& on_event, std::uint64_t pulse_ns, std::uint32_t tof_ns, std::uint32_t pixel,
               std::uint32_t source) noexcept {
      ++formed;
      deliver(on_event, pulse_ns, tof_ns, pixel, source);
    }
    /// An event handed on, not counted.
    template <typename OnEvent>
    static void deliver(OnEvent& on_event, std::uint64_t pulse_ns, std::uint32_t tof_ns,
                        std::uint32_t pixel, std::uint32_t source) noexcept {
      if constexpr (kTakesSource<OnEvent>) {
        on_event(pulse_ns, tof_ns, pixel, source);
      } else {
        on_event(pulse_ns, tof_ns, pixel);
      }
    }
    void add_to(Counter& events, Counter& low, Counter& high) const noexcept {
      if (formed != 0) events.add(formed);
      if (const std::uint64_t n = clamped & 0xFFFF'FFFFU; n != 0) low.add(n);
      if (const std::uint64_t n = clamped >> 32; n != 0) high.add(n);
    }
  };

  /// parse() with the instrument's formula `map`, counting per packet (PacketTally).
  /// gnu::flatten: the walk, the block's lambda and the formula all inlined into one loop (GCC's
  /// heuristics otherwise left the lambda, the calibration look-up and the polynomial as calls,
  /// each readout passed through memory).
  template <typename OnEvent, typename Map>
  [[gnu::flatten]] void parse_with(const std::uint8_t* data, std::uint32_t size,
                                   const ess::PacketHeader& header, OnEvent& on_event,
                                   Map map) noexcept {
    PacketTally tally;
    blocks_.walk(data, size, [&](const ess::ReadoutBlock& block) {
      const CaenReadout r = read_readout(block.data);
      ess::Tof tof;
      if (!timed(r, header, tof)) return;
      tally.emit(on_event, tof.pulse_ns, static_cast<std::uint32_t>(tof.tof_ns), map(r), errors_);
    });
    tally.add_to(events_, clamp_low_, clamp_high_);
  }

  /// An instrument whose scalar walk is parse_with(map): its lanes `kLanes` with `lanes` where
  /// uses_lanes(), else the walk.
  template <auto kLanes, typename Lanes, typename OnEvent, typename Map>
  void parse_map(const std::uint8_t* data, std::uint32_t size, const ess::PacketHeader& header,
                 OnEvent& on_event, const Lanes& lanes, Map map) noexcept {
    if (lanes_) return parse_lanes<kLanes>(data, size, header, on_event, lanes, map);
    parse_with(data, size, header, on_event, map);
  }

  /// parse_with() eight readouts at a time (readout_lanes.h): the whole eights through
  /// `kLanes(first, runs, rule, lanes, out)`, the instrument's lanes, up to kRunsPerCall eights
  /// a call, and the blocks after the last eight through `map`, its scalar formula. The lanes
  /// make the same checks in the same order, so the same events and counts
  /// (fast_path_test.cpp).
  template <auto kLanes, typename Lanes, typename OnEvent, typename Map>
  [[gnu::flatten]] void parse_lanes(const std::uint8_t* data, std::uint32_t size,
                                    const ess::PacketHeader& header, OnEvent& on_event,
                                    const Lanes& lanes, Map map) noexcept {
    PacketTally tally;
    const lanes::TimeRule rule{header.pulse_time_ns, header.prev_pulse_time_ns,
                               settings_.max_tof_ns, settings_.readout_delay_ns};
    blocks_.walk_lanes(
        data, size, lanes::kLanes,
        [&](const std::uint8_t* first, std::uint32_t runs) {
          std::uint32_t bad_length = 0;
          lanes::Out out[kRunsPerCall];
          for (std::uint32_t done = 0; done < runs; done += kRunsPerCall) {
            const std::uint32_t n = std::min(runs - done, kRunsPerCall);
            kLanes(first + std::size_t{done} * lanes::kLanes * kReadoutSize, n, rule, lanes, out);
            for (std::uint32_t r = 0; r < n; ++r) {
              bad_length += emit_lanes<Lanes>(out[r], tally, on_event);
            }
          }
          return bad_length;
        },
        [&](const ess::ReadoutBlock& block) {
          const CaenReadout r = read_readout(block.data);
          ess::Tof tof;
          if (!timed(r, header, tof)) return;
          tally.emit(on_event, tof.pulse_ns, static_cast<std::uint32_t>(tof.tof_ns), map(r),
                     errors_);
        });
    tally.add_to(events_, clamp_low_, clamp_high_);
  }

  /// Eight lanes' outcomes counted and their events handed on, in readout order; returns how
  /// many lanes had a wrong data_length (the block walker counts those). Clamps and sources are
  /// read from `out` only for lanes that write them (Lanes::kClamps, kSources). For a one-source
  /// instrument, eight events (the common case: LoKI's, CSPEC's and MIRACLES' streams are
  /// 99–100 % events) skip the test of each status, and when they are all of the packet's pulse
  /// go to a sink that takes runs (kTakesRuns) in one call. BIFROST keeps the loop alone: its
  /// events go to a sink per source one by one anyway, and with its bench stream's 15 %
  /// rejections only a quarter of its eights are all events, so the test of the eight would
  /// mostly fail, unpredictably (it cost BIFROST 8–11 %). (A loop over the good lanes' bits instead
  /// of all eight cost more: this one GCC unrolls.)
  template <typename Lanes, typename OnEvent>
  std::uint32_t emit_lanes(const lanes::Out& out, PacketTally& tally, OnEvent& on_event) noexcept {
    if constexpr (!Lanes::kSources) {
      if (out.good == lanes::kAllLanes) [[likely]] {
        tally.formed += lanes::kLanes;
        if constexpr (Lanes::kClamps) {
          for (std::uint32_t i = 0; i < lanes::kLanes; ++i) {
            tally.clamped += PacketTally::kClampStep[out.clamp[i]];
          }
        }
        if constexpr (kTakesRuns<OnEvent>) {
          if (out.earlier == 0) return on_event(out.pulse_ns[0], out.tof_ns, out.pixel), 0;
        }
        for (std::uint32_t i = 0; i < lanes::kLanes; ++i) {
          PacketTally::deliver(on_event, out.pulse_ns[i], out.tof_ns[i], out.pixel[i], 0U);
        }
        return 0;
      }
    }
    std::uint32_t bad_length = 0;
    for (std::uint32_t i = 0; i < lanes::kLanes; ++i) {
      const std::uint32_t status = out.status[i];
      if (status == lanes::kOk) [[likely]] {
        if constexpr (Lanes::kClamps) tally.clamped += PacketTally::kClampStep[out.clamp[i]];
        tally.event(on_event, out.pulse_ns[i], out.tof_ns[i], out.pixel[i],
                    Lanes::kSources ? out.source[i] : 0U);
      } else if (status == lanes::kBadLength) {
        ++bad_length;
      } else {
        errors_[static_cast<ReadoutError>(status - lanes::kFirstError)].add();
      }
    }
    return bad_length;
  }

  /// LoKI's parse_with(), with the formula in three parts (PixelMap::loki_prepare, loki_unit,
  /// LokiFinish): each readout is checked and prepared as it is walked, then every kLokiBatch
  /// readouts (and at the end of the packet) the batch's divisions are done in one loop
  /// (vectorised), its straws in a second and the correction and pixel in a third, in readout
  /// order. One readout's chain (two divisions, the straw, a cubic, a rounding) is long and
  /// serial; a batch's chains are independent. The same checks in the same order as map_loki(),
  /// so the same events and counts (fast_path_test.cpp).
  template <typename OnEvent>
  [[gnu::flatten]] void parse_loki(const std::uint8_t* data, std::uint32_t size,
                                   const ess::PacketHeader& header, OnEvent& on_event) noexcept {
    PacketTally tally;
    std::uint32_t n = 0;
    LokiBatch& b = loki_batch_;
    const PixelMap::LokiFinish finish = pixels_.loki_finish();
    const Calibration::Lookup units = pixels_.unit_lookup();
    auto finish_batch = [&] {
      for (std::uint32_t i = 0; i < n; ++i) {
        const auto sum = static_cast<double>(b.sum[i]);
        b.pos[i] = static_cast<double>(b.position[i]) / sum;
        b.straw_ratio[i] = static_cast<double>(b.straw[i]) / sum;
      }
      for (std::uint32_t i = 0; i < n; ++i) b.unit[i] = units.unit_of(b.group[i], b.straw_ratio[i]);
      for (std::uint32_t i = 0; i < n; ++i) {
        tally.emit(on_event, b.pulse_ns[i], b.tof_ns[i],
                   finish(b.group[i], b.row[i], b.unit[i], b.pos[i]), errors_);
      }
      n = 0;
    };
    blocks_.walk(data, size, [&](const ess::ReadoutBlock& block) {
      const CaenReadout r = read_readout(block.data);
      ess::Tof tof;
      if (!timed(r, header, tof)) return;
      PixelMap::LokiPartial p;
      if (const MapStatus s = pixels_.loki_prepare(r, p); s != MapStatus::kOk) {
        return errors_[to_error(s)].add();
      }
      b.pulse_ns[n] = tof.pulse_ns;
      b.tof_ns[n] = static_cast<std::uint32_t>(tof.tof_ns);
      b.position[n] = p.position;
      b.straw[n] = p.straw;
      b.sum[n] = p.sum;
      b.group[n] = p.group;
      b.row[n] = p.row;
      if (++n == kLokiBatch) finish_batch();
    });
    finish_batch();
    tally.add_to(events_, clamp_low_, clamp_high_);
  }

  // The runs of eight readouts one call of the lanes takes at most (a packet of 8972 bytes
  // holds 46), their outcomes on the stack: 16 × 224 bytes.
  static constexpr std::uint32_t kRunsPerCall = 16;

  // LoKI's readouts between loki_prepare() and loki_finish(), as arrays (parse_loki).
  static constexpr std::uint32_t kLokiBatch = 64;
  struct LokiBatch {
    std::uint64_t pulse_ns[kLokiBatch];
    std::uint32_t tof_ns[kLokiBatch];
    std::int32_t position[kLokiBatch];
    std::int32_t straw[kLokiBatch];
    std::int32_t sum[kLokiBatch];
    std::uint32_t group[kLokiBatch];
    std::uint32_t row[kLokiBatch];
    double pos[kLokiBatch];
    double straw_ratio[kLokiBatch];
    int unit[kLokiBatch];
  };

  const PixelMap& pixels_;
  ReadoutSettings settings_;
  ess::ReadoutBlockWalker blocks_;
  Counter& events_;
  Counter& clamp_low_;
  Counter& clamp_high_;
  Errors errors_;
  LokiBatch loki_batch_;
  bool lanes_ = false;  // uses_lanes(): the lanes of the instrument below
  lanes::LokiLanes loki_lanes_{};
  lanes::BifrostLanes bifrost_lanes_{};
  lanes::MiraclesLanes miracles_lanes_{};
  lanes::CspecLanes cspec_lanes_{};
};

}  // namespace efu::caen
