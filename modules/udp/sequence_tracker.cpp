#include "sequence_tracker.h"

#include <bit>

namespace efu::udp {

SequenceTracker::SequenceTracker(SeqFormat format, bool verify_payload) noexcept
    : format_(format), verify_payload_(verify_payload) {}

void SequenceTracker::on_packet(const std::uint8_t* data, std::uint32_t size) noexcept {
  ++stats_.packets;
  stats_.bytes += size;
  if (size < seq_size(format_)) {
    ++stats_.runts;
    return;
  }
  const std::uint64_t raw = read_seq(format_, data);
  if (verify_payload_ && !filler_matches(format_, raw, data, size)) ++stats_.corrupted;
  on_sequence(raw);
}

std::uint64_t SequenceTracker::extend(std::uint64_t raw_seq) const noexcept {
  if (format_ == SeqFormat::kEfu64) return raw_seq;
  // Serial-number arithmetic: the 32-bit value nearest to the highest seen, either way.
  const auto delta = static_cast<std::int32_t>(static_cast<std::uint32_t>(raw_seq) -
                                               static_cast<std::uint32_t>(highest_));
  return highest_ + static_cast<std::uint64_t>(static_cast<std::int64_t>(delta));
}

bool SequenceTracker::in_start_region(std::uint64_t raw_seq) const noexcept {
  const std::uint64_t from_start = raw_seq - seq_start(format_);
  if (format_ == SeqFormat::kUdptx32) return static_cast<std::uint32_t>(from_start) < kWindow;
  return from_start < kWindow;
}

void SequenceTracker::begin_run(std::uint64_t raw_seq, std::uint64_t seq) noexcept {
  // In the start region the run starts at the start value, so numbers lost before the first
  // arrival count.
  std::uint64_t from_start = 0;
  if (in_start_region(raw_seq)) {
    from_start = raw_seq - seq_start(format_);
    if (format_ == SeqFormat::kUdptx32) from_start = static_cast<std::uint32_t>(from_start);
  }
  base_ = seq - from_start;
  highest_ = seq;
  bits_.fill(0);
  mark(seq);
  stats_.expected += seq - base_ + 1;
  started_ = true;
}

void SequenceTracker::on_sequence(std::uint64_t raw_seq) noexcept {
  if (!started_) {
    begin_run(raw_seq, raw_seq);
    return;
  }
  const std::uint64_t seq = extend(raw_seq);
  const std::uint64_t ahead = seq - highest_;
  const std::uint64_t behind = highest_ - seq;
  if (ahead != 0 && ahead < (1ULL << 63)) {  // a new highest
    if (ahead > kWindow && in_start_region(raw_seq)) {
      settle_window();
      ++stats_.restarts;
      begin_run(raw_seq, seq);
      return;
    }
    if (ahead > kMaxJump) {
      on_foreign(raw_seq, seq);
      return;
    }
    stats_.expected += ahead;
    advance(seq);
    return;
  }
  if (behind >= kWindow) {  // ahead == 0 gives behind == 0, so this is strictly behind
    if (in_start_region(raw_seq)) {
      settle_window();
      ++stats_.restarts;
      // A restart seen through a 32-bit unwrap lands below the old run; any 64-bit base works
      // since only differences are used.
      begin_run(raw_seq, seq);
    } else {
      ++stats_.out_of_order;  // stale: too late to reconcile with the settled window
    }
    return;
  }
  // Inside the window (behind < kWindow), or the highest itself (behind == 0).
  if (seq - base_ >= (1ULL << 63)) {
    // Before the run's first number but inside the window: the run really began earlier.
    // The numbers in between become pending gaps (their bits are clear).
    stats_.expected += base_ - seq;
    base_ = seq;
    mark(seq);
    ++stats_.out_of_order;
    return;
  }
  if (seen(seq)) {
    ++stats_.duplicates;
    return;
  }
  mark(seq);
  ++stats_.out_of_order;
}

void SequenceTracker::on_foreign(std::uint64_t raw_seq, std::uint64_t seq) noexcept {
  ++stats_.out_of_order;
  if (foreign_count_ != 0 && seq == foreign_first_ + foreign_count_) {
    ++foreign_count_;
  } else {
    foreign_first_raw_ = raw_seq;
    foreign_first_ = seq;
    foreign_count_ = 1;
  }
  if (foreign_count_ < kJumpConfirm) return;
  // Confirmed: the sender jumped. The streak's numbers become the first of a new run.
  const std::uint64_t count = foreign_count_;
  foreign_count_ = 0;
  stats_.out_of_order -= count;
  settle_window();
  ++stats_.restarts;
  begin_run(foreign_first_raw_, foreign_first_);
  for (std::uint64_t i = 1; i < count; ++i) {
    stats_.expected += 1;
    advance(foreign_first_ + i);
  }
}

void SequenceTracker::advance(std::uint64_t seq) noexcept {
  const std::uint64_t ahead = seq - highest_;
  if (ahead >= kWindow) {
    settle_window();
    // Numbers that skipped the window entirely, (highest, seq - kWindow], are lost at once.
    stats_.lost += ahead - kWindow;
    bits_.fill(0);
  } else {
    // Each new position reuses the slot of the number kWindow below it, which leaves the window.
    for (std::uint64_t p = highest_ + 1; p != seq + 1; ++p) {
      if (p - base_ >= kWindow && !seen(p)) ++stats_.lost;
      unmark(p);
    }
  }
  highest_ = seq;
  mark(seq);
}

void SequenceTracker::settle_window() noexcept {
  if (!started_) return;
  // Positions in the window that belong to the run: min(kWindow, highest - base + 1).
  const std::uint64_t span = highest_ - base_ + 1;
  const std::uint64_t positions = span < kWindow ? span : kWindow;
  std::uint64_t arrived = 0;
  for (const std::uint64_t word : bits_) arrived += static_cast<std::uint64_t>(std::popcount(word));
  stats_.lost += positions - arrived;
  // Count each gap once: the settled positions now read as arrived.
  mark_range(highest_ - positions + 1, positions);
}

void SequenceTracker::flush() noexcept { settle_window(); }

}  // namespace efu::udp
