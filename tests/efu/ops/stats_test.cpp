#include <thread>

#include <gtest/gtest.h>

#include "ops/stats_publisher.h"
#include "startup/threads.h"

namespace efu {
namespace {

class CapturingSink final : public StatsSink {
 public:
  void publish(const StatsSnapshot& s) override {
    last = s;
    ++count;
  }
  StatsSnapshot last{};
  int count = 0;
};

const RateSample* find(const StatsSnapshot& s, const std::string& name) {
  for (const RateSample& r : s.counters) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

TEST(StatsPublisher, DerivesRatesFromCounterDeltas) {
  CounterRegistry reg;
  Counter& c = reg.counter("receive.packets");
  Counter& g = reg.gauge("receive.ring.fill");
  reg.freeze();
  StatsPublisher pub(reg, std::chrono::milliseconds(1000));
  CapturingSink sink;
  pub.add_sink(&sink);
  pub.publish_now();
  c.add(1000);
  g.set(7);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  pub.publish_now();
  ASSERT_EQ(sink.count, 2);
  const RateSample* r = find(sink.last, "receive.packets");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->value, 1000u);
  // 1000 packets over ~50 ms: the rate is 1000 / interval, whatever the interval was.
  EXPECT_NEAR(r->rate_per_s, 1000.0 / sink.last.interval_s, 1e-6);
  EXPECT_GT(r->rate_per_s, 0);
  const RateSample* gauge = find(sink.last, "receive.ring.fill");
  ASSERT_NE(gauge, nullptr);
  EXPECT_EQ(gauge->value, 7u);
  EXPECT_EQ(gauge->rate_per_s, 0);
}

TEST(StatsPublisher, ThreadPublishesEveryIntervalAndOnceAtStop) {
  CounterRegistry reg;
  reg.counter("x").add(1);
  reg.freeze();
  StatsPublisher pub(reg, std::chrono::milliseconds(20));
  CapturingSink sink;
  pub.add_sink(&sink);
  int polls = 0;
  pub.set_poll([&] { ++polls; });
  pub.start(-1);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  pub.stop();
  EXPECT_GE(sink.count, 3);  // several intervals plus the final one
  EXPECT_GE(polls, 2);
}

TEST(StatsPublisher, SamplesThreadCpu) {
  CounterRegistry reg;
  reg.freeze();
  StatsPublisher pub(reg, std::chrono::milliseconds(1000));
  pub.cpu().add_thread("self", current_tid());
  // Burn some CPU on this thread so the share is measurable (clock ticks are 10 ms).
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(120);
  volatile std::uint64_t x = 0;
  while (std::chrono::steady_clock::now() < until) x = x + 1;
  const StatsSnapshot s = pub.publish_now();
  ASSERT_EQ(s.threads.size(), 1u);
  EXPECT_EQ(s.threads[0].name, "self");
  EXPECT_GT(s.threads[0].user_pct + s.threads[0].system_pct, 10.0);
}

TEST(LossWarnings, RecognisesLossCountersBySegment) {
  EXPECT_TRUE(is_loss_counter("receive.dropped.kernel"));
  EXPECT_TRUE(is_loss_counter("parser.essheader.errors.cookie"));
  EXPECT_TRUE(is_loss_counter("kafka.delivery.failed"));
  EXPECT_TRUE(is_loss_counter("receive.truncated"));
  EXPECT_FALSE(is_loss_counter("receive.packets"));
  EXPECT_FALSE(is_loss_counter("udp.errorsx"));
}

TEST(LogLimiter, AllowsOncePerGapAndCountsTheRest) {
  LogLimiter limiter(std::chrono::hours(1));
  EXPECT_TRUE(limiter.allow());
  EXPECT_FALSE(limiter.allow());
  EXPECT_FALSE(limiter.allow());
  EXPECT_EQ(limiter.take_suppressed(), 2u);
  EXPECT_EQ(limiter.take_suppressed(), 0u);
}

TEST(StatsLine, ShowsNonZeroCountersWithRates) {
  StatsSnapshot s{};
  s.counters = {{"receive.packets", CounterKind::kCounter, 2'500'000, 125'000},
                {"receive.dropped.kernel", CounterKind::kCounter, 0, 0}};
  const std::string line = format_stats_line(s);
  EXPECT_NE(line.find("receive.packets=2.50M(125.0k/s)"), std::string::npos) << line;
  EXPECT_EQ(line.find("dropped"), std::string::npos) << line;
}

}  // namespace
}  // namespace efu
