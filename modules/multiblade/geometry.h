// Detector geometry of a Multi-Blade-like detector: which VMM3a channel is which wire or strip of
// which cassette, and the pixel numbering. Loaded once from a JSON file (docs/multiblade.md).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace efu::multiblade {

enum class Plane : std::uint8_t { kWire = 0, kStrip = 1 };

inline constexpr std::uint32_t kChannelsPerVmm = 64;
inline constexpr std::uint8_t kNoCassette = 0xFF;
// Limits that keep the lookup table small; far above what one detector needs.
inline constexpr std::uint32_t kMaxFibers = 32;
inline constexpr std::uint32_t kMaxFens = 16;
inline constexpr std::uint32_t kMaxVmms = 16;
inline constexpr std::uint32_t kMaxCassettes = 254;

struct ChannelMapping {
  std::uint8_t cassette;  // kNoCassette: channel not connected
  Plane plane;
  std::uint16_t coordinate;  // wire or strip index within the cassette
};

enum class MapStatus : std::uint8_t { kOk, kFiber, kFen, kVmm, kChannel };

/// Where one plane of a cassette is read out: its channels are first_channel .. first_channel +
/// count - 1 of one VMM, coordinate = channel - first_channel.
struct PlaneLocation {
  std::uint8_t fiber;
  std::uint8_t fen;
  std::uint8_t vmm;
  std::uint8_t first_channel;
};

class Geometry {
 public:
  /// Throws ConfigError naming the file, the key and what was expected.
  static Geometry from_file(const std::string& path);
  /// `origin` names the source in error messages.
  static Geometry from_json(std::string_view text, const std::string& origin);

  std::uint32_t cassettes() const noexcept { return static_cast<std::uint32_t>(locations_.size()); }
  std::uint32_t wires() const noexcept { return wires_; }
  std::uint32_t strips() const noexcept { return strips_; }
  std::uint32_t pixel_count() const noexcept { return cassettes() * wires_ * strips_; }
  const std::string& name() const noexcept { return name_; }

  /// Pixels count from 1, strips along x, cassettes stacked along y (docs/multiblade.md):
  /// pixel = 1 + strip + (cassette * wires + wire) * strips.
  std::uint32_t pixel(std::uint32_t cassette, std::uint32_t strip,
                      std::uint32_t wire) const noexcept {
    return 1 + strip + (cassette * wires_ + wire) * strips_;
  }

  const PlaneLocation& location(std::uint32_t cassette, Plane plane) const noexcept {
    return locations_[cassette][static_cast<unsigned>(plane)];
  }

  MapStatus map(std::uint8_t fiber, std::uint8_t fen, std::uint8_t vmm, std::uint8_t channel,
                ChannelMapping& out) const noexcept {
    if (fiber >= fibers_) return MapStatus::kFiber;
    const std::uint32_t fen_index = fiber * fens_ + fen;
    if (fen >= fens_ || fen_used_[fen_index] == 0) return MapStatus::kFen;
    const std::uint32_t vmm_index = fen_index * vmms_ + vmm;
    if (vmm >= vmms_ || vmm_used_[vmm_index] == 0) return MapStatus::kVmm;
    if (channel >= kChannelsPerVmm) return MapStatus::kChannel;
    out = table_[vmm_index * kChannelsPerVmm + channel];
    return out.cassette == kNoCassette ? MapStatus::kChannel : MapStatus::kOk;
  }

 private:
  std::string name_;
  std::uint32_t wires_ = 0;
  std::uint32_t strips_ = 0;
  std::uint32_t fibers_ = 0;  // table dimensions: highest used value + 1
  std::uint32_t fens_ = 0;
  std::uint32_t vmms_ = 0;
  std::vector<std::uint8_t> fen_used_;
  std::vector<std::uint8_t> vmm_used_;
  std::vector<ChannelMapping> table_;
  std::vector<std::array<PlaneLocation, 2>> locations_;
};

}  // namespace efu::multiblade
