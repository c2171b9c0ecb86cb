#include "efu/vmm3a/hit_sort.h"

#include <algorithm>
#include <utility>

namespace efu::vmm3a {
namespace {

constexpr std::uint32_t kRankSortLimit = 64;

// The bits a ranking key gives the arrival index: 5 up to 32 hits, 6 up to 64.
constexpr std::uint32_t rank_index_bits(std::uint32_t n) noexcept { return n <= 32 ? 5 : 6; }

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
  } else if (n > kRankSortLimit || (hi - lo) >> (32 - rank_index_bits(n)) != 0) {
    radix_sort(hits, n, lo);
  } else {
    rank_sort(hits, n, lo);
  }
}

// Each hit's place is the number of hits earlier than it, a tie counting when it arrived first.
// sort() calls this only for at most 64 hits whose relative times leave room for the arrival
// index in a 32-bit key: below 2^27 ns (134 ms, more than a pulse period) for up to 32 hits and
// 5 index bits, below 2^26 ns (67 ms) for up to 64 hits and 6 bits. The keys are then unique and
// ordered by time and then arrival:
//   key_i = (time_i − earliest)·2^bits + i
//   rank(i) = #{j : key_j < key_i}
// The keys are stored with their top bit flipped (key ^ 2^31): as signed integers they are then
// ordered exactly as unsigned, and SSE2 has only the signed compare.
// The count runs eight hits at a time: each key_j is compared with eight key_i at once and adds
// to eight ranks, so a batch of n costs n·⌈n/8⌉ such steps (GCC unrolls them into SSE2 compares
// and subtractions, 24 instructions for 4 × 8 pairs), with no branch and no tie term: under one
// instruction per pair of hits, against the radix sort's fixed cost of its 256-entry tables. The
// keys past n in the last block of eight are padding whose ranks are not used.
void HitSorter::rank_sort(Hit* hits, std::uint32_t n, std::uint64_t lo) noexcept {
  constexpr std::uint32_t kBlock = 8;
  alignas(16) std::int32_t keys[kRankSortLimit];
  const std::uint32_t bits = rank_index_bits(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto relative = static_cast<std::uint32_t>(hits[i].time_ns - lo);
    keys[i] = static_cast<std::int32_t>((relative << bits | i) ^ 0x8000'0000U);
  }
  const std::uint32_t padded = (n + kBlock - 1) / kBlock * kBlock;
  for (std::uint32_t i = n; i < padded; ++i) keys[i] = 0;
  Hit* out = scratch_.data();
  for (std::uint32_t block = 0; block < n; block += kBlock) {
    alignas(16) std::int32_t rank[kBlock] = {};
    for (std::uint32_t j = 0; j < n; ++j) {
      const std::int32_t k = keys[j];
      for (std::uint32_t l = 0; l < kBlock; ++l) rank[l] += k < keys[block + l] ? 1 : 0;
    }
    const std::uint32_t here = std::min(kBlock, n - block);
    for (std::uint32_t l = 0; l < here; ++l) out[rank[l]] = hits[block + l];
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

// Backward, so that what moves is only what is out of place: a packet brings mostly hits later
// than all held (they stay where they are) and a few late ones, while the held hits later than
// the earliest late one can be a few packets' worth, about ten for each late hit.
//   - stay: the second run's hits not earlier than the first run's last are in place;
//   - the second run's hits before them (the late ones) go to the scratch space;
//   - from the last late hit to the first: the first run's hits later than it (a scan back, as
//     the blocks are short) move up as one block (memmove) and the late hit goes below them.
//     A first-run hit equal to a late one stays below it (stable: the first run first on ties).
// Moving up never overwrites a first-run hit still to be placed: out = a + (late hits not yet
// placed) ≥ a.
void HitSorter::merge(Hit* hits, std::uint32_t mid, std::uint32_t end) noexcept {
  if (mid == 0 || mid == end || !earlier(hits[mid], hits[mid - 1])) return;
  Hit* stay = std::lower_bound(hits + mid, hits + end, hits[mid - 1], earlier);
  const Hit* late_begin = scratch_.data();
  const Hit* late = std::copy(hits + mid, stay, scratch_.data());  // one past the next to place
  Hit* a = hits + mid;  // one past the next first-run hit to place
  Hit* out = stay;      // one past the next place to fill
  while (late != late_begin) {
    const Hit& h = *--late;
    Hit* from = a;
    while (from != hits && earlier(h, from[-1])) --from;
    out = std::copy_backward(from, a, out);
    a = from;
    *--out = h;
  }
}

}  // namespace efu::vmm3a
