#include "efu/live_histograms.h"

#include <algorithm>
#include <array>
#include <limits>

#include "efu/errors.h"

namespace efu {
namespace {

void check(bool ok, const std::string& what) {
  if (!ok) throw ConfigError(what);
}

}  // namespace

LiveHistograms::LiveHistograms(const LiveHistogramSettings& settings, HistogramSink& tof_out,
                               HistogramSink& pixel_out, CounterRegistry& counters)
    : pulses_(settings.pulses),
      bins_(settings.tof_bins),
      tof_max_(settings.tof_max_ns),
      pixels_(settings.pixels),
      tof_out_(tof_out),
      pixel_out_(pixel_out),
      tof_beyond_(counters.counter("histograms.tof.beyond_range")),
      pixel_out_of_range_(counters.counter("histograms.pixels.out_of_range")),
      published_(counters.counter("histograms.published")),
      skipped_empty_(counters.counter("histograms.skipped_empty")) {
  check(pulses_ >= 1, "--histogram-pulses: 0; expected at least 1 pulse per histogram");
  check(bins_ >= 1, "--histogram-tof-bins: 0; expected at least 1 bin");
  check(tof_max_ >= bins_ &&
            tof_max_ <= static_cast<std::uint32_t>(std::numeric_limits<std::int32_t>::max()),
        "--histogram-tof-max-ns: " + std::to_string(tof_max_) + "; expected " +
            std::to_string(bins_) + " (one ns per bin) .. 2147483647");
  check(pixels_ >= 1 && pixels_ <= kMaxLiveHistogramPixels,
        "--histogram-pixels: " + std::to_string(pixels_) + "; expected 1 .. " +
            std::to_string(kMaxLiveHistogramPixels));
  bins_per_ns_ = static_cast<double>(bins_) / static_cast<double>(tof_max_);
  // edge[i] = floor(i · max / bins), in 64 bits so that i · max cannot overflow.
  edges_.resize(bins_ + 1);
  for (std::uint32_t i = 0; i <= bins_; ++i) {
    edges_[i] = static_cast<std::int32_t>(std::uint64_t{i} * tof_max_ / bins_);
  }
  tof_counts_.assign(bins_, 0);
  pixel_ids_.resize(pixels_);
  for (std::uint32_t i = 0; i < pixels_; ++i) pixel_ids_[i] = static_cast<std::int32_t>(i + 1);
  pixel_counts_.assign(pixels_, 0);
}

void LiveHistograms::next_pulse(std::uint64_t pulse_time_ns) {
  if (started_) {
    // The run that starts a new pulse ends the old one; the window closes after `pulses_`.
    if (++pulses_in_window_ >= pulses_) publish();
  }
  started_ = true;
  pulse_ns_ = pulse_time_ns;
}

void LiveHistograms::flush() {
  if (any_) publish();
}

void LiveHistograms::publish() {
  pulses_in_window_ = 0;
  if (!any_) {
    skipped_empty_.add();
    return;
  }
  static constexpr std::array<const char*, 1> kTofAxis{"frame_time"};
  static constexpr std::array<const char*, 1> kPixelAxis{"pixel_id"};
  const std::array<std::int64_t, 1> edge_shape{static_cast<std::int64_t>(bins_) + 1};
  const std::array<std::int64_t, 1> bin_shape{static_cast<std::int64_t>(bins_)};
  const std::array<std::int64_t, 1> pixel_shape{static_cast<std::int64_t>(pixels_)};
  const std::array<Da00Variable, 2> tof{{
      {"frame_time", "ns", kTofAxis, edge_shape, Da00Type::int32, edges_.data(),
       edges_.size() * sizeof(std::int32_t)},
      {"signal", "counts", kTofAxis, bin_shape, Da00Type::uint32, tof_counts_.data(),
       tof_counts_.size() * sizeof(std::uint32_t)},
  }};
  const std::array<Da00Variable, 2> pixels{{
      {"pixel_id", nullptr, kPixelAxis, pixel_shape, Da00Type::int32, pixel_ids_.data(),
       pixel_ids_.size() * sizeof(std::int32_t)},
      {"signal", "counts", kPixelAxis, pixel_shape, Da00Type::uint32, pixel_counts_.data(),
       pixel_counts_.size() * sizeof(std::uint32_t)},
  }};
  tof_out_.publish(DataArrayView{pulse_ns_, tof});
  pixel_out_.publish(DataArrayView{pulse_ns_, pixels});
  published_.add();
  std::fill(tof_counts_.begin(), tof_counts_.end(), 0U);
  std::fill(pixel_counts_.begin(), pixel_counts_.end(), 0U);
  any_ = false;
}

}  // namespace efu
