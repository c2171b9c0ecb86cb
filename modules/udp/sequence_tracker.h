// Sequence accounting of one link-test stream: loss, reordering, duplicates, sender restarts.
//
// Definitions (docs/udp-link-test.md repeats them for users):
//  - A *run* is the stream from one sender start. It begins at the format's start value when the
//    first number seen is within kWindow of it, else at the first number seen (efu joined a
//    running sender; what was sent before is not counted).
//  - expected = numbers from the run's first to the highest seen, summed over runs.
//  - The tracker remembers which of the last kWindow numbers (up to the highest) arrived.
//    A missing number is counted *lost* only when it leaves that window unfilled, so lost never
//    decreases and a late packet inside the window is simply *out_of_order*. flush() settles the
//    window at stop.
//  - duplicate: a number inside the window that already arrived (or the highest again).
//  - restart: a number within kWindow of the start value that is kWindow or more behind, or more
//    than kWindow ahead of, the highest. A new run begins at the start value; the old run's
//    window is settled first.
//  - stale: any other number kWindow or more behind the highest; counted as out_of_order. Its
//    loss was already counted and stays counted.
//  - foreign: a number more than kMaxJump (2^24) ahead of the highest and not a restart is not
//    believed (one corrupted number must not add millions to lost); counted as out_of_order,
//    window unmoved. If kJumpConfirm foreign numbers in a row follow each other (n, n+1, ...),
//    the sender really jumped: that counts as a restart, a new run begins at n, and those
//    numbers are accounted in it (not as out_of_order). The gap itself is not counted as lost:
//    2^24 datagrams is over a second of total loss at 10 Gb/s of the smallest datagrams.
//  - 32-bit sequence numbers are unwrapped to 64 bits by serial-number arithmetic, so the udptx
//    counter may wrap; 64-bit numbers wrap modulo 2^64 the same way.
#pragma once

#include <array>
#include <cstdint>

#include "payload.h"

namespace efu::udp {

struct SequenceStats {
  std::uint64_t packets = 0;  // every datagram, runts included
  std::uint64_t bytes = 0;    // user data bytes of every datagram
  std::uint64_t expected = 0;
  std::uint64_t lost = 0;
  std::uint64_t out_of_order = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t restarts = 0;
  std::uint64_t runts = 0;
  std::uint64_t corrupted = 0;  // filler mismatch (only with payload verification on)
};

class SequenceTracker {
 public:
  static constexpr std::uint64_t kWindow = 1024;  // power of two: slot = seq & (kWindow - 1)
  static constexpr std::uint64_t kMaxJump = 1ULL << 24;
  static constexpr std::uint64_t kJumpConfirm = 4;

  explicit SequenceTracker(SeqFormat format, bool verify_payload = false) noexcept;

  /// Accounts one datagram. Any size and content is accepted.
  void on_packet(const std::uint8_t* data, std::uint32_t size) noexcept;
  /// Accounts one sequence number directly (for the datagram path see on_packet).
  void on_sequence(std::uint64_t raw_seq) noexcept;
  /// Counts the window's still-missing numbers as lost (at stop). Idempotent.
  void flush() noexcept;

  const SequenceStats& stats() const noexcept { return stats_; }
  SeqFormat format() const noexcept { return format_; }

 private:
  std::uint64_t extend(std::uint64_t raw_seq) const noexcept;
  bool in_start_region(std::uint64_t raw_seq) const noexcept;
  void begin_run(std::uint64_t raw_seq, std::uint64_t seq) noexcept;
  void advance(std::uint64_t seq) noexcept;
  void settle_window() noexcept;
  void on_foreign(std::uint64_t raw_seq, std::uint64_t seq) noexcept;

  bool seen(std::uint64_t seq) const noexcept {
    return (bits_[(seq & kMask) >> 6] >> (seq & 63)) & 1U;
  }
  void mark(std::uint64_t seq) noexcept { bits_[(seq & kMask) >> 6] |= 1ULL << (seq & 63); }
  void unmark(std::uint64_t seq) noexcept { bits_[(seq & kMask) >> 6] &= ~(1ULL << (seq & 63)); }
  /// mark() for `count` (<= kWindow) consecutive numbers from `first`, a word at a time.
  void mark_range(std::uint64_t first, std::uint64_t count) noexcept {
    while (count > 0) {
      const std::uint64_t bit = first & 63;
      const std::uint64_t n = count < 64 - bit ? count : 64 - bit;
      const std::uint64_t ones = n == 64 ? ~0ULL : (1ULL << n) - 1;
      bits_[(first & kMask) >> 6] |= ones << bit;
      first += n;
      count -= n;
    }
  }

  static constexpr std::uint64_t kMask = kWindow - 1;

  SeqFormat format_;
  bool verify_payload_;
  bool started_ = false;
  std::uint64_t base_ = 0;     // first number of the current run (unwrapped)
  std::uint64_t highest_ = 0;  // highest number of the current run (unwrapped)
  std::array<std::uint64_t, kWindow / 64>
      bits_{};  // arrival bitmap of (highest - kWindow, highest]
  SequenceStats stats_;
  // The current streak of foreign numbers that follow each other (see the header comment).
  std::uint64_t foreign_first_raw_ = 0;
  std::uint64_t foreign_first_ = 0;
  std::uint64_t foreign_count_ = 0;
};

}  // namespace efu::udp
