// A group of counters registered from a table of names and indexed by an enum, so a stage with
// many failure classes declares them once instead of in a long initialiser list:
//
//   enum class HeaderError : std::uint8_t { kPadding, kVersion, kCount };
//   constexpr std::array<const char*, 2> kHeaderErrorNames{"padding", "version"};
//   CounterGroup<HeaderError, 2> errors{counters, "parser.essheader.errors.", kHeaderErrorNames};
//   errors[HeaderError::kVersion].add();
//
// The hot path is one array index and Counter::add(): no lookup by name.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "efu/counters.h"

namespace efu {

template <typename Enum, std::size_t N>
class CounterGroup {
 public:
  /// Registers `prefix + names[i]` for each i. Must run before the registry is frozen.
  CounterGroup(CounterRegistry& registry, std::string_view prefix,
               const std::array<const char*, N>& names) {
    for (std::size_t i = 0; i < N; ++i) {
      counters_[i] = &registry.counter(std::string(prefix) + names[i]);
    }
  }

  Counter& operator[](Enum which) noexcept { return *counters_[static_cast<std::size_t>(which)]; }
  const Counter& operator[](Enum which) const noexcept {
    return *counters_[static_cast<std::size_t>(which)];
  }
  static constexpr std::size_t size() noexcept { return N; }

 private:
  std::array<Counter*, N> counters_{};
};

}  // namespace efu
