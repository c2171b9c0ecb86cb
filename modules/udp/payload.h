// The link-test datagram layout (docs/architecture.md §5.4): a sequence number at offset 0, then
// filler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace efu::udp {

enum class SeqFormat : std::uint8_t {
  kEfu64,    // efu-udpgen: 64-bit little-endian, first datagram 0
  kUdptx32,  // udptx (docs/architecture.md §9): 32-bit host order, first datagram 1
};

/// Parses "efu64" / "udptx32"; nullopt for anything else.
std::optional<SeqFormat> parse_seq_format(std::string_view text) noexcept;
const char* seq_format_name(SeqFormat format) noexcept;

/// Bytes of the sequence field: a datagram shorter than this is a runt.
constexpr std::uint32_t seq_size(SeqFormat format) noexcept {
  return format == SeqFormat::kEfu64 ? 8 : 4;
}
/// The sequence number of the first datagram a sender emits.
constexpr std::uint64_t seq_start(SeqFormat format) noexcept {
  return format == SeqFormat::kEfu64 ? 0 : 1;
}

/// Reads the sequence field; the caller has checked size >= seq_size(format).
std::uint64_t read_seq(SeqFormat format, const std::uint8_t* data) noexcept;
/// Writes the sequence field (the 32-bit format keeps the low 32 bits).
void write_seq(SeqFormat format, std::uint64_t seq, std::uint8_t* data) noexcept;

/// The filler after the sequence field. Word k (little-endian, at offset seq_size + 8k, the last
/// one cut short to fit) is seq * kFillerMul + (k + 1) * kFillerStep: one add per 8 bytes to
/// write or check, and a datagram carrying another datagram's filler (or a shifted or zeroed
/// one) fails the check. For the 32-bit format `seq` is the 32-bit value on the wire.
inline constexpr std::uint64_t kFillerMul = 0x9E3779B97F4A7C15ULL;
inline constexpr std::uint64_t kFillerStep = 0xD1B54A32D192ED03ULL;

void write_filler(SeqFormat format, std::uint64_t seq, std::uint8_t* data,
                  std::size_t size) noexcept;
/// True if bytes [seq_size, size) hold the filler of `seq`.
bool filler_matches(SeqFormat format, std::uint64_t seq, const std::uint8_t* data,
                    std::size_t size) noexcept;

}  // namespace efu::udp
