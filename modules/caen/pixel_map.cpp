#include "pixel_map.h"

#include <string>

#include "efu/errors.h"

namespace efu::caen {

std::uint32_t source_count(const CaenConfig& config) noexcept {
  return has_own_sources(config.instrument) ? kBifrostTripletsPerRing * (config.max_ring + 1) : 1;
}

std::string bifrost_source_name(std::uint32_t index) {
  const std::uint32_t ring = index / kBifrostTripletsPerRing;
  const std::uint32_t group = index % kBifrostTripletsPerRing;
  const std::uint32_t arc = group / kBifrostArcTripletsPerRing;
  const std::uint32_t triplet =
      group % kBifrostArcTripletsPerRing + kBifrostArcTripletsPerRing * ring;
  return "arc=" + std::to_string(arc) + ";triplet=" + std::to_string(triplet);
}

PixelMap::PixelMap(const CaenConfig& config, const Calibration& calibration,
                   std::int64_t amplitude_threshold)
    : config_(config), calibration_(calibration), threshold_(amplitude_threshold) {
  // The formulas index units by the calibration: LoKI's tubes have 7 straws, BIFROST's
  // triplets 3 tubes. (CSPEC's and MIRACLES' pixels do not use the calibration.)
  std::uint32_t want_units = 0;
  if (config.instrument == Instrument::kLoki) want_units = kLokiStrawsPerGroup;
  if (config.instrument == Instrument::kBifrost) want_units = kBifrostTubesPerTriplet;
  if (want_units != 0 && calibration.group_size() != want_units) {
    throw ConfigError("caen calibration: groupsize " + std::to_string(calibration.group_size()) +
                      " does not fit " + instrument_name(config.instrument) + " ('" + config.path +
                      "'); expected " + std::to_string(want_units));
  }
  switch (config.instrument) {
    case Instrument::kLoki: {
      loki_grid_ =
          ess::LogicalGeometry{config.resolution, config.total_groups * kLokiStrawsPerGroup};
      pixel_count_ = loki_grid_.pixel_count();
      // Every (ring, FEN, local group) slot, by the formulas above loki_prepare() in
      // pixel_map.h:
      //   global group = YOffset/7 + (group%4)·GroupsN + (FENOffset+FEN)·2 + group/4
      //   row          = YOffset + (group%4)·GroupsN·7 + (FENOffset+FEN)·14 + (group/4)·7
      loki_slots_.assign(loki_slot_index(kMaxRings, 0, 0), LokiSlot{kLokiNoRing, 0});
      for (std::uint32_t ring = 0; ring < kMaxRings; ++ring) {
        const LokiRing& rc = config.rings[ring];
        if (!rc.configured) continue;
        const LokiBank& bank = config.banks[rc.bank];
        for (std::uint32_t fen = 0; fen <= kMaxFen; ++fen) {
          for (std::uint32_t group = 0; group < kLokiGroupsPerFen; ++group) {
            LokiSlot& slot = loki_slots_[loki_slot_index(ring, fen, group)];
            if (fen >= rc.fens) {
              slot = LokiSlot{kLokiNoFen, 0};
              continue;
            }
            const std::uint32_t layer = group % kLokiLayers;
            const std::uint32_t half = group / kLokiLayers;
            const std::uint32_t fen2 = (rc.fen_offset + fen) * 2U;
            slot.group = bank.y_offset / kLokiStrawsPerGroup + layer * bank.groups_n + fen2 + half;
            slot.row = bank.y_offset + layer * bank.groups_n * kLokiStrawsPerGroup +
                       fen2 * kLokiStrawsPerGroup + half * kLokiStrawsPerGroup;
          }
        }
      }
      break;
    }
    case Instrument::kBifrost:
      pixel_count_ = kBifrostGrid.pixel_count();
      break;
    case Instrument::kCspec:
      pixel_count_ = kCspecGrid.pixel_count();
      break;
    case Instrument::kMiracles:
      pixel_count_ = kMiraclesGrid.pixel_count();
      break;
  }
}

}  // namespace efu::caen
