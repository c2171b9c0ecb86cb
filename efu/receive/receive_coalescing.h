// Receive coalescing: when datagrams come one at a time at a moderate rate, the socket receive
// thread pauses briefly before its next recvmmsg(), so that one call takes several datagrams,
// and one wake-up of the processing thread covers them all (docs/architecture.md §3.5).
//
// Why. A detector's electronics send one datagram at a time, evenly spaced. At 20,000 packets/s
// (a gap of 50 us) a receive thread that blocks in recvmmsg() is woken once per datagram, and it
// wakes the sleeping processing thread once per datagram: two context switches and a futex call
// for each packet, which on this project's machines cost more CPU than the receive and copy
// themselves. The network card's answer is interrupt moderation; this is the same idea, in the
// receive thread: sleep for a window in which the kernel queues datagrams in the socket buffer,
// then take them in one call.
//
// When. Only while it pays and costs no latency at high rates:
//   - the last call took fewer datagrams than it asked for (the socket was drained: at high
//     rates recvmmsg() already returns full batches and the thread never pauses);
//   - the mean gap between datagrams is at least kMinGapNs (above ~100,000 datagrams/s the
//     thread does not pause; a pause would only add its latency);
//   - at least two datagrams are expected in the window (else the pause gains nothing and adds
//     its latency: at 1,000 packets/s the thread blocks per datagram as before).
// The pause is the window, shortened so that the datagrams expected in it fill at most half of
// the next call's batch. Its latency (at most the window, 1 ms by default) is small against an
// ev44 message's own (--ev44-max-latency-ms, 100 ms by default).
//
// The mean gap is measured, not configured: an exponential average of (time between the ends of
// two calls) / (datagrams the second call took), which is the arrival gap whether the thread
// blocked or paused. A call that took nothing (the socket's receive timeout) resets it to idle.
#pragma once

#include <algorithm>
#include <cstdint>

namespace efu {

class ReceiveCoalescing {
 public:
  /// Below this mean gap between datagrams the receive thread never pauses.
  static constexpr std::uint64_t kMinGapNs = 10'000;

  /// `window_ns` 0: never pause (--receive-coalesce-us 0).
  explicit ReceiveCoalescing(std::uint64_t window_ns) noexcept : window_ns_(window_ns) {}

  /// After a recvmmsg() call that asked for `asked` messages and took `taken` (0 or less: none),
  /// ending at `now_ns`: how long to pause before the next call (0: do not pause).
  std::uint64_t pause_after(int taken, unsigned asked, std::uint64_t now_ns) noexcept {
    if (window_ns_ == 0) return 0;
    const std::uint64_t elapsed = now_ns - last_ns_;
    last_ns_ = now_ns;
    if (taken <= 0) {
      mean_gap_ns_ = kIdleGapNs;
      return 0;
    }
    const std::uint64_t gap = elapsed / static_cast<unsigned>(taken);
    // An average over about 8 calls: one late datagram does not stop the pauses, and a change
    // of rate is followed within a few calls.
    mean_gap_ns_ = mean_gap_ns_ - mean_gap_ns_ / 8 + gap / 8;
    if (static_cast<unsigned>(taken) >= asked) return 0;  // the socket had more: at once
    if (mean_gap_ns_ < kMinGapNs) return 0;
    if (mean_gap_ns_ * 2 > window_ns_) return 0;  // fewer than two datagrams per window
    // At most half a batch expected in the pause.
    return std::min<std::uint64_t>(window_ns_, mean_gap_ns_ * std::max(asked / 2, 1u));
  }

  std::uint64_t mean_gap_ns() const noexcept { return mean_gap_ns_; }

 private:
  static constexpr std::uint64_t kIdleGapNs = 1'000'000'000;
  std::uint64_t window_ns_;
  std::uint64_t last_ns_ = 0;
  std::uint64_t mean_gap_ns_ = kIdleGapNs;
};

}  // namespace efu
