#include "efu/kafka/ev44_builder.h"

#include <flatbuffers/flatbuffers.h>

#include "efu/errors.h"
#include "efu/schemas/ev44_events_generated.h"

namespace efu::kafka {
namespace {

// The string's length prefix, terminator and padding to 4 bytes.
std::size_t string_bytes(const std::string& s) { return 4 + s.size() + 1 + 3; }

}  // namespace

Ev44Builder::Ev44Builder(std::string source_name, std::size_t max_bytes)
    : source_name_(std::move(source_name)),
      max_bytes_(max_bytes),
      fixed_bytes_(kFixedOverhead + string_bytes(source_name_)),
      event_capacity_(0) {
  if (max_bytes_ < fixed_bytes_ + kBytesPerEvent + kBytesPerReferenceTime) {
    throw ConfigError("--ev44-max-bytes: '" + std::to_string(max_bytes) +
                      "' is too small for source '" + source_name_ + "'; expected at least " +
                      std::to_string(fixed_bytes_ + kBytesPerEvent + kBytesPerReferenceTime));
  }
  if ((max_bytes_ - fixed_bytes_) / kBytesPerEvent > 0x7fffffffU) {
    throw ConfigError("--ev44-max-bytes: '" + std::to_string(max_bytes) +
                      "' is too large; expected at most 16 GB");
  }
  // Worst case for events: one reference time for all of them. Worst case for reference times:
  // a new one per event. Sizing every array for the worst case keeps add() free of checks.
  event_capacity_ = (max_bytes_ - fixed_bytes_ - kBytesPerReferenceTime) / kBytesPerEvent;
  time_of_flight_ = std::make_unique<std::int32_t[]>(event_capacity_);
  pixel_id_ = std::make_unique<std::int32_t[]>(event_capacity_);
  reference_time_ = std::make_unique<std::int64_t[]>(event_capacity_);
  reference_index_ = std::make_unique<std::int32_t[]>(event_capacity_);
  // Room for the largest message up front so the builder never grows its buffer.
  fbb_ = std::make_unique<flatbuffers::FlatBufferBuilder>(max_bytes_ + 1024);
  // The builder allocates its buffer lazily, at first use: make that happen here, not in the
  // first finish() on a processing thread.
  (void)finish(0);
  reset();
}

Ev44Builder::~Ev44Builder() = default;

std::span<const std::uint8_t> Ev44Builder::finish(std::int64_t message_id) {
  flatbuffers::FlatBufferBuilder& fbb = *fbb_;
  fbb.Clear();
  // Children first: FlatBuffers builds back to front.
  const auto pixel = fbb.CreateVector(pixel_id_.get(), events_);
  const auto tof = fbb.CreateVector(time_of_flight_.get(), events_);
  const auto index = fbb.CreateVector(reference_index_.get(), references_);
  const auto reference = fbb.CreateVector(reference_time_.get(), references_);
  const auto source = fbb.CreateString(source_name_);
  const auto root = CreateEvent44Message(fbb, source, message_id, reference, index, tof, pixel);
  FinishEvent44MessageBuffer(fbb, root);
  return {fbb.GetBufferPointer(), fbb.GetSize()};
}

void Ev44Builder::reset() noexcept {
  events_ = 0;
  references_ = 0;
  last_pulse_ns_ = 0;
}

}  // namespace efu::kafka
