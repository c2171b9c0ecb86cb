// Walking the readout blocks of an ESS packet (docs/architecture.md §5.1): after the header
// comes a sequence of blocks, each starting `fiber u8, fen u8, data_length u16`. Every detector
// family walks them the same way; the plugin only decodes the block it is handed.
//
//   ess::ReadoutBlockWalker walker(counters, /*fixed_size=*/20);   // VMM3a: 20-byte readouts
//   walker.walk(payload, payload_size, [&](const ess::ReadoutBlock& b) { decode(b.data); });
//
// Framing rules (the counters are <prefix>received, <prefix>errors.length and
// <prefix>errors.truncated; the prefix defaults to "readouts."):
// - Fixed-size formats (VMM3a 20 B, CAEN 24 B): blocks are walked at the format's stride, as the
//   reference's VMM3a parser does. A block whose data_length is not that size is counted under
//   errors.length and skipped; the walk goes on with the next stride, so one corrupted length
//   field costs one readout, not the rest of the packet. (The reference's CAEN parser stops the
//   packet there instead.) A tail shorter than one block is counted under errors.truncated.
// - Variable-size formats (fixed_size 0): the walk steps by each block's data_length. A length
//   below the 4-byte block header is counted under errors.length, a block running past the
//   packet end (or a tail shorter than a block header) under errors.truncated; either ends the
//   packet, because the next block's start is unknown.
// <prefix>received counts every block looked at, good or bad, once per packet (one add).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "efu/counter_group.h"
#include "efu/counters.h"
#include "efu/ess/byte_reader.h"

namespace efu::ess {

inline constexpr std::uint32_t kBlockHeaderSize = 4;

/// One readout block; `data` points at its first byte (the fiber), `length` bytes long.
struct ReadoutBlock {
  std::uint8_t fiber;
  std::uint8_t fen;
  std::uint16_t length;
  const std::uint8_t* data;
};

enum class BlockError : std::uint8_t { kLength, kTruncated, kCount };
inline constexpr std::array<const char*, 2> kBlockErrorNames{"length", "truncated"};

class ReadoutBlockWalker {
 public:
  /// `fixed_size`: the format's block size, or 0 for blocks of varying size.
  ReadoutBlockWalker(CounterRegistry& counters, std::uint16_t fixed_size,
                     std::string_view prefix = "readouts.")
      : fixed_size_(fixed_size),
        received_(counters.counter(std::string(prefix) + "received")),
        errors_(counters, std::string(prefix) + "errors.", kBlockErrorNames) {}

  /// Calls `on_block(const ReadoutBlock&)` for each well-framed block of `data[0..size)`, the
  /// bytes after the packet header. Reads nothing outside them. No allocation.
  template <typename OnBlock>
  void walk(const std::uint8_t* data, std::uint32_t size, OnBlock&& on_block) noexcept {
    if (fixed_size_ != 0) {
      walk_lanes(
          data, size, 0, [](const std::uint8_t*, std::uint32_t) { return std::uint32_t{0}; },
          on_block);
      return;
    }
    std::uint64_t blocks = 0;
    while (size != 0) {
      ++blocks;
      if (size < kBlockHeaderSize) {
        errors_[BlockError::kTruncated].add();
        break;
      }
      const std::uint16_t length = load_u16(data + 2);
      if (length < kBlockHeaderSize) {
        errors_[BlockError::kLength].add();
        break;
      }
      if (length > size) {
        errors_[BlockError::kTruncated].add();
        break;
      }
      on_block(ReadoutBlock{data[0], data[1], length, data});
      data += length;
      size -= length;
    }
    received_.add(blocks);
  }

  /// walk() of a fixed-size format (fixed_size ≠ 0) for a caller that takes `lanes` blocks at a
  /// time (0: none): `on_lanes(const std::uint8_t* first, std::uint32_t runs)` once for all the
  /// whole runs of `lanes` blocks from the start (when there is one), returning how many of
  /// their blocks have a wrong data_length (the caller checks and skips those); `on_block` for
  /// each well-framed block after the last whole run. The same counts as walk().
  template <typename OnLanes, typename OnBlock>
  void walk_lanes(const std::uint8_t* data, std::uint32_t size, std::uint32_t lanes,
                  OnLanes&& on_lanes, OnBlock&& on_block) noexcept {
    // The stride and the count in locals: on_block may write memory (counters), and the
    // compiler would otherwise reload them from *this for every block.
    const std::uint32_t stride = fixed_size_;
    const std::uint32_t whole = size / stride;
    std::uint32_t bad_length = 0;
    std::uint32_t i = 0;
    if (lanes != 0 && whole >= lanes) {
      const std::uint32_t runs = whole / lanes;
      bad_length += on_lanes(data, runs);
      i = runs * lanes;
      data += std::size_t{i} * stride;
    }
    for (; i < whole; ++i, data += stride) {
      const std::uint16_t length = load_u16(data + 2);
      if (length != stride) [[unlikely]] {
        ++bad_length;
        continue;
      }
      on_block(ReadoutBlock{data[0], data[1], length, data});
    }
    std::uint64_t blocks = whole;
    if (bad_length != 0) errors_[BlockError::kLength].add(bad_length);
    if (size % stride != 0) {
      ++blocks;
      errors_[BlockError::kTruncated].add();
    }
    received_.add(blocks);
  }

 private:
  std::uint16_t fixed_size_;
  Counter& received_;
  CounterGroup<BlockError, kBlockErrorNames.size()> errors_;
};

}  // namespace efu::ess
