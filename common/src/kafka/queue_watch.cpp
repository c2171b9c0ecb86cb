#include "efu/kafka/queue_watch.h"

#include <algorithm>

#include <spdlog/fmt/fmt.h>

namespace efu::kafka {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

double seconds(QueueWatch::Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

double queue_fill(const QueueLimits& limits, std::uint64_t bytes, std::uint64_t messages) {
  double fill = 0;
  if (limits.max_bytes > 0) {
    fill = static_cast<double>(bytes) / static_cast<double>(limits.max_bytes);
  }
  if (limits.max_messages > 0) {
    fill = std::max(fill, static_cast<double>(messages) / static_cast<double>(limits.max_messages));
  }
  return std::min(fill, 1.0);
}

std::string QueueWatch::update(const Sample& sample, bool& resumed) {
  resumed = false;
  const double fill = queue_fill(limits_, sample.bytes, sample.messages);
  // Progress: a delivery report arrived since the last sample, or nothing waits at all.
  const bool progress = !started_ || sample.delivered != last_delivered_ || sample.messages == 0;
  started_ = true;
  last_delivered_ = sample.delivered;
  if (progress) {
    std::string line;
    if (warned_) {
      resumed = true;
      line = fmt::format(
          "kafka: deliveries resumed after {:.0f} s without any; producer queue {:.0f} % full",
          seconds(sample.time - progress_at_), fill * 100);
    }
    warned_ = false;
    progress_at_ = base_time_ = sample.time;
    base_fill_ = fill;
    return line;
  }
  if (sample.time - progress_at_ < stall_after_) return "";
  if (warned_ && sample.time - base_time_ < warn_every_) return "";
  std::string line = warning(sample, fill);
  warned_ = true;
  base_time_ = sample.time;
  base_fill_ = fill;
  return line;
}

// Time left is the room still free over the rate the fill grew at since the stall began or
// since the previous warning (whichever is later):
//   left_s = (1 - fill) / ((fill - base_fill) / (t - base_t))
std::string QueueWatch::warning(const Sample& sample, double fill) const {
  std::string how_long;
  const double window_s = seconds(sample.time - base_time_);
  const double rate = window_s > 0 ? (fill - base_fill_) / window_s : 0;
  if (fill >= 0.999) {
    how_long = "full: new messages are dropped after efu.queue.full.wait.ms "
               "(kafka.produce.failed.queue_full)";
  } else if (rate > 0) {
    how_long = fmt::format("about {:.0f} s left at the current rate", (1 - fill) / rate);
  } else {
    how_long = "not growing";
  }
  std::string messages;
  if (limits_.max_messages > 0) {
    messages = fmt::format(", {} of {} messages", sample.messages, limits_.max_messages);
  }
  return fmt::format(
      "kafka: no delivery for {:.0f} s, broker unreachable; producer queue {:.0f} % full "
      "({:.1f} MiB of {:.0f} MiB{}), {}",
      seconds(sample.time - progress_at_), fill * 100,
      static_cast<double>(sample.bytes) / kMiB, static_cast<double>(limits_.max_bytes) / kMiB,
      messages, how_long);
}

}  // namespace efu::kafka
