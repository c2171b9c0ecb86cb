// Which hybrid a VMM3a readout comes from (docs/plugins.md "VMM3a detectors"): the readout names
// its fibre, FEN and VMM; ring = fibre / 2 and hybrid = VMM / 2 (two VMMs per hybrid), and the
// instrument config gives each (ring, FEN, hybrid) it uses an index in the plugin's own tables
// (multiblade: the cassette; NMX and TREX: the Config[] entry). A readout of anything else is
// rejected, and why says which counter it lands in:
//   kFiber  the ring is above the facility's 10, or the config uses no FEN of it;
//   kFen    the FEN is above 13, or the config uses no hybrid of it;
//   kVmm    the hybrid is above 10, or the config does not use it.
// The tables are arrays inside the object (3.4 KB): a lookup is three loads with no pointer to
// follow.
#pragma once

#include <array>
#include <cstdint>

namespace efu::vmm3a {

// The facility's limits: logical rings 0..10, FENs 0..13 per ring, hybrids 0..10 per FEN.
inline constexpr std::uint32_t kMaxRing = 10;
inline constexpr std::uint32_t kMaxFen = 13;
inline constexpr std::uint32_t kMaxHybrid = 10;

/// The table index of one VMM: two per hybrid index, by the VMM's parity (its ASIC on the
/// hybrid). The calibration's tables are indexed by it.
constexpr std::uint32_t vmm_index(std::uint32_t hybrid, std::uint32_t vmm) noexcept {
  return hybrid * 2 + (vmm & 1U);
}

enum class HybridStatus : std::uint8_t { kOk, kFiber, kFen, kVmm };

class HybridMap {
 public:
  /// The index given to (ring, fen, hybrid), or -1. Load time (the config reader's checks).
  int index_of(std::uint32_t ring, std::uint32_t fen, std::uint32_t hybrid) const noexcept {
    if (ring > kMaxRing || fen > kMaxFen || hybrid > kMaxHybrid) return -1;
    return table_[slot(ring, fen, hybrid)];
  }

  /// Gives (ring, fen, hybrid) the table index `index` (0..32767). The caller has checked the
  /// limits and that index_of() is -1: the config reader names the entry when either fails.
  void add(std::uint32_t ring, std::uint32_t fen, std::uint32_t hybrid,
           std::uint16_t index) noexcept {
    table_[slot(ring, fen, hybrid)] = static_cast<std::int16_t>(index);
    ring_used_[ring] = 1;
    fen_used_[ring * (kMaxFen + 1) + fen] = 1;
  }

  /// The readout's hybrid index, or why it has none. Hot path.
  HybridStatus find(std::uint8_t fiber, std::uint8_t fen, std::uint8_t vmm,
                    std::uint32_t& index) const noexcept {
    const std::uint32_t ring = fiber >> 1U;
    if (ring > kMaxRing || ring_used_[ring] == 0) return HybridStatus::kFiber;
    if (fen > kMaxFen) return HybridStatus::kFen;
    const std::uint32_t fen_index = ring * (kMaxFen + 1) + fen;
    if (fen_used_[fen_index] == 0) return HybridStatus::kFen;
    const std::uint32_t hybrid = vmm >> 1U;
    if (hybrid > kMaxHybrid) return HybridStatus::kVmm;
    const std::int16_t found = table_[fen_index * (kMaxHybrid + 1) + hybrid];
    if (found < 0) return HybridStatus::kVmm;
    index = static_cast<std::uint32_t>(found);
    return HybridStatus::kOk;
  }

 private:
  static constexpr std::uint32_t slot(std::uint32_t ring, std::uint32_t fen,
                                      std::uint32_t hybrid) noexcept {
    return (ring * (kMaxFen + 1) + fen) * (kMaxHybrid + 1) + hybrid;
  }
  static constexpr std::uint32_t kSlots = (kMaxRing + 1) * (kMaxFen + 1) * (kMaxHybrid + 1);

  std::array<std::uint8_t, kMaxRing + 1> ring_used_{};
  std::array<std::uint8_t, (kMaxRing + 1) * (kMaxFen + 1)> fen_used_{};
  std::array<std::int16_t, kSlots> table_ = [] {
    std::array<std::int16_t, kSlots> t{};
    t.fill(-1);
    return t;
  }();
};

}  // namespace efu::vmm3a
