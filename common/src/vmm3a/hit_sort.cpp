#include "efu/vmm3a/hit_sort.h"

#include <algorithm>
#include <utility>

namespace efu::vmm3a {
namespace {

constexpr std::uint32_t kRankSortLimit = 32;

bool earlier(const Hit& a, const Hit& b) noexcept { return a.time_ns < b.time_ns; }

void insertion_sort(Hit* hits, std::uint32_t n) noexcept {
  for (std::uint32_t i = 1; i < n; ++i) {
    const Hit h = hits[i];
    std::uint32_t j = i;
    while (j > 0 && h.time_ns < hits[j - 1].time_ns) {
      hits[j] = hits[j - 1];
      --j;
    }
    hits[j] = h;
  }
}

}  // namespace

HitSorter::HitSorter(std::uint32_t capacity)
    : scratch_(capacity), radix_a_(capacity), radix_b_(capacity) {}

void HitSorter::sort(Hit* hits, std::uint32_t n) noexcept {
  if (n < 2) return;
  std::uint32_t descents = 0;
  for (std::uint32_t i = 1; i < n; ++i) descents += hits[i].time_ns < hits[i - 1].time_ns ? 1U : 0U;
  if (descents == 0) return;
  if (descents * 4 <= n) {
    insertion_sort(hits, n);
    return;
  }
  std::uint64_t lo = hits[0].time_ns, hi = lo;
  for (std::uint32_t i = 1; i < n; ++i) {
    lo = std::min(lo, hits[i].time_ns);
    hi = std::max(hi, hits[i].time_ns);
  }
  if (hi - lo > 0xFFFF'FFFFU) {
    std::sort(hits, hits + n, earlier);
  } else if (n > kRankSortLimit) {
    radix_sort(hits, n, lo);
  } else {
    rank_sort(hits, n, lo);
  }
}

// Each hit's place is the number of hits earlier than it, a tie counting when it arrived first:
//   rank(i) = #{j : key_j < key_i} + #{j < i : key_j = key_i}
// over 32-bit keys, the times relative to the batch's earliest (below 2^32: sort() checked).
// The keys are stored with their top bit flipped (key ^ 2^31): as signed integers they are then
// ordered exactly as the relative times are unsigned, and the compiler vectorises the signed
// compares (SSE2 has no unsigned one). (Keys of relative times of 2^31 ns and more, cast to
// signed unflipped, sorted first.)
void HitSorter::rank_sort(Hit* hits, std::uint32_t n, std::uint64_t lo) noexcept {
  std::int32_t keys[kRankSortLimit];
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto relative = static_cast<std::uint32_t>(hits[i].time_ns - lo);
    keys[i] = static_cast<std::int32_t>(relative ^ 0x8000'0000U);
  }
  Hit* out = scratch_.data();
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::int32_t k = keys[i];
    std::int32_t rank = 0;
    for (std::uint32_t j = 0; j < n; ++j) rank += keys[j] < k ? 1 : 0;
    for (std::uint32_t j = 0; j < i; ++j) rank += keys[j] == k ? 1 : 0;  // ties keep arrival order
    out[rank] = hits[i];
  }
  std::copy(out, out + n, hits);
}

void HitSorter::radix_sort(Hit* hits, std::uint32_t n, std::uint64_t lo) noexcept {
  std::uint64_t* a = radix_a_.data();
  std::uint64_t* b = radix_b_.data();
  std::uint32_t counts[4][256] = {};
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint64_t key = (hits[i].time_ns - lo) << 32 | i;
    a[i] = key;
    for (unsigned d = 0; d < 4; ++d) ++counts[d][(key >> (32 + 8 * d)) & 0xFF];
  }
  for (unsigned d = 0; d < 4; ++d) {
    const unsigned shift = 32 + 8 * d;
    if (counts[d][(a[0] >> shift) & 0xFF] == n) continue;  // every key has this byte
    std::uint32_t offset = 0;
    for (std::uint32_t& c : counts[d]) {
      const std::uint32_t here = c;
      c = offset;
      offset += here;
    }
    for (std::uint32_t i = 0; i < n; ++i) b[counts[d][(a[i] >> shift) & 0xFF]++] = a[i];
    std::swap(a, b);
  }
  Hit* out = scratch_.data();
  for (std::uint32_t i = 0; i < n; ++i) out[i] = hits[a[i] & 0xFFFF'FFFFU];
  std::copy(out, out + n, hits);
}

void HitSorter::merge(Hit* hits, std::uint32_t mid, std::uint32_t end) noexcept {
  if (mid == 0 || mid == end || !earlier(hits[mid], hits[mid - 1])) return;
  Hit* from = std::upper_bound(hits, hits + mid, hits[mid], earlier);
  const auto moved = static_cast<std::uint32_t>(hits + mid - from);
  std::copy(from, hits + mid, scratch_.data());
  // Writing forward never overtakes the second run still to be read: out = from + i + j while
  // that run's next unread hit is at mid + j and i <= moved.
  const Hit* a = scratch_.data();
  const Hit* a_end = a + moved;
  const Hit* t = hits + mid;
  const Hit* t_end = hits + end;
  Hit* out = from;
  while (a != a_end && t != t_end) *out++ = earlier(*t, *a) ? *t++ : *a++;
  while (a != a_end) *out++ = *a++;
}

}  // namespace efu::vmm3a
