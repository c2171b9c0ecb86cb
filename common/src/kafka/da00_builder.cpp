#include "efu/kafka/da00_builder.h"

#include <cstring>

#include <flatbuffers/flatbuffers.h>

#include "efu/schemas/da00_dataarray_generated.h"

namespace efu::kafka {
namespace {

// efu::Da00Type is copied into the message unchanged, so its values must be the schema's.
static_assert(static_cast<int>(Da00Type::none) == static_cast<int>(da00_dtype::none));
static_assert(static_cast<int>(Da00Type::int8) == static_cast<int>(da00_dtype::int8));
static_assert(static_cast<int>(Da00Type::uint8) == static_cast<int>(da00_dtype::uint8));
static_assert(static_cast<int>(Da00Type::int16) == static_cast<int>(da00_dtype::int16));
static_assert(static_cast<int>(Da00Type::uint16) == static_cast<int>(da00_dtype::uint16));
static_assert(static_cast<int>(Da00Type::int32) == static_cast<int>(da00_dtype::int32));
static_assert(static_cast<int>(Da00Type::uint32) == static_cast<int>(da00_dtype::uint32));
static_assert(static_cast<int>(Da00Type::int64) == static_cast<int>(da00_dtype::int64));
static_assert(static_cast<int>(Da00Type::uint64) == static_cast<int>(da00_dtype::uint64));
static_assert(static_cast<int>(Da00Type::float32) == static_cast<int>(da00_dtype::float32));
static_assert(static_cast<int>(Da00Type::float64) == static_cast<int>(da00_dtype::float64));

// The string's length prefix, terminator and padding (to 4, and up to 8 when an aligned field
// follows it).
std::size_t string_bytes(const char* s) { return s == nullptr ? 0 : 4 + std::strlen(s) + 1 + 7; }

// The numbers are where readers expect them: a da00 data payload starts at a multiple of 8
// bytes from the message's start, so a reader may view it as an array of any element type
// without a copy.
constexpr std::size_t kDataAlignment = 8;

flatbuffers::Offset<da00_Variable> pack(flatbuffers::FlatBufferBuilder& fbb,
                                        const Da00Variable& v) {
  // Children first: FlatBuffers builds back to front (in the order the reference system
  // writes them: unit, name, axes, shape, data). Label and source stay out, as there.
  const auto unit = v.unit != nullptr ? fbb.CreateString(v.unit) : 0;
  const auto name = fbb.CreateString(v.name != nullptr ? v.name : "");
  const auto axes = fbb.CreateVectorOfStrings(v.axes.begin(), v.axes.end());
  const auto shape = fbb.CreateVector(v.shape.data(), v.shape.size());
  fbb.ForceVectorAlignment(v.bytes, sizeof(std::uint8_t), kDataAlignment);
  const auto data = fbb.CreateVector(static_cast<const std::uint8_t*>(v.data), v.bytes);
  return Createda00_Variable(fbb, name, unit, 0, 0, static_cast<da00_dtype>(v.type), axes, shape,
                             data);
}

}  // namespace

Da00Builder::Da00Builder(std::string source_name) : source_name_(std::move(source_name)) {}

Da00Builder::~Da00Builder() = default;

std::size_t Da00Builder::max_size(const DataArrayView& array) const noexcept {
  std::size_t total = kFixedOverhead + string_bytes(source_name_.c_str());
  for (const Da00Variable& v : array.variables) {
    total += kVariableOverhead + string_bytes(v.name != nullptr ? v.name : "") +
             string_bytes(v.unit) + 8 * v.shape.size() + v.bytes;
    for (const char* axis : v.axes) total += 4 + string_bytes(axis);
  }
  return total;
}

// Grows the FlatBufferBuilder (and the table of variable offsets) to hold `array`: its
// max_size() plus the builder's scratch area. A builder made anew allocates its buffer at its
// first use, i.e. in the build() that follows.
void Da00Builder::reserve(const DataArrayView& array) {
  std::size_t need = max_size(array) + kScratchPerVariable * array.variables.size();
  for (const Da00Variable& v : array.variables) need += 4 * v.axes.size();
  if (need > capacity_) {
    fbb_ = std::make_unique<flatbuffers::FlatBufferBuilder>(need);
    capacity_ = need;
  }
  if (variable_offsets_.size() < array.variables.size()) {
    variable_offsets_.resize(array.variables.size());
  }
}

std::span<const std::uint8_t> Da00Builder::build(const DataArrayView& array) {
  reserve(array);
  flatbuffers::FlatBufferBuilder& fbb = *fbb_;
  fbb.Clear();
  const std::size_t n = array.variables.size();
  for (std::size_t i = 0; i < n; ++i) variable_offsets_[i] = pack(fbb, array.variables[i]).o;
  fbb.StartVector(n, sizeof(flatbuffers::uoffset_t));
  for (std::size_t i = n; i > 0; --i) {
    fbb.PushElement(flatbuffers::Offset<da00_Variable>(variable_offsets_[i - 1]));
  }
  const flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<da00_Variable>>> data(
      fbb.EndVector(n));
  const auto source = fbb.CreateString(source_name_);
  const auto root = Createda00_DataArray(fbb, source, array.timestamp_ns, data);
  Finishda00_DataArrayBuffer(fbb, root);
  return {fbb.GetBufferPointer(), fbb.GetSize()};
}

}  // namespace efu::kafka
