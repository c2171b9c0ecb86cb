// A time-of-flight histogram aggregated over pulses and published as one da00 data array per
// window of `aggregated_frames` pulses (HistogramSink, efu/plugin.h): what a beam monitor
// publishes instead of events. The arithmetic, the variables and their units are those of the
// reference system's DA00HistogramSerializer<int32 signal, int32 axis, uint64 total> as its CBM
// module uses it (bin offset 0, readouts beyond the last bin dropped), so consumers see the same
// messages.
//
//   TofHistogram h({.period_ns = 71'428'571, .bin_count = 1000, .aggregated_frames = 1,
//                   .aggregation = Aggregation::sum, .signal_unit = "A"});
//   h.set_pulse(pulse_ns, sink);          // per readout, or per packet: publishes on a change
//   switch (h.add(tof_ns, adc)) { ... }   // count before_offset and beyond_period
//   h.flush(sink);                        // in the pipeline's flush(), at stop
//
// The message (names, types and shapes as the reference writes them):
//   frame_time      int32  [bin_count + 1]      ns      the bin edges, axes {frame_time}
//   signal          int32  [bin_count]          unit    per bin the sum or average of its values
//   reference_time  int32  [aggregated_frames]  ns      each frame's pulse, as an offset (below)
//   frame_total     uint64 [aggregated_frames]  counts  the sum of the values binned per frame
// and its timestamp is the reference (pulse) time current when it is published: the last
// pulse of the window.
//
// Binning. width = period_ns / bin_count (integer division), edges[i] = i·width, and a value at
// time of flight t goes to bin (t − edges[0]) / step with step = (edges[last] − edges[0]) /
// bin_count (= width): t < 0 is before the offset, a bin ≥ bin_count is beyond the period. When
// width does not divide the period, t in [bin_count·width, period) is beyond the period too.
//
// Frames. The first set_pulse() only sets the reference time. Each later change of pulse time
// ends a frame; the frame that follows gets the offset
//   reference_time[next] = reference_time[current] + (new pulse − previous pulse)
// and after aggregated_frames frames the window is published and the next begins in slot 0
// with that carried offset: offsets accumulate over the whole run and never restart at 0, as in
// the reference. The sum is taken modulo 2^32 (so the int32 offsets wrap after 2^31 ns, about
// 30 ESS pulses): the reference adds in signed int32, whose overflow is undefined behaviour;
// modular addition is what its compiled code does.
//
// Where efu differs from the reference, which has a fault there:
// - period_ns < bin_count is a ConfigError: the bins would be 0 ns wide and the reference
//   divides by a step of 0 on every readout (a crash).
// - Readouts added before the first set_pulse() belong to the first window's slot 0: the
//   reference writes their frame total one past its array's end.
// - A bin's values are summed in 64 bits; `sum` saturates at the int32 range where the
//   reference's int32 sum overflows (undefined behaviour).
// - `average` is the signed 64-bit sum / count, rounded towards 0: the reference divides its
//   int32 sum by its uint32 count in unsigned arithmetic, which turns the average of negative
//   values into ~2^31 + garbage. For values ≥ 0 whose sum fits in int32 (beam-monitor ADC
//   values) both give the same numbers.
// - flush() (the reference has no flush at stop) publishes the frames of the current window
//   that have begun; the slots of frames that have not are 0 in the message (the reference's
//   produce() would show the previous window's values there).
//
// Every array is allocated in the constructor; add(), set_pulse() and flush() do not allocate.
// One instance per processing thread: no call is thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "efu/errors.h"
#include "efu/plugin.h"

namespace efu::da00 {

enum class Aggregation { sum, average };

struct TofHistogramSpec {
  std::int32_t period_ns;           // the frame's length; bins cover 0 .. period_ns
  std::int32_t bin_count;           // 1 .. period_ns
  std::uint32_t aggregated_frames;  // pulses per message, at least 1
  Aggregation aggregation;          // per bin: the sum or the average of its values
  const char* signal_unit;          // unit of `signal` (CBM: "A"); null: no unit
};

class TofHistogram {
 public:
  /// Throws ConfigError for bin_count < 1, period_ns < 1, aggregated_frames < 1 or
  /// period_ns < bin_count.
  explicit TofHistogram(const TofHistogramSpec& spec);

  /// The pulse (reference) time of the readouts that follow (see the frames above). Returns
  /// true when it published a window to `sink`; a window whose bins are all empty is not
  /// published but counted in skipped_empty().
  bool set_pulse(std::uint64_t pulse_time_ns, HistogramSink& sink);

  enum class Add : std::uint8_t { added, before_offset, beyond_period };

  /// Adds `value` to the bin of `tof_ns` (its sum and its count) and to the current frame's
  /// total. Readouts outside the bins are not added: the result says why.
  Add add(std::int64_t tof_ns, std::int32_t value) noexcept {
    if (tof_ns < 0) return Add::before_offset;  // t − edges[0] < 0 with edges[0] = 0
    const std::int64_t bin = tof_ns / step_;
    if (bin >= bin_count_) return Add::beyond_period;
    bin_sum_[static_cast<std::size_t>(bin)] += value;
    ++bin_count_of_[static_cast<std::size_t>(bin)];
    // As the reference: the int32 converted to uint64 (so −1 adds 2^64 − 1, i.e. the total is
    // the signed sum modulo 2^64).
    frame_total_[slot_] += static_cast<std::uint64_t>(value);
    return Add::added;
  }

  /// At stop: publishes the pending window unless its bins are all empty (that is not counted
  /// as skipped). Empties the bins. True if it published. Before any set_pulse() there is no
  /// timestamp, so nothing is published and a non-empty window counts in
  /// unpublished_no_pulse().
  bool flush(HistogramSink& sink);

  std::uint64_t published() const noexcept { return published_; }
  /// Windows that ended (a pulse change) with every bin empty.
  std::uint64_t skipped_empty() const noexcept { return skipped_empty_; }
  /// Non-empty windows flushed before any pulse time was known: their readouts are lost.
  std::uint64_t unpublished_no_pulse() const noexcept { return unpublished_no_pulse_; }

  /// The data array as it would be published now (signal computed from the bins so far; the
  /// bins are kept), for tests and diagnostics. Valid until the next call on this object.
  DataArrayView view() noexcept;

  std::int32_t bin_width_ns() const noexcept { return step_; }
  std::span<const std::int32_t> edges() const noexcept { return edges_; }

 private:
  bool publish_window(HistogramSink& sink);
  bool fill_signal() noexcept;
  void clear_bins() noexcept;
  DataArrayView make_view() noexcept;

  std::int32_t bin_count_;
  std::int32_t step_;
  std::uint32_t aggregated_frames_;
  Aggregation aggregation_;
  bool has_unit_;
  std::string unit_;
  std::vector<std::int32_t> edges_;             // bin_count + 1
  std::vector<std::int64_t> bin_sum_;           // bin_count
  std::vector<std::uint64_t> bin_count_of_;     // bin_count: values added per bin
  std::vector<std::int32_t> signal_;            // bin_count: what is published
  std::vector<std::int32_t> reference_offset_;  // aggregated_frames
  std::vector<std::uint64_t> frame_total_;      // aggregated_frames
  std::int64_t shapes_[3];                      // bin_count + 1, bin_count, aggregated_frames
  Da00Variable variables_[4];
  std::size_t slot_ = 0;      // the current frame's index in the window
  std::uint32_t frames_ = 0;  // frames of the window ended so far
  bool has_reference_ = false;
  std::uint64_t reference_ns_ = 0;
  std::uint64_t published_ = 0;
  std::uint64_t skipped_empty_ = 0;
  std::uint64_t unpublished_no_pulse_ = 0;
};

}  // namespace efu::da00
