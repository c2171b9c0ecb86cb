// The Multi-Blade instruments' geometry, read from the facility's instrument config file (Freia,
// Estia, AMOR, TBL-MB; docs/multiblade.md "Instrument config"): which VMM3a channel is which wire
// or strip of which cassette, the per-VMM ADC thresholds, the clustering parameters of the file,
// and the ESS logical-geometry pixel numbering of the instrument.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "efu/ess/logical_geometry.h"
#include "efu/vmm3a/hit.h"
#include "efu/vmm3a/hybrid_calibration.h"
#include "efu/vmm3a/hybrid_map.h"
#include "efu/vmm3a/readout.h"

namespace efu {
class JsonDocument;
class JsonNode;
}  // namespace efu

namespace efu::multiblade {

/// The planes as the SDK's hits number them (vmm3a::Hit::plane): unscoped, so a Plane is a hit's
/// plane byte without a cast.
enum Plane : std::uint8_t { kWire = 0, kStrip = 1 };

/// The instrument selects the ESS type byte and, through InstrumentGeometry, the pixel rules.
enum class Instrument : std::uint8_t { kFreia, kEstia, kAmor, kTblMb };

/// The ESS header type byte of each instrument (the facility's DetectorType table).
constexpr std::uint8_t detector_type(Instrument i) noexcept {
  switch (i) {
    case Instrument::kEstia:
      return 0x4C;
    case Instrument::kTblMb:
      return 0x49;
    case Instrument::kFreia:
    case Instrument::kAmor:
      break;
  }
  return 0x48;
}
const char* instrument_name(Instrument i) noexcept;

inline constexpr std::uint32_t kChannelsPerVmm = vmm3a::kChannelsPerVmm;
inline constexpr std::uint32_t kWiresPerCassette = 32;
inline constexpr std::uint32_t kStripsPerCassette = 64;
// The facility's limits (efu/vmm3a/hybrid_map.h): rings 0..10, FENs 0..13, hybrids 0..10.
using vmm3a::kMaxFen;
using vmm3a::kMaxHybrid;
using vmm3a::kMaxRing;
inline constexpr std::size_t kHybridIdLength = vmm3a::kHybridIdLength;

/// A readout's place in the detector (the SDK's ChannelMapping): unit = the cassette (its index in
/// the config file's Config[]), coordinate = the instrument-wide x or y (already the facility's,
/// so clusters and pixels need no further mapping), threshold = this VMM's, vmm_index = cassette
/// * 2 + (vmm & 1).
using vmm3a::ChannelMapping;
using vmm3a::MapStatus;
static_assert(static_cast<int>(MapStatus::kFiber) == static_cast<int>(vmm3a::HybridStatus::kFiber) &&
              static_cast<int>(MapStatus::kFen) == static_cast<int>(vmm3a::HybridStatus::kFen) &&
              static_cast<int>(MapStatus::kVmm) == static_cast<int>(vmm3a::HybridStatus::kVmm));

/// One Config[] entry of the file.
struct CassetteConfig {
  std::uint32_t cassette_number;
  std::uint8_t ring;
  std::uint8_t fen;
  std::uint8_t hybrid;
  std::uint16_t thresholds[2];  // by VMM of the hybrid (vmm & 1), as Thresholds[0][0], [1][0]
  std::string hybrid_id;
  std::uint16_t wire_offset;   // instrument-wide coordinate of the cassette's wire 0
  std::uint16_t strip_offset;  // ... and of its strip 0
};

class Geometry {
 public:
  /// Throws ConfigError naming the file, the JSON path and what was expected.
  static Geometry from_file(const std::string& path);
  /// `origin` names the source in error messages.
  static Geometry from_json(std::string_view text, const std::string& origin);

  Instrument instrument() const noexcept { return instrument_; }
  /// The InstrumentGeometry of the file: TBL-MB files say "AMOR".
  Instrument pixel_rules() const noexcept { return rules_; }
  std::uint32_t cassettes() const noexcept { return static_cast<std::uint32_t>(cassettes_.size()); }
  const CassetteConfig& cassette(std::uint32_t index) const noexcept { return cassettes_[index]; }
  std::uint32_t wire_channel_offset() const noexcept { return wire_ch_offset_; }
  std::uint64_t max_pulse_time_ns() const noexcept { return max_pulse_time_ns_; }
  std::uint16_t max_gap_wire() const noexcept { return max_gap_wire_; }
  std::uint16_t max_gap_strip() const noexcept { return max_gap_strip_; }
  /// 0 if the file does not set them (the plugin's options apply then).
  std::uint64_t max_clustering_time_gap_ns() const noexcept { return clustering_gap_ns_; }
  std::uint64_t max_matching_time_gap_ns() const noexcept { return matching_gap_ns_; }
  const ess::LogicalGeometry& logical() const noexcept { return logical_; }
  /// How errors name this file: "multiblade instrument config '<path>'".
  const std::string& origin() const noexcept { return origin_; }

  /// Pixel of an event at wire coordinate `wire` and strip coordinate `strip` (instrument-wide),
  /// 0 if outside the logical geometry. Freia, AMOR, TBL-MB: x = strip, y = wire; Estia: x =
  /// wire, y = strip.
  std::uint32_t pixel(std::uint32_t wire, std::uint32_t strip) const noexcept {
    return rules_ == Instrument::kEstia ? logical_.pixel(wire, strip) : logical_.pixel(strip, wire);
  }

  /// The VMM (0..21) that reads `plane` of cassette `index`.
  std::uint8_t vmm_of(std::uint32_t index, Plane plane) const noexcept {
    const auto asic =
        static_cast<std::uint8_t>(plane == Plane::kWire ? wire_vmm_parity_ : 1U - wire_vmm_parity_);
    return static_cast<std::uint8_t>(cassettes_[index].hybrid * 2 + asic);
  }
  /// Channel of local wire 0..31 or strip 0..63 of a cassette (inverse of map(); generators).
  std::uint8_t channel_of(Plane plane, std::uint32_t local) const noexcept {
    if (plane == Plane::kStrip) return static_cast<std::uint8_t>(kStripsPerCassette - 1 - local);
    return static_cast<std::uint8_t>(wires_reversed_
                                         ? wire_ch_offset_ + kWiresPerCassette - 1 - local
                                         : wire_ch_offset_ + local);
  }
  /// Instrument-wide coordinate of local wire/strip `local` of cassette `index`.
  std::uint32_t coordinate_of(std::uint32_t index, Plane plane,
                              std::uint32_t local) const noexcept {
    const CassetteConfig& c = cassettes_[index];
    return (plane == Plane::kWire ? c.wire_offset : c.strip_offset) + local;
  }

  MapStatus map(std::uint8_t fiber, std::uint8_t fen, std::uint8_t vmm, std::uint8_t channel,
                ChannelMapping& out) const noexcept {
    std::uint32_t index = 0;
    const vmm3a::HybridStatus found = hybrids_.find(fiber, fen, vmm, index);
    if (found != vmm3a::HybridStatus::kOk) return static_cast<MapStatus>(found);
    const CassetteConfig& c = cassettes_[index];
    const std::uint32_t asic = vmm & 1U;
    // Wire or strip is a coin toss when readouts arrive shuffled: both coordinates are computed
    // and one is selected, so the choice costs no mispredicted branch.
    const bool wire = asic == wire_vmm_parity_;
    const std::uint32_t local = channel - wire_ch_offset_;  // wraps for channel < offset
    const std::uint32_t wire_coordinate =
        c.wire_offset + (wires_reversed_ ? kWiresPerCassette - 1 - local : local);
    const std::uint32_t strip_coordinate = c.strip_offset + kStripsPerCassette - 1 - channel;
    const auto w = static_cast<std::uint32_t>(wire);
    const std::uint32_t select = 0U - w;  // all ones for a wire
    // One comparison for either plane (a wire's local index < 32, a strip's channel < 64), so
    // the compiler cannot split it into a branch per plane.
    const std::uint32_t value = channel ^ ((local ^ channel) & select);
    const std::uint32_t limit =
        kStripsPerCassette ^ ((kWiresPerCassette ^ kStripsPerCassette) & select);
    if (value >= limit) return MapStatus::kChannel;
    out.plane = static_cast<std::uint8_t>(w ^ 1U);  // kWire = 0, kStrip = 1
    out.unit = static_cast<std::uint16_t>(index);
    out.coordinate = static_cast<std::uint16_t>(strip_coordinate ^
                                                ((wire_coordinate ^ strip_coordinate) & select));
    out.threshold = c.thresholds[asic];
    out.vmm_index = static_cast<std::uint16_t>(vmm3a::vmm_index(index, asic));
    return MapStatus::kOk;
  }

  /// Index of the cassette whose HybridId is `id`, or -1.
  int find_hybrid(std::string_view id) const noexcept;

  /// Runs the file as `instrument` (the ESS type byte): TBL-MB uses the AMOR InstrumentGeometry.
  /// Throws ConfigError if the file's InstrumentGeometry is not the instrument's.
  void select_instrument(Instrument instrument);

 private:
  static Geometry load(const JsonDocument& doc);
  /// Checks that `c` (read from `entry`) uses a cassette number and hybrid no entry before used,
  /// then adds it. `cassette_seen` is indexed by cassette number.
  void add_cassette(const JsonNode& entry, CassetteConfig c,
                    std::vector<std::uint8_t>& cassette_seen);

  std::string origin_;
  Instrument instrument_ = Instrument::kFreia;
  Instrument rules_ = Instrument::kFreia;
  ess::LogicalGeometry logical_{64, 1024};
  std::uint32_t wire_ch_offset_ = 16;
  std::uint32_t wire_vmm_parity_ = 0;  // VMMs with (vmm & 1) == this read wires
  bool wires_reversed_ = true;         // wire coordinate = offset + last channel - channel
  std::uint64_t max_pulse_time_ns_ = 0;
  std::uint16_t max_gap_wire_ = 0;
  std::uint16_t max_gap_strip_ = 0;
  std::uint64_t clustering_gap_ns_ = 0;
  std::uint64_t matching_gap_ns_ = 0;
  std::vector<CassetteConfig> cassettes_;
  vmm3a::HybridMap hybrids_;  // (ring, FEN, hybrid) -> index in cassettes_
};

}  // namespace efu::multiblade
