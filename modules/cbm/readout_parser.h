// The CBM readout checks (docs/cbm.md "Readouts"): every well-framed 20-byte block is checked
// against the readout format and the Topology, and either reaches the caller with its monitor
// slot and time of flight or is counted once under readouts.errors.<reason>:
//
//   fiber          FiberId above 23 (the reference parser's limit)
//   time_fraction  TimeLow beyond the 88.0525 MHz clock
//   type           Type not 1..3 (for BEER: not 2, EVENT_2D)
//   ring           FiberId / 2 above MaxRing
//   monitor_ring   ring other than MonitorRing
//   fen            FENId above MaxFENId
//   channel        (FENId, Channel) is no Topology entry
//   type_mismatch  Type differs from the entry's Type
//   xpos, ypos     EVENT_2D position outside Width × Height
//   tof_negative   earlier than the packet's previous pulse
//   tof_too_large  TOF above MaxTOFNS (at most 2^31 − 1 ns)
//
// in that order (the reference's: parser, then geometry, then time), so a readout with several
// faults is counted under the first. The walker counts framing (readouts.errors.length,
// readouts.errors.truncated) and readouts.received. Hot path: an index into a table built at
// load time per (FEN, Channel); no allocation, no lock, no log line.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "cbm_readout.h"
#include "config.h"
#include "efu/counter_group.h"
#include "efu/counters.h"
#include "efu/ess/ess_time.h"
#include "efu/ess/readout_blocks.h"
#include "efu/ess/readout_header.h"

namespace efu::cbm {

enum class ReadoutError : std::uint8_t {
  kFiber,
  kTimeFraction,
  kType,
  kRing,
  kMonitorRing,
  kFen,
  kChannel,
  kTypeMismatch,
  kXPos,
  kYPos,
  kTofNegative,
  kTofTooLarge,
  kTofBeforeOffset,  // da00: before the histogram's first bin (counted by the pipeline)
  kTofBeyondPeriod,  // da00: beyond MaxTofBin (counted by the pipeline)
  kCount
};
inline constexpr std::array<const char*, static_cast<std::size_t>(ReadoutError::kCount)>
    kReadoutErrorNames{"fiber",
                       "time_fraction",
                       "type",
                       "ring",
                       "monitor_ring",
                       "fen",
                       "channel",
                       "type_mismatch",
                       "xpos",
                       "ypos",
                       "tof_negative",
                       "tof_too_large",
                       "tof_before_offset",
                       "tof_beyond_period"};
using ReadoutErrors = CounterGroup<ReadoutError, kReadoutErrorNames.size()>;

/// What the checks need of one Topology entry, packed for the hot path.
struct SlotInfo {
  MonitorType type;
  std::uint16_t width;   // EVENT_2D
  std::uint16_t height;  // EVENT_2D
};

/// (FEN, Channel) → index of its Topology entry, built once from the config (-1: none).
class SlotTable {
 public:
  explicit SlotTable(const CbmConfig& config) : table_(std::size_t{kMaxFen + 1} * 256, -1) {
    for (std::size_t i = 0; i < config.monitors.size(); ++i) {
      const Monitor& m = config.monitors[i];
      table_[index(m.fen, m.channel)] = static_cast<std::int16_t>(i);
      info_.push_back(SlotInfo{m.type, m.width, m.height});
    }
  }
  /// `fen` must be <= kMaxFen.
  int slot(std::uint8_t fen, std::uint8_t channel) const noexcept {
    return table_[index(fen, channel)];
  }
  const SlotInfo& info(int slot) const noexcept { return info_[static_cast<std::size_t>(slot)]; }
  std::size_t size() const noexcept { return info_.size(); }

 private:
  static std::size_t index(std::uint8_t fen, std::uint8_t channel) noexcept {
    return std::size_t{fen} * 256 + channel;
  }
  std::vector<std::int16_t> table_;
  std::vector<SlotInfo> info_;
};

/// One readout that passed every check: its monitor (index into CbmConfig::monitors), the
/// readout and its time of flight (`tof.pulse_ns` is the pulse it is measured from).
struct CheckedReadout {
  int slot;
  CbmReadout readout;
  ess::Tof tof;
};

class ReadoutParser {
 public:
  ReadoutParser(CounterRegistry& counters, const CbmConfig& config, const SlotTable& slots)
      : slots_(slots),
        walker_(counters, kReadoutSize),
        errors_(counters, "readouts.errors.", kReadoutErrorNames),
        max_tof_ns_(config.effective_max_tof_ns()),
        monitor_ring_(config.monitor_ring),
        max_ring_(config.max_ring),
        max_fen_(config.max_fen_id),
        beer_(config.instrument == Instrument::kBeer) {}

  /// Calls `on_readout(const CheckedReadout&)` for each readout of the packet that passes.
  template <typename OnReadout>
  void parse(const ess::PacketHeader& header, const std::uint8_t* data, std::uint32_t size,
             OnReadout&& on_readout) noexcept {
    // Inlined into the walker's loop (GCC otherwise calls it per readout).
    walker_.walk(
        data, size, [&](const ess::ReadoutBlock& block) __attribute__((always_inline)) {
          CheckedReadout c;
          c.readout = read_readout(block.data);
          const ReadoutError why = check(header, c);
          if (why != ReadoutError::kCount) [[unlikely]] {
            errors_[why].add();
            return;
          }
          on_readout(c);
        });
  }

  ReadoutErrors& errors() noexcept { return errors_; }

 private:
  /// The checks in order; kCount when the readout passes (then c.slot and c.tof are set).
  ReadoutError check(const ess::PacketHeader& header, CheckedReadout& c) const noexcept {
    const CbmReadout& r = c.readout;
    if (r.fiber > kMaxFiber) return ReadoutError::kFiber;
    if (r.time_low > ess::kMaxTimeLow) return ReadoutError::kTimeFraction;
    if (r.type < kMinType || r.type > kMaxType) return ReadoutError::kType;
    if (beer_ && r.type != static_cast<std::uint8_t>(MonitorType::kEvent2D)) {
      return ReadoutError::kType;
    }
    const std::uint8_t ring = r.fiber / 2;
    if (ring > max_ring_) return ReadoutError::kRing;
    if (ring != monitor_ring_) return ReadoutError::kMonitorRing;
    if (r.fen > max_fen_) return ReadoutError::kFen;
    c.slot = slots_.slot(r.fen, r.channel);
    if (c.slot < 0) return ReadoutError::kChannel;
    const SlotInfo& info = slots_.info(c.slot);
    if (r.type != static_cast<std::uint8_t>(info.type)) return ReadoutError::kTypeMismatch;
    if (info.type == MonitorType::kEvent2D) {
      if (r.x() >= info.width) return ReadoutError::kXPos;
      if (r.y() >= info.height) return ReadoutError::kYPos;
    }
    c.tof = ess::time_of_flight(ess::to_ns(r.time_high, r.time_low), header.pulse_time_ns,
                                header.prev_pulse_time_ns, max_tof_ns_);
    if (c.tof.status == ess::TofStatus::kNegative) return ReadoutError::kTofNegative;
    if (c.tof.status == ess::TofStatus::kTooLarge) return ReadoutError::kTofTooLarge;
    return ReadoutError::kCount;
  }

  const SlotTable& slots_;
  ess::ReadoutBlockWalker walker_;
  ReadoutErrors errors_;
  std::uint64_t max_tof_ns_;
  std::uint8_t monitor_ring_;
  std::uint8_t max_ring_;
  std::uint8_t max_fen_;
  bool beer_;
};

}  // namespace efu::cbm
