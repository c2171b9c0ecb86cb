// Writes da00 messages made by efu's own code to files, for da00_decode_test.py to decode with
// the facility's Python package (no broker needed):
//   da00_dump <dir>
// writes <dir>/histogram_sum.da00 and <dir>/histogram_average.da00 (TofHistograms fed the
// readouts below, serialised by Da00Builder) and <dir>/dtypes.da00 (one variable per element
// type and a 2-D one). The expected values are worked out by hand in the Python test.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <span>
#include <string>

#include "efu/da00/tof_histogram.h"
#include "efu/kafka/da00_builder.h"

namespace {

bool write(const std::string& path, std::span<const std::uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

class FileSink final : public efu::HistogramSink {
 public:
  explicit FileSink(std::string path) : path_(std::move(path)), builder_("cbm_monitor") {}
  void publish(const efu::DataArrayView& array) override {
    ok = write(path_, builder_.build(array)) && ++messages == 1;
  }
  bool ok = false;
  int messages = 0;

 private:
  std::string path_;
  efu::kafka::Da00Builder builder_;
};

// Period 1000 ns in 10 bins, 3 pulses per message, signal unit "A"; the pulses are
// P0, P0 + 71428571, P0 + 142857143 and the fourth publishes.
bool histogram(const std::string& path, efu::da00::Aggregation aggregation) {
  constexpr std::uint64_t p0 = 1'700'000'000'000'000'000ULL;
  efu::da00::TofHistogram h({1000, 10, 3, aggregation, "A"});
  FileSink sink(path);
  h.set_pulse(p0, sink);
  h.add(300, 10);
  h.add(800, 9);
  h.add(1200, 8);  // beyond the period
  h.set_pulse(p0 + 71'428'571, sink);
  h.add(300, 5);
  h.add(-5, 1);  // before the offset
  h.add(999, 7);
  h.set_pulse(p0 + 142'857'143, sink);
  h.add(0, 3);
  return h.set_pulse(p0 + 214'285'714, sink) && sink.ok;
}

bool dtypes(const std::string& path) {
  using efu::Da00Type;
  const std::int8_t i8[] = {-128, 127};
  const std::uint8_t u8[] = {0, 255};
  const std::int16_t i16[] = {-32768, 32767};
  const std::uint16_t u16[] = {0, 65535};
  const std::int32_t i32[] = {-2147483647 - 1, 2147483647};
  const std::uint32_t u32[] = {0, 4294967295U};
  const std::int64_t i64[] = {-9223372036854775807LL - 1, 9223372036854775807LL};
  const std::uint64_t u64[] = {0, 18446744073709551615ULL};
  const float f32[] = {0.5F, -1.25F};
  const double f64[] = {1e-300, -2.5};
  const std::int64_t grid[] = {1, 2, 3, 4, 5, 6};
  const char* const x[] = {"x"};
  const char* const yx[] = {"y", "x"};
  const std::int64_t two[] = {2};
  const std::int64_t two_by_three[] = {2, 3};
  const efu::Da00Variable vars[] = {
      {"int8", "u", x, two, Da00Type::int8, i8, sizeof i8},
      {"uint8", "u", x, two, Da00Type::uint8, u8, sizeof u8},
      {"int16", "u", x, two, Da00Type::int16, i16, sizeof i16},
      {"uint16", "u", x, two, Da00Type::uint16, u16, sizeof u16},
      {"int32", "u", x, two, Da00Type::int32, i32, sizeof i32},
      {"uint32", "u", x, two, Da00Type::uint32, u32, sizeof u32},
      {"int64", "u", x, two, Da00Type::int64, i64, sizeof i64},
      {"uint64", "u", x, two, Da00Type::uint64, u64, sizeof u64},
      {"float32", "u", x, two, Da00Type::float32, f32, sizeof f32},
      {"float64", nullptr, x, two, Da00Type::float64, f64, sizeof f64},
      {"grid", "counts", yx, two_by_three, Da00Type::int64, grid, sizeof grid},
  };
  efu::kafka::Da00Builder builder("dtypes");
  return write(path, builder.build({123456789, vars}));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: da00_dump <dir>\n";
    return 2;
  }
  const std::string dir = argv[1];
  const bool ok = histogram(dir + "/histogram_sum.da00", efu::da00::Aggregation::sum) &&
                  histogram(dir + "/histogram_average.da00", efu::da00::Aggregation::average) &&
                  dtypes(dir + "/dtypes.da00");
  if (!ok) std::cerr << "da00_dump: could not make or write the messages in " << dir << "\n";
  return ok ? 0 : 1;
}
