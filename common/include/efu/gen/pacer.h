// The send schedule of efu's generators: an absolute clock schedule (not a sleep per packet), so
// errors do not accumulate and the long-run rate is exact.
//
//   gen::Pacer pacer(gen::Rate{.pps = 10'000});       // or {.gbps = 2.5}, or {} = unthrottled
//   pacer.wait_for(packets_sent, bytes_sent);          // blocks until the next datagram is due
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace efu::gen {

/// At most one of the two is non-zero; both zero means as fast as possible.
struct Rate {
  double pps = 0;   // datagrams per second
  double gbps = 0;  // Gbit/s of UDP payload
};

class Pacer {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Pacer(Rate rate) : rate_(rate), start_(Clock::now()) {}

  /// When the datagram after `packets` datagrams and `bytes` bytes may leave, on the schedule
  /// that started at construction (or restart()).
  Clock::time_point due(std::uint64_t packets, std::uint64_t bytes) const noexcept {
    double seconds = 0;
    if (rate_.pps > 0) seconds = static_cast<double>(packets) / rate_.pps;
    if (rate_.gbps > 0) seconds = static_cast<double>(bytes) * 8 / (rate_.gbps * 1e9);
    return start_ +
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }

  /// Waits until due(packets, bytes) or until `stop` is set. Sleeps while far ahead (> 200 us)
  /// and spins the rest, so the rate holds at high packet rates despite the sleep granularity.
  void wait_for(std::uint64_t packets, std::uint64_t bytes,
                const std::atomic<bool>* stop = nullptr) const {
    if (!throttled()) return;
    const Clock::time_point when = due(packets, bytes);
    for (Clock::time_point now = Clock::now(); now < when; now = Clock::now()) {
      if (stop != nullptr && stop->load(std::memory_order_relaxed)) return;
      if (when - now > std::chrono::microseconds(200)) {
        std::this_thread::sleep_for(when - now - std::chrono::microseconds(100));
      }
    }
  }

  bool throttled() const noexcept { return rate_.pps > 0 || rate_.gbps > 0; }
  Clock::time_point start() const noexcept { return start_; }
  void restart() noexcept { start_ = Clock::now(); }

 private:
  Rate rate_;
  Clock::time_point start_;
};

}  // namespace efu::gen
