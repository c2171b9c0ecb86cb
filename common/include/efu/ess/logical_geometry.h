// The ESS logical geometry (docs/architecture.md §5.2c): pixels of an nx × ny grid are numbered
// from 1, row by row: pixel = 1 + x + nx·y. 0 means "no pixel". Every instrument maps its own
// coordinates (cassette, wire, strip, tube, straw, position) to x and y, then numbers them here,
// so efu's ev44 pixel ids match the instrument's NeXus geometry.
#pragma once

#include <cstdint>

namespace efu::ess {

struct LogicalGeometry {
  std::uint32_t nx;
  std::uint32_t ny;

  constexpr bool valid(std::uint32_t x, std::uint32_t y) const noexcept { return x < nx && y < ny; }
  /// 1 + x + nx·y, or 0 when (x, y) is outside the grid.
  constexpr std::uint32_t pixel(std::uint32_t x, std::uint32_t y) const noexcept {
    return valid(x, y) ? 1 + x + nx * y : 0;
  }
  constexpr std::uint32_t pixel_count() const noexcept { return nx * ny; }
  /// The inverse of pixel() for pixel ids 1..pixel_count().
  constexpr std::uint32_t x_of(std::uint32_t pixel_id) const noexcept {
    return (pixel_id - 1) % nx;
  }
  constexpr std::uint32_t y_of(std::uint32_t pixel_id) const noexcept {
    return (pixel_id - 1) / nx;
  }
};

}  // namespace efu::ess
