// Graphite/Carbon plaintext output: every counter each stats interval, on its own thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "efu/counters.h"
#include "efu/outputs.h"

namespace efu {

struct GraphiteConfig {
  std::string host;  // name or address; resolved on the Graphite thread at each connect
  int port = 2003;
  std::string prefix;  // "efu.freia.0.", prepended to every counter name
};

/// One interval as Carbon plaintext: "<prefix><counter> <value> <unix seconds>\n" per counter.
std::string format_graphite(const StatsSnapshot& snapshot, const std::string& prefix);

/// publish() (on the stats thread) only formats the interval and leaves it for the Graphite
/// thread, which connects, writes all lines of the interval with one send() and reconnects with
/// backoff (1 s doubling to 30 s) when Carbon is down. An interval that cannot be written
/// (no connection, a write error or timeout, or more than kMaxQueued intervals waiting) is
/// counted in graphite.dropped.intervals; nothing waits for Carbon but the Graphite thread.
class GraphiteOutput final : public StatsSink {
 public:
  /// Registers the graphite.* counters (before the registry is frozen). No thread yet.
  GraphiteOutput(GraphiteConfig config, CounterRegistry& counters);
  ~GraphiteOutput() override;
  GraphiteOutput(const GraphiteOutput&) = delete;
  GraphiteOutput& operator=(const GraphiteOutput&) = delete;

  static constexpr std::size_t kMaxQueued = 4;

  void publish(const StatsSnapshot& snapshot) override;

  void start();
  /// Writes the last interval if there is a connection (within one write timeout), then ends
  /// the thread. A stop never connects anew.
  void stop();

 private:
  void run();

  GraphiteConfig config_;
  Counter& sent_intervals_;
  Counter& sent_bytes_;
  Counter& connects_;
  Counter& failed_connect_;
  Counter& failed_write_;
  Counter& dropped_intervals_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::string> pending_;  // intervals not yet taken by the thread, oldest first
  std::uint64_t overflowed_ = 0;     // intervals discarded because the queue was full
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace efu
