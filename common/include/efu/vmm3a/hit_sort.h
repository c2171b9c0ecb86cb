// Sorting a unit's pending hits by time (time_groups.h). A packet brings a few hits per unit, in
// any order; the sorter picks, per batch, the cheapest exact method:
//   - already in order: nothing (one pass counting descents);
//   - nearly in order (at most one descent per four hits): insertion, which mispredicts only at
//     the descents;
//   - up to 32 shuffled hits less than 2^27 ns (134 ms) apart, or up to 64 less than 2^26 ns:
//     ranking (each hit's place = how many are earlier), branch-free over 32-bit keys of
//     relative time and arrival index, eight hits per step;
//   - more, or further apart: an LSD radix sort of (32-bit relative time, arrival index),
//     skipping the bytes that every key shares; linear and branch-free like the ranking;
//   - times more than 2^32 ns apart (not one packet's pulse window; never on a sane stream):
//     std::sort.
// Every method orders by time_ns; hits of equal time keep their arrival order, except under
// std::sort, where their order is unspecified. No time group depends on it (groups are decided
// by times alone). No method allocates.
#pragma once

#include <cstdint>
#include <vector>

#include "efu/vmm3a/hit.h"

namespace efu::vmm3a {

class HitSorter {
 public:
  /// Room for batches of up to `capacity` hits (a unit's whole buffer).
  explicit HitSorter(std::uint32_t capacity);

  /// Sorts hits[0..n) by time.
  void sort(Hit* hits, std::uint32_t n) noexcept;

  /// hits[0..mid) and hits[mid..end) are each sorted by time: merges them in place (through the
  /// scratch space), stable (on equal times the first run's hits first), moving only the second
  /// run's hits earlier than the first run's last and the first run's hits later than those.
  void merge(Hit* hits, std::uint32_t mid, std::uint32_t end) noexcept;

 private:
  void rank_sort(Hit* hits, std::uint32_t n, std::uint64_t lo) noexcept;
  void radix_sort(Hit* hits, std::uint32_t n, std::uint64_t lo) noexcept;

  std::vector<Hit> scratch_;
  std::vector<std::uint64_t> radix_a_;  // radix sort keys
  std::vector<std::uint64_t> radix_b_;
};

}  // namespace efu::vmm3a
