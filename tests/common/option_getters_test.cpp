#include <string>

#include <gtest/gtest.h>

#include "config_error_of.h"
#include "efu/errors.h"
#include "efu/options.h"

namespace efu {
namespace {

OptionValues values() {
  OptionValues v;
  v.set("port", "70000", true);
  v.set("threshold", "12", false);
  v.set("interval", "0.005", true);
  v.set("algorithm", "max-adc", true);
  return v;
}

TEST(OptionGetters, IntegersInRangeAreReturned) {
  const OptionValues v = values();
  EXPECT_EQ(v.get_int("threshold", 0, 1023), 12);
  EXPECT_EQ(v.get_int("threshold", 12, 12), 12);
}

TEST(OptionGetters, IntegersOutOfRangeNameTheOptionValueAndRange) {
  const OptionValues v = values();
  EXPECT_EQ(test::config_error_of([&] { v.get_int("port", 0, 65535); }),
            "--port: 70000 is out of range; expected 0..65535");
  EXPECT_EQ(test::config_error_of([&] { v.get_int("threshold", 13, 20); }),
            "--threshold: 12 is out of range; expected 13..20");
}

TEST(OptionGetters, FloatsAreRangeChecked) {
  const OptionValues v = values();
  EXPECT_DOUBLE_EQ(v.get_float("interval", 0, 1), 0.005);
  EXPECT_EQ(test::config_error_of([&] { v.get_float("interval", 0.01, 3600); }),
            "--interval: 0.005 is out of range; expected 0.01 to 3600");
}

TEST(OptionGetters, ChoicesReturnTheirIndexAndListTheAlternatives) {
  const OptionValues v = values();
  EXPECT_EQ(v.get_choice("algorithm", {"center-of-mass", "max-adc"}), 1U);
  EXPECT_EQ(test::config_error_of([&] {
              v.get_choice("algorithm", {"a", "b", "c"});
            }),
            "--algorithm: 'max-adc' is not valid; expected a, b or c");
}

}  // namespace
}  // namespace efu
