// The producer queue while the broker is away: how full it is, and when to tell the operator.
//
// efu lets messages wait in librdkafka's bounded queue for as long as it has room (no
// message.timeout.ms; docs/kafka.md): what decides loss in an outage is the queue's memory, not
// time. So what an operator needs to know during an outage is how full that queue is and how
// long it has left at the current rate. QueueWatch decides that from samples the stats thread
// takes; it reads no clock and logs nothing itself, so it can be tested with made-up samples.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace efu::kafka {

/// librdkafka's two bounds on its producer queue. A produce() that would pass either fails
/// with QUEUE_FULL (and efu then drops by efu.queue.full.wait.ms).
struct QueueLimits {
  std::uint64_t max_bytes = 0;     // queue.buffering.max.kbytes * 1024 (payload bytes)
  std::uint64_t max_messages = 0;  // queue.buffering.max.messages; 0: no limit
};

/// The fuller of the two bounds, as a fraction 0..1:
///   fill = max(bytes / max_bytes, messages / max_messages)
double queue_fill(const QueueLimits& limits, std::uint64_t bytes, std::uint64_t messages);

/// Says when deliveries have stopped while messages wait (the broker is unreachable), how full
/// the queue is and about how long it has left, at most once per `warn_every`; and says once
/// when deliveries resume. Single-threaded: the stats thread calls update() about every 100 ms.
class QueueWatch {
 public:
  using Clock = std::chrono::steady_clock;

  struct Sample {
    Clock::time_point time;
    std::uint64_t delivered;  // kafka.delivery.ok so far
    std::uint64_t bytes;      // payload bytes queued, in flight or awaiting their report
    std::uint64_t messages;   // rd_kafka_outq_len()
  };

  explicit QueueWatch(QueueLimits limits, Clock::duration stall_after = std::chrono::seconds(3),
                      Clock::duration warn_every = std::chrono::seconds(5))
      : limits_(limits), stall_after_(stall_after), warn_every_(warn_every) {}

  /// The line to log now: a warning while stalled, "" for nothing, or (when `resumed` is set
  /// true) the info line that deliveries came back after a warning.
  std::string update(const Sample& sample, bool& resumed);

 private:
  std::string warning(const Sample& sample, double fill) const;

  QueueLimits limits_;
  Clock::duration stall_after_;
  Clock::duration warn_every_;
  bool started_ = false;
  bool warned_ = false;
  std::uint64_t last_delivered_ = 0;
  Clock::time_point progress_at_{};  // the last sample with a delivery or an empty queue
  Clock::time_point base_time_{};    // where the fill rate is measured from
  double base_fill_ = 0;
};

}  // namespace efu::kafka
