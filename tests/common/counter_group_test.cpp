#include "efu/counter_group.h"

#include <gtest/gtest.h>

namespace efu {
namespace {

enum class Why : std::uint8_t { kFiber, kFen, kCount };
constexpr std::array<const char*, 2> kWhyNames{"fiber", "fen"};

TEST(CounterGroup, RegistersEveryNameUnderThePrefixAndIndexesByEnum) {
  CounterRegistry registry;
  CounterGroup<Why, kWhyNames.size()> errors(registry, "readouts.errors.", kWhyNames);
  errors[Why::kFen].add(3);
  errors[Why::kFiber].add();
  EXPECT_EQ(registry.value("readouts.errors.fen"), 3U);
  EXPECT_EQ(registry.value("readouts.errors.fiber"), 1U);
  EXPECT_EQ(registry.sample().size(), 2U);
  EXPECT_EQ(errors.size(), 2U);
}

TEST(CounterGroup, TwoInstancesShareNamesAndAreSummed) {
  CounterRegistry registry;
  CounterGroup<Why, 2> a(registry, "x.", kWhyNames);
  CounterGroup<Why, 2> b(registry, "x.", kWhyNames);
  a[Why::kFiber].add(2);
  b[Why::kFiber].add(5);
  EXPECT_EQ(registry.value("x.fiber"), 7U);
}

}  // namespace
}  // namespace efu
