// Live histograms of the events a processing thread forms (efu --histograms TOPIC;
// docs/architecture.md §6.4): a time-of-flight histogram and a pixel-count histogram, each
// published as one da00 message every N pulses. Built once here, for every plugin: the host puts
// a HistogrammedSink in front of each ev44 source, so a plugin does nothing to have them.
//
// Host-side (not part of the plugin SDK). One LiveHistograms per processing thread; all of it is
// used only by that thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "efu/counters.h"
#include "efu/plugin.h"

namespace efu {

struct LiveHistogramSettings {
  std::string topic;                      // "" : off
  std::uint32_t pulses = 14;              // pulses per histogram (14: about 1 s at 14 Hz)
  std::uint32_t tof_bins = 500;           // time-of-flight bins over [0, tof_max_ns)
  std::uint32_t tof_max_ns = 71'428'571;  // one pulse period at 14 Hz
  std::uint32_t pixels = 16'384;          // pixel ids 1 .. pixels, one bin each
};

/// Largest pixel-count histogram: its two int32 arrays must stay well inside Kafka's default
/// 1 MB message limit.
inline constexpr std::uint32_t kMaxLiveHistogramPixels = 100'000;

/// The two histograms of one processing thread.
///
/// Windows. Events arrive in runs of one pulse time. A run whose pulse time is later than every
/// pulse time before it starts a new pulse; a run of an earlier pulse (a plugin that closes
/// clusters of two pulses in turn, a late event) counts in the open window. When the pulse that
/// starts is the (N+1)-th of the window, the window's two histograms are published first
/// (unless both are empty: then nothing is sent and "histograms.skipped_empty" counts it). A
/// pulse time more than kPulseRestartNs before the latest is a clock that started again: it
/// starts a new pulse too. Each message's timestamp is the pulse time of the window's last
/// pulse. flush() publishes the open window (at stop).
///
/// Binning. The TOF bin edges are edge[i] = floor(i · tof_max_ns / tof_bins), i = 0 .. tof_bins;
/// an event with edge[i] <= tof < edge[i+1] counts in bin i. A TOF at or beyond tof_max_ns is
/// counted in "histograms.tof.beyond_range", a pixel id 0 or above `pixels` in
/// "histograms.pixels.out_of_range"; both events still go to ev44 unchanged.
///
/// Cost. add() is on the processing thread's hot path: no allocation, no division (the bin
/// comes from one multiplication and a correction against the edges), two increments.
class LiveHistograms {
 public:
  /// A pulse time this far before the latest means the clock started again (10 s).
  static constexpr std::uint64_t kPulseRestartNs = 10'000'000'000ULL;

  /// Throws ConfigError for tof_bins or pulses 0, tof_max_ns < tof_bins, pixels 0 or above
  /// kMaxLiveHistogramPixels.
  LiveHistograms(const LiveHistogramSettings& settings, HistogramSink& tof_out,
                 HistogramSink& pixel_out, CounterRegistry& counters);

  void add(std::uint64_t pulse_time_ns, std::uint32_t time_of_flight_ns,
           std::uint32_t pixel_id) noexcept {
    if (pulse_time_ns != pulse_ns_) on_pulse(pulse_time_ns);
    count(time_of_flight_ns, pixel_id);
  }

  void add_pulse(std::uint64_t pulse_time_ns, const std::uint32_t* time_of_flight_ns,
                 const std::uint32_t* pixel_id, std::size_t n) noexcept {
    if (n == 0) return;
    if (pulse_time_ns != pulse_ns_) on_pulse(pulse_time_ns);
    for (std::size_t i = 0; i < n; ++i) count(time_of_flight_ns[i], pixel_id[i]);
  }

  /// Publishes the open window if it holds an event (an empty one is not counted as skipped).
  void flush();

  /// The bin of `tof` (tof_bins when beyond the range): what add() uses, for tests.
  std::uint32_t tof_bin(std::uint32_t tof) const noexcept {
    // floor(tof · bins / max) estimated in double, then corrected by at most a step either way
    // so that edge[b] <= tof < edge[b+1] holds exactly.
    if (tof >= tof_max_) return bins_;
    auto b = static_cast<std::uint32_t>(static_cast<double>(tof) * bins_per_ns_);
    if (b >= bins_) b = bins_ - 1;
    if (tof < static_cast<std::uint32_t>(edges_[b])) --b;  // edges are >= 0
    if (tof >= static_cast<std::uint32_t>(edges_[b + 1])) ++b;
    return b;
  }

  const std::vector<std::int32_t>& tof_edges() const noexcept { return edges_; }

 private:
  void count(std::uint32_t tof, std::uint32_t pixel) noexcept {
    const std::uint32_t b = tof_bin(tof);
    if (b < bins_) {
      ++tof_counts_[b];
      any_ = true;
    } else {
      tof_beyond_.add();
    }
    if (pixel - 1U < pixels_) {  // pixel 0 wraps to 2^32 - 1: out of range
      ++pixel_counts_[pixel - 1U];
      any_ = true;
    } else {
      pixel_out_of_range_.add();
    }
  }

  /// A run of another pulse time than the latest: a new pulse, or an earlier one.
  void on_pulse(std::uint64_t pulse_time_ns) noexcept {
    if (!started_ || pulse_time_ns > pulse_ns_ || pulse_ns_ - pulse_time_ns > kPulseRestartNs) {
      next_pulse(pulse_time_ns);
    }
  }
  void next_pulse(std::uint64_t pulse_time_ns);
  void publish();

  std::uint32_t pulses_;
  std::uint32_t bins_;
  std::uint32_t tof_max_;
  std::uint32_t pixels_;
  double bins_per_ns_;
  std::vector<std::int32_t> edges_;          // bins_ + 1 (int32: the reference's axis type)
  std::vector<std::uint32_t> tof_counts_;    // bins_
  std::vector<std::int32_t> pixel_ids_;      // 1 .. pixels_
  std::vector<std::uint32_t> pixel_counts_;  // pixels_
  HistogramSink& tof_out_;
  HistogramSink& pixel_out_;
  Counter& tof_beyond_;
  Counter& pixel_out_of_range_;
  Counter& published_;
  Counter& skipped_empty_;
  std::uint64_t pulse_ns_ = 0;
  std::uint32_t pulses_in_window_ = 0;
  bool started_ = false;
  bool any_ = false;
};

/// An EventSink that counts every event in the thread's LiveHistograms and passes it on.
class HistogrammedSink final : public EventSink {
 public:
  HistogrammedSink(EventSink& next, LiveHistograms& histograms)
      : next_(next), histograms_(histograms) {}
  void add(std::uint64_t pulse_time_ns, std::uint32_t time_of_flight_ns,
           std::uint32_t pixel_id) override {
    histograms_.add(pulse_time_ns, time_of_flight_ns, pixel_id);
    next_.add(pulse_time_ns, time_of_flight_ns, pixel_id);
  }
  void add_pulse(std::uint64_t pulse_time_ns, const std::uint32_t* time_of_flight_ns,
                 const std::uint32_t* pixel_id, std::size_t n) override {
    histograms_.add_pulse(pulse_time_ns, time_of_flight_ns, pixel_id, n);
    next_.add_pulse(pulse_time_ns, time_of_flight_ns, pixel_id, n);
  }

 private:
  EventSink& next_;
  LiveHistograms& histograms_;
};

}  // namespace efu
