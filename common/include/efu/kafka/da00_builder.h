// Serialises a plugin's DataArrayView (efu/plugin.h) as one da00 FlatBuffers message
// (schemas/da00_dataarray.fbs, docs/architecture.md §5.3).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "efu/plugin.h"

namespace flatbuffers {
class FlatBufferBuilder;
}

namespace efu::kafka {

/// One builder per source. The FlatBufferBuilder is kept between messages and made anew only
/// when an array arrives whose max_size() exceeds every earlier one, so a stream of histograms
/// of one shape allocates on its first message only.
class Da00Builder {
 public:
  /// Bytes of a message besides its variables and source name: header (root offset and file
  /// identifier), the DataArray's vtable and table, the `data` vector's length prefix and
  /// alignment padding (an upper bound).
  static constexpr std::size_t kFixedOverhead = 96;
  /// Bytes of one variable besides its strings and arrays: the variable's vtable (8 fields) and
  /// table, its entry in `data`, the length prefixes of `axes`, `shape` and `data`, and the
  /// padding that aligns `shape` and the data bytes to 8 (an upper bound).
  static constexpr std::size_t kVariableOverhead = 112;
  /// What FlatBufferBuilder keeps in its buffer's scratch area while a message is built, per
  /// variable: the field locations of the table being built (8 bytes per field) and the
  /// offsets of the vtables it has written (4 bytes) and of its axis names (4 bytes each).
  static constexpr std::size_t kScratchPerVariable = 8 * 8 + 4;

  explicit Da00Builder(std::string source_name);
  ~Da00Builder();
  Da00Builder(const Da00Builder&) = delete;
  Da00Builder& operator=(const Da00Builder&) = delete;

  /// Serialises `array` under this builder's source name. The bytes stay valid until the next
  /// build(). A variable's null unit is left out of the message; a null name is written as "";
  /// axis names must not be null.
  std::span<const std::uint8_t> build(const DataArrayView& array);

  /// An upper bound of the size of the message build(array) returns:
  ///   kFixedOverhead + string(source) + Σ over variables of
  ///     kVariableOverhead + string(name) + string(unit) + Σ over axes (4 + string(axis))
  ///     + 8·rank + bytes
  /// where string(s) = 4 (length) + |s| + 1 (terminator) + 7 (padding) bytes.
  std::size_t max_size(const DataArrayView& array) const noexcept;
  /// Bytes the current FlatBufferBuilder was sized for (0 before the first build()).
  std::size_t capacity() const noexcept { return capacity_; }
  const std::string& source_name() const noexcept { return source_name_; }

 private:
  void reserve(const DataArrayView& array);

  std::string source_name_;
  std::size_t capacity_ = 0;
  std::unique_ptr<flatbuffers::FlatBufferBuilder> fbb_;
  std::vector<std::uint32_t> variable_offsets_;  // the variables' tables while `data` is built
};

}  // namespace efu::kafka
