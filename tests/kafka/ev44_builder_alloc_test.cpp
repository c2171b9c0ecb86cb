// The hot-path promise of Ev44Builder: after construction, add/finish/reset never allocate.
#include <atomic>
#include <cstdlib>
#include <new>

#include <gtest/gtest.h>

#include "efu/kafka/ev44_builder.h"

namespace {
std::atomic<std::size_t> g_allocations{0};
}

// Counts every allocation of this test binary (the test has no other threads allocating).
void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace efu::kafka {
namespace {

TEST(Ev44BuilderAllocation, FillFinishResetDoNotAllocate) {
  Ev44Builder b("loki", 1'000'000);
  const std::size_t before = g_allocations.load();
  for (int message = 0; message < 3; ++message) {
    std::uint64_t n = 0;
    for (; !b.full(); ++n) b.add(1000 + n / 7, static_cast<std::uint32_t>(n), 3);
    const auto bytes = b.finish(message);
    ASSERT_GT(bytes.size(), 900'000U);
    b.reset();
  }
  EXPECT_EQ(g_allocations.load(), before);
}

TEST(Ev44BuilderAllocation, AddPulseDoesNotAllocate) {
  Ev44Builder b("loki", 100'000);
  std::uint32_t tof[300];
  std::uint32_t pixel[300];
  for (std::uint32_t i = 0; i < 300; ++i) {
    tof[i] = i;
    pixel[i] = 7;
  }
  const std::size_t before = g_allocations.load();
  std::size_t events = 0;
  for (int message = 0; message < 3; ++message) {
    for (std::uint64_t pulse = 1000; !b.full(); ++pulse)
      events += b.add_pulse(pulse, tof, pixel, 300);
    const auto bytes = b.finish(message);
    ASSERT_GT(bytes.size(), 90'000U);
    b.reset();
  }
  EXPECT_EQ(g_allocations.load(), before);
  EXPECT_GT(events, 3U * 11'000U);  // ~12 k events of 8 bytes fill each 100 kB message
}

}  // namespace
}  // namespace efu::kafka
