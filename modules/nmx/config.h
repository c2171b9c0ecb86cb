// NMX's instrument config, read from the facility's file unchanged (nmx.json, mininmx.json,
// nmx_p0.json, nmx_split.json; docs/nmx.md "Instrument config"), and the channel map the SDK's
// VMM3a readout parser runs on (efu/vmm3a/readout_parser.h): which strip of which plane of which
// panel a (fibre, FEN, VMM, channel) reads, and the ADC threshold.
//
// NMX is four GEM panels (the file's NumPanels), each with an x and a y plane of strips. A hybrid
// reads 128 neighbouring strips of one plane of one panel, two VMMs of 64 channels each, from the
// strip coordinate Offset on; the panels' coordinates are instrument-wide already (panel 1's x
// strips start at 640 in nmx.json), so the pixel of an event needs no per-panel offset.
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

namespace efu::nmx {

/// The ESS header type byte of NMX (the facility's DetectorType table: NMX = 0x44).
inline constexpr std::uint8_t kNmxType = 0x44;

/// The planes as the SDK's hits number them (vmm3a::Hit::plane), and as the file's Plane does.
enum Plane : std::uint8_t { kX = 0, kY = 1 };

inline constexpr std::uint32_t kStripsPerVmm = vmm3a::kChannelsPerVmm;         // 64
inline constexpr std::uint32_t kStripsPerHybrid = 2 * vmm3a::kChannelsPerVmm;  // 128
// The facility's panel count when a file does not give NumPanels (Config.h), and the most efu
// accepts (the reference's overlap check has room for 4; more would index past it).
inline constexpr std::uint32_t kDefaultPanels = 4;
inline constexpr std::uint32_t kMaxPanels = 16;

/// The strip coordinate of `channel` of the hybrid's VMM `asic` (vmm & 1), as the reference's
/// NMXGeometry::coord():
///   normal:   Offset + 64 * asic       + channel
///   reversed: Offset + 64 * (1 - asic) + (63 - channel)
/// so either way the hybrid covers Offset .. Offset + 127, once each.
constexpr std::uint32_t strip_coordinate(std::uint32_t offset, bool reversed, std::uint32_t asic,
                                         std::uint32_t channel) noexcept {
  return reversed ? offset + kStripsPerVmm * (1U - asic) + (kStripsPerVmm - 1U - channel)
                  : offset + kStripsPerVmm * asic + channel;
}

/// One Config[] entry of the file.
struct HybridConfig {
  std::uint8_t ring;
  std::uint8_t fen;
  std::uint8_t hybrid;
  std::uint8_t plane;  // kX or kY
  std::uint8_t panel;
  bool reversed;  // ReversedChannels
  std::uint16_t offset;
  std::string hybrid_id;
};

/// The file's event-forming parameters, with the reference's defaults (nmx/geometry/Config.h).
struct EventParameters {
  std::uint16_t max_span[2] = {10, 10};  // MaxSpanX, MaxSpanY: larger spans are rejected
  std::uint16_t min_span[2] = {1, 1};    // MinSpanX, MinSpanY: smaller spans are rejected
  std::uint16_t max_gap[2] = {10, 10};   // MaxGapX, MaxGapY: read, unused (as the reference)
  std::uint64_t max_time_span_ns = 500;  // MaxTimeSpan: a plane's end - start + 1 above it
  std::uint64_t max_matching_time_gap_ns = 500;
  std::uint64_t max_clustering_time_gap_ns = 500;
  bool split_multi_events = false;
  // Stored as the reference stores them (float), multiplied as it does (in double).
  float split_coefficient_low = 0.8F;
  float split_coefficient_high = 1.2F;
};

class Config {
 public:
  /// Throws ConfigError naming the file, the JSON path and what was expected.
  static Config from_file(const std::string& path);
  /// `origin` names the source in error messages.
  static Config from_json(std::string_view text, const std::string& origin);

  std::uint32_t panels() const noexcept { return panels_; }
  std::uint32_t size_x() const noexcept { return logical_.nx; }
  std::uint32_t size_y() const noexcept { return logical_.ny; }
  std::uint16_t default_min_adc() const noexcept { return default_min_adc_; }
  std::uint64_t max_pulse_time_ns() const noexcept { return max_pulse_time_ns_; }
  const EventParameters& events() const noexcept { return events_; }
  std::uint32_t hybrids() const noexcept { return static_cast<std::uint32_t>(hybrids_.size()); }
  const HybridConfig& hybrid(std::uint32_t index) const noexcept { return hybrids_[index]; }
  const ess::LogicalGeometry& logical() const noexcept { return logical_; }
  /// How errors name this file: "nmx instrument config '<path>'".
  const std::string& origin() const noexcept { return origin_; }

  /// The ESS logical-geometry pixel of an event at strip x, strip y (the reference's
  /// ESSGeometry::pixel2D on SizeX × SizeY): 1 + x + SizeX * y, 0 outside.
  std::uint32_t pixel(std::uint32_t x, std::uint32_t y) const noexcept {
    return logical_.pixel(x, y);
  }

  /// The readout parser's channel map: unit = the panel, plane = the hybrid's Plane, coordinate
  /// = strip_coordinate(), threshold = DefaultMinADC, vmm_index = (Config[] index) * 2 + asic.
  vmm3a::MapStatus map(std::uint8_t fiber, std::uint8_t fen, std::uint8_t vmm, std::uint8_t channel,
                       vmm3a::ChannelMapping& out) const noexcept {
    std::uint32_t index = 0;
    const vmm3a::HybridStatus found = hybrid_map_.find(fiber, fen, vmm, index);
    if (found != vmm3a::HybridStatus::kOk) return static_cast<vmm3a::MapStatus>(found);
    if (channel >= kStripsPerVmm) return vmm3a::MapStatus::kChannel;
    const Wiring& w = wiring_[index];
    const std::uint32_t asic = vmm & 1U;
    // strip_coordinate() without a branch on the order, which is a coin toss when readouts
    // arrive shuffled: reversed, 64 * (1 - asic) + 63 - channel = 127 - (64 * asic + channel),
    // and 127 - local = local ^ 127 for local in 0..127.
    const std::uint32_t local = asic * kStripsPerVmm + channel;
    out.unit = w.panel;
    out.plane = w.plane;
    out.coordinate = static_cast<std::uint16_t>(w.offset + (local ^ w.reverse_mask));
    out.threshold = default_min_adc_;
    out.vmm_index = static_cast<std::uint16_t>(vmm3a::vmm_index(index, asic));
    return vmm3a::MapStatus::kOk;
  }

  /// The (VMM, channel) of strip `coordinate` of `plane` of `panel`, and the Config[] index of
  /// its hybrid; false if no hybrid reads it (generators and tests: the inverse of map()).
  struct Channel {
    std::uint32_t hybrid_index;
    std::uint8_t vmm;
    std::uint8_t channel;
  };
  bool channel_of(std::uint32_t panel, std::uint32_t plane, std::uint32_t coordinate,
                  Channel& out) const noexcept;

  /// The hybrids as the SDK's calibration list (Config[] order; named "ring R FEN F hybrid H").
  vmm3a::Hybrids calibration_hybrids() const;

 private:
  static Config load(const JsonDocument& doc);
  void add_hybrid(const JsonNode& entry, HybridConfig h);

  std::string origin_;
  std::uint32_t panels_ = kDefaultPanels;
  std::uint16_t default_min_adc_ = 50;
  std::uint64_t max_pulse_time_ns_ = 0;
  ess::LogicalGeometry logical_{1280, 1280};
  EventParameters events_;
  /// What map() needs of a hybrid, 8 bytes apart (HybridConfig carries its HybridId string).
  struct Wiring {
    std::uint16_t offset;
    std::uint8_t reverse_mask;  // 127 when ReversedChannels, else 0
    std::uint8_t plane;
    std::uint8_t panel;
  };

  std::vector<HybridConfig> hybrids_;
  std::vector<Wiring> wiring_;   // by Config[] index, as hybrids_
  vmm3a::HybridMap hybrid_map_;  // (ring, FEN, hybrid) -> index in hybrids_
};

}  // namespace efu::nmx
