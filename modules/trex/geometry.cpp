#include "geometry.h"

namespace efu::trex {
namespace {

ChannelPlace wire_place(const TrexConfig& config, const HybridEntry& h, std::uint32_t asic,
                        std::uint32_t channel) noexcept {
  const Vessel& v = config.vessels[h.vessel];
  if (config.geometry == InstrumentGeometry::kLet) channel = let_wire_channel(channel);
  if (!wire_channel_valid(asic, channel)) return ChannelPlace{false, kWire, 0};
  const std::uint32_t xz =
      wire_xz(asic, channel, column_of(config.geometry, h.ring, h.fen), v.rotated, v.x_offset);
  return ChannelPlace{true, kWire, static_cast<std::uint16_t>(xz)};
}

ChannelPlace grid_place(const TrexConfig& config, const HybridEntry& h, std::uint32_t asic,
                        std::uint32_t channel) noexcept {
  const Vessel& v = config.vessels[h.vessel];
  std::uint32_t grid = 0;
  if (v.short_vessel) {
    if (!short_grid_valid(config.geometry, h.hybrid, asic, channel)) return {false, kGrid, 0};
    grid = short_grid(channel);
  } else {
    if (!full_grid_valid(h.hybrid, asic, channel)) return {false, kGrid, 0};
    grid = full_grid(h.hybrid, asic, channel);
  }
  return ChannelPlace{true, kGrid, static_cast<std::uint16_t>(grid_y(grid, v.rotated, v.y_offset))};
}

}  // namespace

ChannelPlace channel_place(const TrexConfig& config, const HybridEntry& h, std::uint32_t asic,
                           std::uint32_t channel) noexcept {
  if (h.hybrid == wire_hybrid(config.geometry)) return wire_place(config, h, asic, channel);
  return grid_place(config, h, asic, channel);
}

ChannelMap::ChannelMap(const TrexConfig& config)
    : per_vmm_(config.hybrids.size() * 2),
      coordinates_(config.hybrids.size() * 2 * vmm3a::kChannelsPerVmm, 0),
      units_(static_cast<std::uint32_t>(config.units.size())),
      volume_{config.size_x, config.size_y, config.size_z} {
  for (std::uint32_t i = 0; i < config.hybrids.size(); ++i) {
    const HybridEntry& h = config.hybrids[i];
    hybrids_.add(h.ring, h.fen, h.hybrid, static_cast<std::uint16_t>(i));
    for (std::uint32_t asic = 0; asic < 2; ++asic) {
      const std::uint32_t row = vmm3a::vmm_index(i, asic);
      PerVmm& v = per_vmm_[row];
      v = PerVmm{
          0, h.unit, config.vessels[h.vessel].min_adc,
          static_cast<std::uint8_t>(h.hybrid == wire_hybrid(config.geometry) ? kWire : kGrid)};
      for (std::uint32_t ch = 0; ch < vmm3a::kChannelsPerVmm; ++ch) {
        const ChannelPlace p = channel_place(config, h, asic, ch);
        if (!p.valid) continue;
        v.used |= std::uint64_t{1} << ch;
        coordinates_[row * vmm3a::kChannelsPerVmm + ch] = p.coordinate;
      }
    }
  }
}

namespace {

// True if some channel of `h` has an x (wires) or y (grids) outside the volume.
bool reaches_outside(const TrexConfig& config, const HybridEntry& h) {
  for (std::uint32_t asic = 0; asic < 2; ++asic) {
    for (std::uint32_t ch = 0; ch < vmm3a::kChannelsPerVmm; ++ch) {
      const ChannelPlace p = channel_place(config, h, asic, ch);
      if (!p.valid) continue;
      const bool outside =
          p.plane == kWire ? x_of(p.coordinate) >= config.size_x : p.coordinate >= config.size_y;
      if (outside) return true;
    }
  }
  return false;
}

}  // namespace

std::string ChannelMap::outside_volume_warning(const TrexConfig& config) {
  std::vector<std::uint8_t> flagged(config.vessels.size(), 0);
  std::string names;
  for (const HybridEntry& h : config.hybrids) {
    if (flagged[h.vessel] != 0 || !reaches_outside(config, h)) continue;
    flagged[h.vessel] = 1;
    names += (names.empty() ? "" : ", ") + config.vessels[h.vessel].id;
  }
  if (names.empty()) return "";
  return "trex: " + config.origin + ": vessels " + names + " have channels outside the pixel " +
         "volume SizeX " + std::to_string(config.size_x) + " x SizeY " +
         std::to_string(config.size_y) + " (x = xz / 16, or y, too large, or below 0 and " +
         "wrapped as the reference's 16-bit arithmetic does); events there are rejected and " +
         "counted as events.rejected.pixel";
}

}  // namespace efu::trex
