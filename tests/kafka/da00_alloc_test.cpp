// The steady-state promise of the da00 path: after the first message of a shape, neither
// TofHistogram (add, set_pulse, flush) nor Da00Builder::build allocates.
#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "efu/da00/tof_histogram.h"
#include "efu/kafka/da00_builder.h"

namespace {
std::atomic<std::size_t> g_allocations{0};
}

// Counts every allocation of this test binary (the test has no other threads allocating).
void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// The array forms too: FlatBuffers' default allocator uses new[], which a sanitizer's runtime
// would otherwise serve itself without passing through the counting operator new above.
void* operator new[](std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace efu::kafka {
namespace {

// What the host's sink does: serialise each array; here the sizes are summed instead of sent.
class BuildingSink final : public HistogramSink {
 public:
  explicit BuildingSink(Da00Builder& b) : builder_(b) {}
  void publish(const DataArrayView& array) override {
    bytes += builder_.build(array).size();
    ++messages;
  }
  std::size_t bytes = 0;
  std::size_t messages = 0;

 private:
  Da00Builder& builder_;
};

TEST(Da00Allocation, SecondBuildOfTheSameShapeDoesNotAllocate) {
  Da00Builder b("monitor");
  const std::int32_t values[1000] = {1};
  const char* const axes[] = {"frame_time"};
  const std::int64_t shape[] = {1000};
  const Da00Variable v[] = {{"signal", "A", axes, shape, Da00Type::int32, values, sizeof values}};
  const DataArrayView view{42, v};
  ASSERT_GT(b.build(view).size(), 4000U);  // the first build makes the builder's buffer
  const std::size_t before = g_allocations.load();
  for (int i = 0; i < 3; ++i) ASSERT_GT(b.build(view).size(), 4000U);
  EXPECT_EQ(g_allocations.load(), before);
}

// Right-sized: the first build() of a new builder allocates the FlatBufferBuilder object, its
// buffer (once: a buffer too small would be grown, a further allocation) and the table of
// variable offsets; nothing else. So does a build() of a larger array, which makes the builder
// anew. Long names, many axes and variables are where an estimate too small would show.
TEST(Da00Allocation, FirstBuildAllocatesTheBufferOnceAtItsFinalSize) {
  const std::string long_name(333, 'n');
  const char* const axes[] = {"a", "bb", "ccc", "dddd", "eeeee", "ffffff"};
  const std::int64_t shape[] = {1, 1, 1, 1, 1, 7};
  static const std::uint8_t data[100'000] = {};
  for (std::size_t bytes : {0UL, 1UL, 7UL, 1000UL, 99'999UL}) {
    std::vector<Da00Variable> vars;
    for (int i = 0; i < 9; ++i) {
      vars.push_back({i % 2 == 0 ? long_name.c_str() : "s",
                      i % 3 == 0 ? nullptr : "counts",
                      {axes, static_cast<std::size_t>(1 + i % 6)},
                      {shape, static_cast<std::size_t>(1 + i % 6)},
                      Da00Type::uint8,
                      data,
                      bytes});
    }
    const DataArrayView view{1, vars};
    Da00Builder b(std::string(50, 'm'));
    const std::size_t before = g_allocations.load();
    const std::size_t size = b.build(view).size();
    EXPECT_EQ(g_allocations.load() - before, 3U) << bytes;
    EXPECT_LE(size, b.max_size(view)) << bytes;
    // The bound is tight enough to size a message: its overhead is per field, not per byte.
    EXPECT_LE(b.max_size(view) - size, 64 + 9 * 64 + 5 * 9 * 8) << bytes;
  }
}

TEST(Da00Allocation, HistogramAndBuilderDoNotAllocateInSteadyState) {
  da00::TofHistogram h({71'428'571, 2000, 3, da00::Aggregation::average, "A"});
  Da00Builder b("monitor");
  BuildingSink sink(b);
  std::uint64_t pulse = 1'700'000'000'000'000'000ULL;
  auto run_pulses = [&](int pulses) {
    for (int p = 0; p < pulses; ++p, pulse += 71'428'571) {
      h.set_pulse(pulse, sink);
      for (std::int64_t tof = -5000; tof < 80'000'000; tof += 9973) {
        (void)h.add(tof, static_cast<std::int32_t>(tof % 977));
      }
    }
  };
  run_pulses(4);  // the first window's message sizes the builder
  ASSERT_EQ(sink.messages, 1U);
  const std::size_t before = g_allocations.load();
  run_pulses(30);
  EXPECT_TRUE(h.flush(sink));
  EXPECT_EQ(g_allocations.load(), before);
  EXPECT_EQ(sink.messages, 12U);  // windows of 3 pulses ending at pulses 4, 7, ..., 34, + flush
  EXPECT_GT(sink.bytes, 12U * 2000 * 8);
}

}  // namespace
}  // namespace efu::kafka
