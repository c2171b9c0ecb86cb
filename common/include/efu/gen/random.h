// The random draws of efu's generators: one seeded engine (--seed), so a run is reproducible and
// every shared piece (fault injection, shapes) draws from the same sequence in the same order.
#pragma once

#include <cstdint>
#include <random>

namespace efu::gen {

class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}

  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(engine_);
  }
  /// Uniform in 0..n-1 (n > 0).
  std::uint64_t below(std::uint64_t n) {
    return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(engine_);
  }
  /// For other distributions (a spot's normal distribution).
  std::mt19937_64& engine() noexcept { return engine_; }

 private:
  std::mt19937_64 engine_;
};

}  // namespace efu::gen
