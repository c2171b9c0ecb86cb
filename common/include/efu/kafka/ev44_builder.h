// Accumulates neutron events and serialises them as one ev44 FlatBuffers message
// (docs/architecture.md §5.3).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>

namespace flatbuffers {
class FlatBufferBuilder;
}

namespace efu::kafka {

/// Every array and the FlatBufferBuilder are sized once, in the constructor, from `max_bytes`;
/// add() only writes into those arrays and finish() copies them into the reused builder, so no
/// call after construction allocates. Use: add() while !full(), finish(), hand the bytes on,
/// reset().
class Ev44Builder {
 public:
  /// Bytes a message needs besides its arrays and source name: header, vtable, table, vector
  /// length prefixes and alignment padding (an upper bound).
  static constexpr std::size_t kFixedOverhead = 128;
  static constexpr std::size_t kBytesPerEvent = 8;           // time_of_flight + pixel_id
  static constexpr std::size_t kBytesPerReferenceTime = 12;  // reference_time + its index

  /// Throws ConfigError when `max_bytes` cannot hold at least one event.
  Ev44Builder(std::string source_name, std::size_t max_bytes);
  ~Ev44Builder();
  Ev44Builder(const Ev44Builder&) = delete;
  Ev44Builder& operator=(const Ev44Builder&) = delete;

  /// Precondition: !full(). A pulse time different from the previous event's opens a new
  /// reference_time entry.
  void add(std::uint64_t pulse_time_ns, std::uint32_t time_of_flight_ns,
           std::uint32_t pixel_id) noexcept {
    if (events_ == 0 || pulse_time_ns != last_pulse_ns_) {
      reference_time_[references_] = static_cast<std::int64_t>(pulse_time_ns);
      reference_index_[references_] = static_cast<std::int32_t>(events_);
      ++references_;
      last_pulse_ns_ = pulse_time_ns;
    }
    time_of_flight_[events_] = static_cast<std::int32_t>(time_of_flight_ns);
    pixel_id_[events_] = static_cast<std::int32_t>(pixel_id);
    ++events_;
  }

  /// Appends up to `n` events of one pulse, as many as the message has room for, and returns
  /// how many (at least 1 when n >= 1). Precondition: !full(). The arrays are copied as blocks.
  std::size_t add_pulse(std::uint64_t pulse_time_ns, const std::uint32_t* time_of_flight_ns,
                        const std::uint32_t* pixel_id, std::size_t n) noexcept {
    const bool new_reference = events_ == 0 || pulse_time_ns != last_pulse_ns_;
    // !full() leaves room for at least one event with a new reference time.
    const std::size_t room =
        (max_bytes_ - size() - (new_reference ? kBytesPerReferenceTime : 0)) / kBytesPerEvent;
    const std::size_t k = n < room ? n : room;
    if (k == 0) return 0;
    if (new_reference) {
      reference_time_[references_] = static_cast<std::int64_t>(pulse_time_ns);
      reference_index_[references_] = static_cast<std::int32_t>(events_);
      ++references_;
      last_pulse_ns_ = pulse_time_ns;
    }
    // uint32 → int32 is the same bits: the message's fields are signed, the values are not.
    std::memcpy(time_of_flight_.get() + events_, time_of_flight_ns, k * sizeof(std::int32_t));
    std::memcpy(pixel_id_.get() + events_, pixel_id, k * sizeof(std::int32_t));
    events_ += k;
    return k;
  }

  /// True when one more event (possibly with a new reference time) might not fit.
  bool full() const noexcept {
    return size() + kBytesPerEvent + kBytesPerReferenceTime > max_bytes_;
  }
  bool empty() const noexcept { return events_ == 0; }
  std::size_t events() const noexcept { return events_; }
  std::size_t reference_times() const noexcept { return references_; }
  /// Upper bound of the serialised size of what is buffered now.
  std::size_t size() const noexcept {
    return fixed_bytes_ + events_ * kBytesPerEvent + references_ * kBytesPerReferenceTime;
  }
  std::size_t max_bytes() const noexcept { return max_bytes_; }
  /// Most events one message can hold (all with the same pulse time).
  std::size_t event_capacity() const noexcept { return event_capacity_; }

  /// Serialises the buffered events. The bytes stay valid until the next finish() or reset().
  std::span<const std::uint8_t> finish(std::int64_t message_id);
  /// Empties the buffer for the next message; keeps all memory.
  void reset() noexcept;

 private:
  std::string source_name_;
  std::size_t max_bytes_;
  std::size_t fixed_bytes_;
  std::size_t event_capacity_;
  std::unique_ptr<std::int32_t[]> time_of_flight_;
  std::unique_ptr<std::int32_t[]> pixel_id_;
  std::unique_ptr<std::int64_t[]> reference_time_;
  std::unique_ptr<std::int32_t[]> reference_index_;
  std::size_t events_ = 0;
  std::size_t references_ = 0;
  std::uint64_t last_pulse_ns_ = 0;
  std::unique_ptr<flatbuffers::FlatBufferBuilder> fbb_;
};

}  // namespace efu::kafka
