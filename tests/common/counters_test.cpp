#include "efu/counters.h"

#include <stdexcept>

#include <gtest/gtest.h>

namespace efu {
namespace {

TEST(CounterRegistry, SumsInstancesRegisteredUnderOneName) {
  CounterRegistry reg;
  Counter& a = reg.counter("process.packets");
  Counter& b = reg.counter("process.packets");
  Counter& other = reg.counter("receive.packets");
  a.add(3);
  b.add(4);
  other.add();
  EXPECT_EQ(reg.value("process.packets"), 7u);
  const auto samples = reg.sample();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].name, "process.packets");
  EXPECT_EQ(samples[0].value, 7u);
  EXPECT_EQ(samples[1].name, "receive.packets");
}

TEST(CounterRegistry, GaugeHoldsTheLastValue) {
  CounterRegistry reg;
  Counter& g = reg.gauge("receive.ring.fill");
  g.set(10);
  g.set(3);
  EXPECT_EQ(reg.value("receive.ring.fill"), 3u);
  EXPECT_EQ(reg.sample().at(0).kind, CounterKind::kGauge);
}

TEST(CounterRegistry, RefusesRegistrationAfterFreeze) {
  CounterRegistry reg;
  reg.counter("a");
  reg.freeze();
  EXPECT_THROW(reg.counter("b"), std::logic_error);
}

TEST(CounterRegistry, RefusesOneNameAsCounterAndGauge) {
  CounterRegistry reg;
  reg.counter("x");
  EXPECT_THROW(reg.gauge("x"), std::logic_error);
}

TEST(CounterRegistry, CountersSitOnTheirOwnCacheLines) {
  CounterRegistry reg;
  Counter& a = reg.counter("a");
  Counter& b = reg.counter("b");
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&a) % 64, 0u);
  EXPECT_NE(reinterpret_cast<std::uintptr_t>(&a) / 64, reinterpret_cast<std::uintptr_t>(&b) / 64);
}

}  // namespace
}  // namespace efu
