// Da00Builder against the da00 schema: a message laid out by hand, byte by byte, from the
// schema's definition (decoded by the flatc reader, so schemas/da00_dataarray.fbs has the
// published field ids and types), and the builder's messages decoded field by field by a
// reader written here from the FlatBuffers layout, independent of the generated code.
#include "efu/kafka/da00_builder.h"

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>

#include "efu/da00/tof_histogram.h"
#include "efu/schemas/da00_dataarray_generated.h"

namespace efu::kafka {
namespace {

// --- A reader of the FlatBuffers layout (little endian): a table starts with an int32 soffset
// to its vtable (vtable = table − soffset); the vtable holds its own size, the table's size and
// one uint16 offset per field id (0: absent); reference fields hold a uint32 offset relative to
// themselves; strings and vectors start with a uint32 length.
struct DecodedVariable {
  std::string name;
  std::optional<std::string> unit, label, source;
  int data_type = 0;
  std::vector<std::string> axes;
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> data;
  std::size_t data_position = 0;  // where the data bytes start in the message
  bool operator==(const DecodedVariable&) const = default;
};

struct Decoded {
  std::string identifier;
  std::string source_name;
  std::uint64_t timestamp = 0;
  std::vector<DecodedVariable> variables;
};

class RawReader {
 public:
  explicit RawReader(std::span<const std::uint8_t> b) : b_(b) {}

  template <typename T>
  T scalar(std::size_t at) const {
    EXPECT_LE(at + sizeof(T), b_.size());
    T v;
    std::memcpy(&v, b_.data() + at, sizeof v);
    return v;
  }
  // Position of field `id` of the table at `table`, or 0 when absent.
  std::size_t field(std::size_t table, unsigned id) const {
    const std::size_t vtable = table - static_cast<std::size_t>(scalar<std::int32_t>(table));
    const auto vtable_size = scalar<std::uint16_t>(vtable);
    if (4 + 2 * id >= vtable_size) return 0;
    const auto offset = scalar<std::uint16_t>(vtable + 4 + 2 * id);
    return offset == 0 ? 0 : table + offset;
  }
  std::size_t follow(std::size_t at) const { return at + scalar<std::uint32_t>(at); }
  std::optional<std::string> string(std::size_t table, unsigned id) const {
    const std::size_t f = field(table, id);
    if (f == 0) return std::nullopt;
    const std::size_t s = follow(f);
    return std::string(reinterpret_cast<const char*>(b_.data() + s + 4), scalar<std::uint32_t>(s));
  }
  // (first element, length) of the vector in field `id`.
  std::pair<std::size_t, std::size_t> vector(std::size_t table, unsigned id) const {
    const std::size_t v = follow(field(table, id));
    return {v + 4, scalar<std::uint32_t>(v)};
  }

  DecodedVariable variable(std::size_t t) const {
    DecodedVariable v;
    v.name = string(t, 0).value_or("<absent>");
    v.unit = string(t, 1);
    v.label = string(t, 2);
    v.source = string(t, 3);
    const std::size_t type = field(t, 4);
    v.data_type = type == 0 ? 0 : scalar<std::int8_t>(type);
    const auto [axes, axis_count] = vector(t, 5);
    for (std::size_t i = 0; i < axis_count; ++i) {
      const std::size_t s = follow(axes + 4 * i);
      v.axes.emplace_back(reinterpret_cast<const char*>(b_.data() + s + 4),
                          scalar<std::uint32_t>(s));
    }
    const auto [shape, rank] = vector(t, 6);
    for (std::size_t i = 0; i < rank; ++i) v.shape.push_back(scalar<std::int64_t>(shape + 8 * i));
    const auto [data, bytes] = vector(t, 7);
    v.data.assign(b_.data() + data, b_.data() + data + bytes);
    v.data_position = data;
    return v;
  }

  Decoded message() const {
    Decoded d;
    const std::size_t root = follow(0);
    d.identifier.assign(reinterpret_cast<const char*>(b_.data() + 4), 4);
    d.source_name = string(root, 0).value_or("<absent>");
    const std::size_t ts = field(root, 1);
    d.timestamp = ts == 0 ? 0 : scalar<std::uint64_t>(ts);
    const auto [vars, count] = vector(root, 2);
    for (std::size_t i = 0; i < count; ++i) d.variables.push_back(variable(follow(vars + 4 * i)));
    return d;
  }

 private:
  std::span<const std::uint8_t> b_;
};

// --- One message laid out by hand from the schema: source "m", timestamp 5, one variable
// {name "x", data_type int32, axes ["t"], shape [2], data int32 {1, 2}}; unit, label and source
// absent. Offsets in the comments are from the message's start.
// clang-format off
const std::uint8_t kHandMessage[] = {
  24, 0, 0, 0,                    //   0: root: the DataArray table at 0 + 24
  'd', 'a', '0', '0',             //   4: file identifier
  10, 0, 20, 0,                   //   8: DataArray vtable: 10 bytes, table 20 bytes
  4, 0, 8, 0, 16, 0,              //  12: source_name at +4, timestamp at +8, data at +16
  0, 0, 0, 0, 0, 0,               //  18: padding (timestamp is 8-aligned)
  16, 0, 0, 0,                    //  24: DataArray table: vtable at 24 - 16 = 8
  16, 0, 0, 0,                    //  28: source_name -> 44
  5, 0, 0, 0, 0, 0, 0, 0,         //  32: timestamp = 5
  12, 0, 0, 0,                    //  40: data -> 52
  1, 0, 0, 0, 'm', 0, 0, 0,       //  44: "m"
  1, 0, 0, 0,                     //  52: data: 1 variable
  24, 0, 0, 0,                    //  56: -> the variable's table at 80
  20, 0, 24, 0,                   //  60: variable vtable: 20 bytes, table 24 bytes
  4, 0, 0, 0, 0, 0, 0, 0,         //  64: name at +4; unit, label, source absent
  20, 0, 8, 0, 12, 0, 16, 0,      //  72: data_type +20, axes +8, shape +12, data +16
  20, 0, 0, 0,                    //  80: variable table: vtable at 80 - 20 = 60
  20, 0, 0, 0,                    //  84: name -> 104
  24, 0, 0, 0,                    //  88: axes -> 112
  40, 0, 0, 0,                    //  92: shape -> 132
  48, 0, 0, 0,                    //  96: data -> 144
  5, 0, 0, 0,                     // 100: data_type = int32 (5), padding
  1, 0, 0, 0, 'x', 0, 0, 0,       // 104: "x"
  1, 0, 0, 0, 4, 0, 0, 0,         // 112: axes: 1 string, -> 120
  1, 0, 0, 0, 't', 0, 0, 0,       // 120: "t"
  0, 0, 0, 0,                     // 128: padding (shape's elements are 8-aligned)
  1, 0, 0, 0,                     // 132: shape: 1 long
  2, 0, 0, 0, 0, 0, 0, 0,         // 136: 2
  8, 0, 0, 0,                     // 144: data: 8 bytes
  1, 0, 0, 0, 2, 0, 0, 0,         // 148: int32 {1, 2}
};
// clang-format on

const std::int32_t kHandValues[] = {1, 2};
const char* const kHandAxes[] = {"t"};
const std::int64_t kHandShape[] = {2};
const Da00Variable kHandVariable{
    "x", nullptr, kHandAxes, kHandShape, Da00Type::int32, kHandValues, sizeof kHandValues};

TEST(Da00Schema, HandWrittenMessageDecodesWithTheGeneratedReader) {
  flatbuffers::Verifier verifier(kHandMessage, sizeof kHandMessage);
  ASSERT_TRUE(Verifyda00_DataArrayBuffer(verifier));
  ASSERT_TRUE(da00_DataArrayBufferHasIdentifier(kHandMessage));
  const da00_DataArray* m = Getda00_DataArray(kHandMessage);
  EXPECT_EQ(m->source_name()->str(), "m");
  EXPECT_EQ(m->timestamp(), 5U);
  ASSERT_EQ(m->data()->size(), 1U);
  const da00_Variable* v = m->data()->Get(0);
  EXPECT_EQ(v->name()->str(), "x");
  EXPECT_EQ(v->unit(), nullptr);
  EXPECT_EQ(v->label(), nullptr);
  EXPECT_EQ(v->source(), nullptr);
  EXPECT_EQ(v->data_type(), da00_dtype::int32);
  ASSERT_EQ(v->axes()->size(), 1U);
  EXPECT_EQ(v->axes()->Get(0)->str(), "t");
  EXPECT_EQ(std::vector<std::int64_t>(v->shape()->begin(), v->shape()->end()),
            std::vector<std::int64_t>{2});
  EXPECT_EQ(std::vector<std::uint8_t>(v->data()->begin(), v->data()->end()),
            (std::vector<std::uint8_t>{1, 0, 0, 0, 2, 0, 0, 0}));
}

TEST(Da00Builder, WritesWhatTheHandWrittenMessageHolds) {
  const Decoded hand = RawReader(kHandMessage).message();
  Da00Builder b("m");
  const Da00Variable vars[] = {kHandVariable};
  const auto bytes = b.build({5, vars});
  const Decoded built = RawReader(bytes).message();
  EXPECT_EQ(built.identifier, "da00");
  EXPECT_EQ(built.source_name, hand.source_name);
  EXPECT_EQ(built.timestamp, hand.timestamp);
  ASSERT_EQ(built.variables.size(), 1U);
  DecodedVariable v = built.variables[0];
  v.data_position = hand.variables[0].data_position;  // the layouts may differ, not the fields
  EXPECT_EQ(v, hand.variables[0]);
  EXPECT_EQ(v.data_type, 5);
  EXPECT_EQ(v.data, (std::vector<std::uint8_t>{1, 0, 0, 0, 2, 0, 0, 0}));
}

// --- Round trips of every element type and of a histogram, through the flatc reader.
const da00_DataArray* decode(std::span<const std::uint8_t> bytes) {
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  EXPECT_TRUE(Verifyda00_DataArrayBuffer(verifier));
  EXPECT_TRUE(da00_DataArrayBufferHasIdentifier(bytes.data()));
  return Getda00_DataArray(bytes.data());
}

template <typename T>
std::vector<T> values(const da00_Variable* v) {
  const std::vector<std::uint8_t> bytes(v->data()->begin(), v->data()->end());
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

TEST(Da00Builder, RoundTripsATofHistogram) {
  da00::TofHistogram h({1000, 10, 2, da00::Aggregation::sum, "A"});
  struct Sink final : HistogramSink {
    Da00Builder builder{"monitor_1"};
    std::vector<std::vector<std::uint8_t>> messages;
    void publish(const DataArrayView& a) override {
      const auto bytes = builder.build(a);
      EXPECT_LE(bytes.size(), builder.max_size(a));
      messages.emplace_back(bytes.begin(), bytes.end());
    }
  } sink;
  h.set_pulse(1'000'000, sink);
  h.add(150, 3);
  h.set_pulse(1'000'700, sink);
  h.add(950, 4);
  ASSERT_TRUE(h.set_pulse(1'001'400, sink));
  ASSERT_EQ(sink.messages.size(), 1U);
  const da00_DataArray* m = decode(sink.messages[0]);
  EXPECT_EQ(m->source_name()->str(), "monitor_1");
  EXPECT_EQ(m->timestamp(), 1'000'700U);
  ASSERT_EQ(m->data()->size(), 4U);
  const da00_Variable* signal = m->data()->Get(1);
  EXPECT_EQ(signal->name()->str(), "signal");
  EXPECT_EQ(signal->unit()->str(), "A");
  EXPECT_EQ(signal->axes()->Get(0)->str(), "frame_time");
  EXPECT_EQ(signal->shape()->Get(0), 10);
  EXPECT_EQ(signal->data_type(), da00_dtype::int32);
  EXPECT_EQ(values<std::int32_t>(signal),
            (std::vector<std::int32_t>{0, 3, 0, 0, 0, 0, 0, 0, 0, 4}));
  const da00_Variable* edges = m->data()->Get(0);
  EXPECT_EQ(edges->name()->str(), "frame_time");
  EXPECT_EQ(values<std::int32_t>(edges).back(), 1000);
  const da00_Variable* reference = m->data()->Get(2);
  EXPECT_EQ(reference->name()->str(), "reference_time");
  EXPECT_EQ(values<std::int32_t>(reference), (std::vector<std::int32_t>{0, 700}));
  const da00_Variable* total = m->data()->Get(3);
  EXPECT_EQ(total->name()->str(), "frame_total");
  EXPECT_EQ(total->unit()->str(), "counts");
  EXPECT_EQ(total->data_type(), da00_dtype::uint64);
  EXPECT_EQ(values<std::uint64_t>(total), (std::vector<std::uint64_t>{3, 4}));
}

TEST(Da00Builder, EveryElementTypeAndA2DShapeRoundTrip) {
  const std::int8_t i8[] = {-1, 2};
  const std::uint16_t u16[] = {65535};
  const double f64[] = {0.5, -2.25, 1e300};
  const std::int64_t grid[] = {1, 2, 3, 4, 5, 6};
  const char* const x[] = {"x"};
  const char* const yx[] = {"y", "x"};
  const std::int64_t s2[] = {2}, s1[] = {1}, s3[] = {3}, s23[] = {2, 3};
  const Da00Variable vars[] = {
      {"a", "mV", x, s2, Da00Type::int8, i8, sizeof i8},
      {"b", nullptr, x, s1, Da00Type::uint16, u16, sizeof u16},
      {"c", "s", x, s3, Da00Type::float64, f64, sizeof f64},
      {"grid", "counts", yx, s23, Da00Type::int64, grid, sizeof grid},
  };
  Da00Builder b("src");
  const DataArrayView view{~0ULL, vars};
  const auto bytes = b.build(view);
  EXPECT_LE(bytes.size(), b.max_size(view));
  const da00_DataArray* m = decode(bytes);
  EXPECT_EQ(m->timestamp(), ~0ULL);
  ASSERT_EQ(m->data()->size(), 4U);
  EXPECT_EQ(m->data()->Get(0)->data_type(), da00_dtype::int8);
  EXPECT_EQ(values<std::int8_t>(m->data()->Get(0)), (std::vector<std::int8_t>{-1, 2}));
  EXPECT_EQ(m->data()->Get(1)->unit(), nullptr);
  EXPECT_EQ(m->data()->Get(1)->data_type(), da00_dtype::uint16);
  EXPECT_EQ(values<std::uint16_t>(m->data()->Get(1)), (std::vector<std::uint16_t>{65535}));
  EXPECT_EQ(m->data()->Get(2)->data_type(), da00_dtype::float64);
  EXPECT_EQ(values<double>(m->data()->Get(2)), (std::vector<double>{0.5, -2.25, 1e300}));
  const da00_Variable* g = m->data()->Get(3);
  EXPECT_EQ(g->data_type(), da00_dtype::int64);
  ASSERT_EQ(g->axes()->size(), 2U);
  EXPECT_EQ(g->axes()->Get(0)->str(), "y");
  EXPECT_EQ(g->axes()->Get(1)->str(), "x");
  EXPECT_EQ(std::vector<std::int64_t>(g->shape()->begin(), g->shape()->end()),
            (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(values<std::int64_t>(g), (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6}));
  // Every data payload starts 8-aligned in the message, so a reader may view it in place.
  for (const DecodedVariable& v : RawReader(bytes).message().variables) {
    EXPECT_EQ(v.data_position % 8, 0U) << v.name;
  }
}

TEST(Da00Builder, EmptyArraysAndNoVariablesDecode) {
  Da00Builder b("s");
  const auto none = b.build({7, {}});
  EXPECT_EQ(decode(none)->data()->size(), 0U);
  const char* const x[] = {"x"};
  const std::int64_t zero[] = {0};
  const Da00Variable empty[] = {{"e", "ns", x, zero, Da00Type::float32, nullptr, 0}};
  const da00_DataArray* m = decode(b.build({8, empty}));
  ASSERT_EQ(m->data()->size(), 1U);
  EXPECT_EQ(m->data()->Get(0)->data()->size(), 0U);
  EXPECT_EQ(m->data()->Get(0)->data_type(), da00_dtype::float32);
}

// max_size() bounds the message for long names, many axes and odd sizes; the builder is made
// anew only when a larger array comes.
TEST(Da00Builder, MaxSizeBoundsTheMessageAndCapacityGrowsOnlyForLargerArrays) {
  const std::string long_name(301, 'n');
  const char* const axes[] = {"a", "bb", "ccc", "dddd", "eeeee"};
  const std::int64_t shape[] = {1, 1, 1, 1, 3};
  std::vector<std::uint8_t> data(1000, 0xAB);
  Da00Builder b(std::string(77, 's'));
  EXPECT_EQ(b.capacity(), 0U);
  std::vector<std::size_t> capacity;
  for (std::size_t bytes : {3U, 3U, 1000U, 17U, 999U}) {
    const Da00Variable v[] = {
        {long_name.c_str(), "u", axes, shape, Da00Type::uint8, data.data(), bytes},
        {"y", nullptr, {axes, 1}, {shape, 1}, Da00Type::int8, data.data(), 1}};
    const DataArrayView view{1, v};
    const auto out = b.build(view);
    EXPECT_LE(out.size(), b.max_size(view)) << bytes;
    EXPECT_LE(b.max_size(view), b.capacity()) << bytes;
    const da00_DataArray* m = decode(out);
    EXPECT_EQ(m->data()->Get(0)->data()->size(), bytes);
    EXPECT_EQ(m->data()->Get(0)->name()->str(), long_name);
    EXPECT_EQ(m->data()->Get(0)->axes()->size(), 5U);
    capacity.push_back(b.capacity());
  }
  EXPECT_EQ(capacity[1], capacity[0]);  // the same shape again
  EXPECT_GT(capacity[2], capacity[1]);  // a larger array
  EXPECT_EQ(capacity[3], capacity[2]);  // smaller ones reuse it
  EXPECT_EQ(capacity[4], capacity[2]);
}

}  // namespace
}  // namespace efu::kafka
