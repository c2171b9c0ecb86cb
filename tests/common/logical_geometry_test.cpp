#include "efu/ess/logical_geometry.h"

#include <gtest/gtest.h>

namespace efu::ess {
namespace {

TEST(LogicalGeometry, PixelsCountFromOneRowByRow) {
  constexpr LogicalGeometry g{64, 32};  // 64 wide, 32 high
  static_assert(g.pixel(0, 0) == 1);
  EXPECT_EQ(g.pixel(63, 0), 64U);
  EXPECT_EQ(g.pixel(0, 1), 65U);
  EXPECT_EQ(g.pixel(63, 31), 2048U);
  EXPECT_EQ(g.pixel_count(), 2048U);
  EXPECT_EQ(g.pixel(64, 0), 0U);  // outside: no pixel
  EXPECT_EQ(g.pixel(0, 32), 0U);
  EXPECT_EQ(g.x_of(65), 0U);
  EXPECT_EQ(g.y_of(65), 1U);
  EXPECT_EQ(g.x_of(2048), 63U);
  EXPECT_EQ(g.y_of(2048), 31U);
}

}  // namespace
}  // namespace efu::ess
