// A pipeline's events collected per pulse and handed to the EventSink a run at a time
// (EventSink::add_pulse, plugin.h). A neutron detector's events come in long runs of one pulse
// time (a pulse lasts 71 ms, a packet holds hundreds of readouts), so a pipeline that forms one
// event per readout (CAEN, CDT) spends most of its sink cost on the per-event virtual call and
// the message's per-event bookkeeping; buffering turns those into one call per run.
//
//   EventBuffer out(context.events);
//   for (...) out.add(pulse_ns, tof_ns, pixel);   // in process()
//   out.flush();                                   // before process() returns
//
// The order of events is kept: a run ends when the pulse time changes or the buffer is full.
// Call flush() before process(), tick() or flush() of the pipeline returns, so that no event
// waits in the buffer while the thread sleeps; the host's latency rule (--ev44-max-latency-ms)
// then applies as before. Holds no pointer into a packet: events are copied.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "efu/plugin.h"

namespace efu {

class EventBuffer {
 public:
  /// Events per run at most: 2 KB of TOFs and pixels, small enough to stay in L1. A full
  /// 8972-byte packet of the smallest readout (16 bytes) holds 560, so such a packet's events
  /// reach the sink in three calls instead of 560.
  static constexpr std::size_t kCapacity = 256;

  explicit EventBuffer(EventSink& sink) noexcept : sink_(sink) {}
  EventBuffer(const EventBuffer&) = delete;
  EventBuffer& operator=(const EventBuffer&) = delete;

  void add(std::uint64_t pulse_time_ns, std::uint32_t time_of_flight_ns, std::uint32_t pixel_id) {
    if (pulse_time_ns != pulse_ns_ || count_ == kCapacity) [[unlikely]]
      start_run(pulse_time_ns);
    tof_[count_] = time_of_flight_ns;
    pixel_[count_] = pixel_id;
    ++count_;
  }

  /// N events of one pulse at once, in order: the same as N add()s, in two copies (a parser that
  /// forms several events at a time, such as CAEN's eight lanes). Where the buffer has fewer than
  /// N places left it is handed on first, so a run to the sink may end a little before it is
  /// full; the events and their order are the same.
  template <std::size_t N>
  void add(std::uint64_t pulse_time_ns, const std::uint32_t (&time_of_flight_ns)[N],
           const std::uint32_t (&pixel_id)[N]) {
    static_assert(N <= kCapacity);
    if (pulse_time_ns != pulse_ns_ || kCapacity - count_ < N) [[unlikely]]
      start_run(pulse_time_ns);
    std::memcpy(&tof_[count_], time_of_flight_ns, sizeof time_of_flight_ns);
    std::memcpy(&pixel_[count_], pixel_id, sizeof pixel_id);
    count_ += N;
  }

  /// Hands the buffered run to the sink; the buffer is empty afterwards.
  void flush() {
    if (count_ != 0) sink_.add_pulse(pulse_ns_, tof_.data(), pixel_.data(), count_);
    count_ = 0;
  }

  std::size_t size() const noexcept { return count_; }

 private:
  void start_run(std::uint64_t pulse_time_ns) {
    flush();
    pulse_ns_ = pulse_time_ns;
  }

  EventSink& sink_;
  std::uint64_t pulse_ns_ = 0;
  std::size_t count_ = 0;
  std::array<std::uint32_t, kCapacity> tof_;
  std::array<std::uint32_t, kCapacity> pixel_;
};

}  // namespace efu
