// Rate limiting for runtime warnings: a fault that repeats must not flood the log. Not for the
// hot path (it reads the clock); call it from tick() or the stats thread.
#pragma once

#include <chrono>
#include <cstdint>

namespace efu {

class LogLimiter {
 public:
  explicit LogLimiter(std::chrono::steady_clock::duration min_gap = std::chrono::seconds(10))
      : min_gap_(min_gap) {}

  /// True if a message may be written now. Otherwise the call is counted as suppressed.
  bool allow() {
    const auto now = std::chrono::steady_clock::now();
    if (has_logged_ && now - last_ < min_gap_) {
      ++suppressed_;
      return false;
    }
    has_logged_ = true;
    last_ = now;
    return true;
  }
  /// How many calls were refused since the last allowed one; resets the count.
  std::uint64_t take_suppressed() {
    const std::uint64_t n = suppressed_;
    suppressed_ = 0;
    return n;
  }

 private:
  std::chrono::steady_clock::duration min_gap_;
  std::chrono::steady_clock::time_point last_{};
  bool has_logged_ = false;
  std::uint64_t suppressed_ = 0;
};

}  // namespace efu
