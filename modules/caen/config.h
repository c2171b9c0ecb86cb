// The instrument config file of a CAEN charge-division detector, in the facility's format
// (docs/caen.md): the `Detector` field picks LoKI, BIFROST, CSPEC or MIRACLES; the common
// fields (Resolution, MaxPulseTimeNS, MaxTOFNS, MaxRing, MaxFEN, MaxGroup, MaxAmpl,
// ReadoutConstDelayNS) and LoKI's Banks[] and Config[] are read here, once, at start-up.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace efu::caen {

enum class Instrument : std::uint8_t { kLoki, kBifrost, kCspec, kMiracles };

/// The ESS header's detector type byte of each instrument (the reference's DetectorType.h).
inline constexpr std::uint8_t kTypeLoki = 0x30;
inline constexpr std::uint8_t kTypeBifrost = 0x34;
inline constexpr std::uint8_t kTypeMiracles = 0x38;
inline constexpr std::uint8_t kTypeCspec = 0x3C;

std::uint8_t detector_type(Instrument instrument) noexcept;
/// "loki", "bifrost", "cspec", "miracles": the `Detector` value and the calibration's
/// `instrument` value.
const char* instrument_name(Instrument instrument) noexcept;
/// LoKI's amplitudes are signed 16-bit values; the other instruments' are unsigned.
inline bool signed_amplitudes(Instrument instrument) noexcept {
  return instrument == Instrument::kLoki;
}

inline constexpr std::uint32_t kMaxRings = 12;  // logical rings 0..11 (fibre / 2)

/// LoKI: a bank of tubes, numbered along y from YOffset (docs/caen.md).
struct LokiBank {
  bool configured = false;
  std::uint32_t groups_n = 0;  // GroupsN: tube groups per layer
  std::uint32_t y_offset = 0;  // YOffset: first straw row of the bank
  std::string id;
};

/// LoKI: what one ring reads out.
struct LokiRing {
  bool configured = false;
  std::uint32_t bank = 0;
  std::uint32_t fens = 0;        // FENs: FEN ids 0..fens-1 are in use
  std::uint32_t fen_offset = 0;  // FENOffset: FENs of this bank on earlier rings
};

inline constexpr std::uint32_t kLokiBanks = 9;
inline constexpr std::uint32_t kLokiStrawsPerGroup = 7;  // straws ("units") per tube
inline constexpr std::uint32_t kLokiLayers = 4;          // local group % 4
inline constexpr std::uint32_t kLokiGroupsPerFen = 8;    // 2 tubes per layer per FEN

struct CaenConfig {
  Instrument instrument = Instrument::kLoki;
  std::string path;
  std::uint32_t resolution = 1;
  std::uint64_t max_pulse_time_ns = 5ULL * 71'428'571;  // the reference's defaults
  std::uint64_t max_tof_ns = 20ULL * 71'428'571;
  std::int64_t readout_delay_ns = 0;  // ReadoutConstDelayNS: added to every readout time
  std::uint32_t max_ring = kMaxRings - 1;
  std::uint32_t max_fen = 0;
  std::uint32_t max_group = 0;
  std::int64_t max_amplitude = 0x7FFF'FFFF;  // MaxAmpl: a larger amplitude sum is rejected

  // LoKI only.
  std::uint32_t groups_z = 0;
  std::uint32_t total_groups = 0;  // sum over banks of GroupsN * GroupsZ
  std::array<LokiBank, kLokiBanks> banks{};
  std::array<LokiRing, kMaxRings> rings{};

  /// Throws ConfigError naming the file, the JSON path and what was expected.
  static CaenConfig from_file(const std::string& path);
  static CaenConfig from_text(std::string_view text, const std::string& origin);
};

}  // namespace efu::caen
