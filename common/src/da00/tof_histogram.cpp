#include "efu/da00/tof_histogram.h"

#include <algorithm>
#include <limits>

namespace efu::da00 {
namespace {

const char* const kFrameTimeAxes[] = {"frame_time"};
const char* const kReferenceTimeAxes[] = {"reference_time"};

void require_at_least(const char* name, std::int64_t value, std::int64_t least, const char* why) {
  if (value >= least) return;
  throw ConfigError(std::string("da00 histogram: ") + name + " '" + std::to_string(value) +
                    "' is too small; expected at least " + std::to_string(least) + why);
}

// The spec's numbers, checked before any array is sized from them.
const TofHistogramSpec& checked(const TofHistogramSpec& spec) {
  require_at_least("bin_count", spec.bin_count, 1, "");
  require_at_least("period_ns", spec.period_ns, 1, "");
  require_at_least("aggregated_frames", spec.aggregated_frames, 1, "");
  require_at_least("period_ns", spec.period_ns, spec.bin_count,
                   " (bin_count: bins at least 1 ns wide)");
  return spec;
}

template <typename T>
Da00Variable variable(const char* name, const char* unit, std::span<const char* const> axes,
                      const std::int64_t* shape, Da00Type type, const std::vector<T>& data) {
  return {name, unit, axes, {shape, 1}, type, data.data(), data.size() * sizeof(T)};
}

}  // namespace

// width = period / bin_count and edges[i] = i·width, both in int32 integer arithmetic as in the
// reference; its step, (edges[last] − edges[0]) / (edges − 1), is bin_count·width / bin_count,
// i.e. the width again.
TofHistogram::TofHistogram(const TofHistogramSpec& spec)
    : bin_count_(checked(spec).bin_count),
      step_(0),
      aggregated_frames_(spec.aggregated_frames),
      aggregation_(spec.aggregation),
      has_unit_(spec.signal_unit != nullptr),
      unit_(has_unit_ ? spec.signal_unit : ""),
      edges_(static_cast<std::size_t>(bin_count_) + 1),
      bin_sum_(static_cast<std::size_t>(bin_count_)),
      bin_count_of_(static_cast<std::size_t>(bin_count_)),
      signal_(static_cast<std::size_t>(bin_count_)),
      reference_offset_(aggregated_frames_),
      frame_total_(aggregated_frames_),
      shapes_{static_cast<std::int64_t>(bin_count_) + 1, bin_count_, aggregated_frames_},
      variables_{} {
  const std::int32_t width = spec.period_ns / bin_count_;
  for (std::int32_t i = 0; i <= bin_count_; ++i) edges_[static_cast<std::size_t>(i)] = i * width;
  step_ = (edges_.back() - edges_.front()) / bin_count_;
}

bool TofHistogram::set_pulse(std::uint64_t pulse_time_ns, HistogramSink& sink) {
  if (!has_reference_) {
    has_reference_ = true;
    reference_ns_ = pulse_time_ns;
    return false;
  }
  if (pulse_time_ns == reference_ns_) return false;
  // reference_time[next] = reference_time[current] + (new − previous), modulo 2^32 (header).
  const auto offset = static_cast<std::uint32_t>(reference_offset_[slot_]) +
                      static_cast<std::uint32_t>(pulse_time_ns - reference_ns_);
  bool published = false;
  if (++frames_ >= aggregated_frames_) {
    published = publish_window(sink);  // timestamp: the window's last pulse, reference_ns_
    frames_ = 0;
    slot_ = 0;
  } else {
    ++slot_;
  }
  reference_offset_[slot_] = static_cast<std::int32_t>(offset);
  frame_total_[slot_] = 0;
  reference_ns_ = pulse_time_ns;
  return published;
}

bool TofHistogram::flush(HistogramSink& sink) {
  if (!has_reference_) {
    if (fill_signal()) ++unpublished_no_pulse_;
    clear_bins();
    return false;
  }
  // Slots of frames that have not begun in this window are 0, not the previous window's.
  std::fill(reference_offset_.begin() + static_cast<std::ptrdiff_t>(slot_) + 1,
            reference_offset_.end(), 0);
  std::fill(frame_total_.begin() + static_cast<std::ptrdiff_t>(slot_) + 1, frame_total_.end(), 0);
  if (!fill_signal()) return false;
  sink.publish(make_view());
  ++published_;
  clear_bins();
  return true;
}

// The reference computes the signal and empties the bins in one pass whether or not it
// publishes; so do we.
bool TofHistogram::publish_window(HistogramSink& sink) {
  const bool any = fill_signal();
  clear_bins();
  if (!any) {
    ++skipped_empty_;
    return false;
  }
  sink.publish(make_view());
  ++published_;
  return true;
}

// signal[i] from the bin's (sum, count); true when any bin has a value.
bool TofHistogram::fill_signal() noexcept {
  constexpr std::int64_t lo = std::numeric_limits<std::int32_t>::min();
  constexpr std::int64_t hi = std::numeric_limits<std::int32_t>::max();
  bool any = false;
  for (std::size_t i = 0; i < signal_.size(); ++i) {
    const std::uint64_t n = bin_count_of_[i];
    any = any || n != 0;
    std::int64_t s = bin_sum_[i];
    // An empty bin's average is its sum (0), as the reference's average() returns.
    if (aggregation_ == Aggregation::average && n != 0) s /= static_cast<std::int64_t>(n);
    signal_[i] = static_cast<std::int32_t>(std::clamp(s, lo, hi));
  }
  return any;
}

void TofHistogram::clear_bins() noexcept {
  std::fill(bin_sum_.begin(), bin_sum_.end(), 0);
  std::fill(bin_count_of_.begin(), bin_count_of_.end(), 0);
}

DataArrayView TofHistogram::view() noexcept {
  (void)fill_signal();
  return make_view();
}

// Rebuilt at every call, so the object can be moved: the pointers are into its vectors' heap
// arrays and its own members.
DataArrayView TofHistogram::make_view() noexcept {
  const char* unit = has_unit_ ? unit_.c_str() : nullptr;
  variables_[0] =
      variable("frame_time", "ns", kFrameTimeAxes, &shapes_[0], Da00Type::int32, edges_);
  variables_[1] = variable("signal", unit, kFrameTimeAxes, &shapes_[1], Da00Type::int32, signal_);
  variables_[2] = variable("reference_time", "ns", kReferenceTimeAxes, &shapes_[2], Da00Type::int32,
                           reference_offset_);
  variables_[3] = variable("frame_total", "counts", kReferenceTimeAxes, &shapes_[2],
                           Da00Type::uint64, frame_total_);
  return {reference_ns_, variables_};
}

}  // namespace efu::da00
