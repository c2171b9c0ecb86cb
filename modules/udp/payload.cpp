#include "payload.h"

#include <bit>
#include <cstring>

namespace efu::udp {
namespace {

std::uint64_t to_little_endian(std::uint64_t v) noexcept {
  if constexpr (std::endian::native == std::endian::big) return __builtin_bswap64(v);
  return v;
}

}  // namespace

std::optional<SeqFormat> parse_seq_format(std::string_view text) noexcept {
  if (text == "efu64") return SeqFormat::kEfu64;
  if (text == "udptx32") return SeqFormat::kUdptx32;
  return std::nullopt;
}

const char* seq_format_name(SeqFormat format) noexcept {
  return format == SeqFormat::kEfu64 ? "efu64" : "udptx32";
}

std::uint64_t read_seq(SeqFormat format, const std::uint8_t* data) noexcept {
  if (format == SeqFormat::kEfu64) {
    std::uint64_t v = 0;
    std::memcpy(&v, data, sizeof v);
    return to_little_endian(v);
  }
  std::uint32_t v = 0;
  std::memcpy(&v, data, sizeof v);  // host order, as udptx writes it
  return v;
}

void write_seq(SeqFormat format, std::uint64_t seq, std::uint8_t* data) noexcept {
  if (format == SeqFormat::kEfu64) {
    const std::uint64_t v = to_little_endian(seq);
    std::memcpy(data, &v, sizeof v);
    return;
  }
  const auto v = static_cast<std::uint32_t>(seq);
  std::memcpy(data, &v, sizeof v);
}

void write_filler(SeqFormat format, std::uint64_t seq, std::uint8_t* data,
                  std::size_t size) noexcept {
  std::size_t offset = seq_size(format);
  if (format == SeqFormat::kUdptx32) seq = static_cast<std::uint32_t>(seq);
  std::uint64_t word = seq * kFillerMul + kFillerStep;
  for (; offset + 8 <= size; offset += 8, word += kFillerStep) {
    const std::uint64_t v = to_little_endian(word);
    std::memcpy(data + offset, &v, 8);
  }
  if (offset < size) {
    const std::uint64_t v = to_little_endian(word);
    std::memcpy(data + offset, &v, size - offset);
  }
}

bool filler_matches(SeqFormat format, std::uint64_t seq, const std::uint8_t* data,
                    std::size_t size) noexcept {
  std::size_t offset = seq_size(format);
  if (format == SeqFormat::kUdptx32) seq = static_cast<std::uint32_t>(seq);
  std::uint64_t word = seq * kFillerMul + kFillerStep;
  std::uint64_t diff = 0;  // accumulate instead of branching per word
  for (; offset + 8 <= size; offset += 8, word += kFillerStep) {
    std::uint64_t v = 0;
    std::memcpy(&v, data + offset, 8);
    diff |= v ^ to_little_endian(word);
  }
  if (offset < size) {
    std::uint64_t v = 0;
    std::uint64_t expected = 0;
    const std::uint64_t w = to_little_endian(word);
    std::memcpy(&v, data + offset, size - offset);
    std::memcpy(&expected, &w, size - offset);
    diff |= v ^ expected;
  }
  return diff == 0;
}

}  // namespace efu::udp
