// The most recent stats snapshot, kept for readers on other threads (the command port).
#pragma once

#include <memory>
#include <mutex>

#include "efu/outputs.h"

namespace efu {

/// A StatsSink that keeps the last snapshot the publisher produced. Readers get a shared pointer
/// to an immutable snapshot, so they read exactly the values the stats thread sampled, and a slow
/// reader never holds up the publisher: the lock guards only the pointer swap.
class LatestStats final : public StatsSink {
 public:
  LatestStats() : latest_(std::make_shared<const StatsSnapshot>()) {}

  void publish(const StatsSnapshot& snapshot) override {
    auto next = std::make_shared<const StatsSnapshot>(snapshot);  // copied outside the lock
    std::lock_guard lock(mutex_);
    latest_.swap(next);
    published_ = true;
  }

  /// Serves `initial` until the publisher's first interval (no-op if that came already).
  void seed(const StatsSnapshot& initial) {
    auto next = std::make_shared<const StatsSnapshot>(initial);
    std::lock_guard lock(mutex_);
    if (!published_) latest_.swap(next);
  }

  std::shared_ptr<const StatsSnapshot> latest() const {
    std::lock_guard lock(mutex_);
    return latest_;
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const StatsSnapshot> latest_;
  bool published_ = false;
};

}  // namespace efu
