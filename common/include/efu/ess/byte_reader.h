// Little-endian loads from unaligned packet bytes.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace efu::ess {

static_assert(std::endian::native == std::endian::little,
              "ESS readout is little-endian; add byte swaps before building for this target");

inline std::uint16_t load_u16(const std::uint8_t* p) noexcept {
  std::uint16_t v;
  std::memcpy(&v, p, sizeof v);  // memcpy: packet bytes carry no alignment guarantee
  return v;
}

inline std::uint32_t load_u32(const std::uint8_t* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline void store_u16(std::uint8_t* p, std::uint16_t v) noexcept { std::memcpy(p, &v, sizeof v); }
inline void store_u32(std::uint8_t* p, std::uint32_t v) noexcept { std::memcpy(p, &v, sizeof v); }

}  // namespace efu::ess
