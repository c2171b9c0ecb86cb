#include "efu/kafka/ar51_builder.h"

#include <flatbuffers/flatbuffers.h>

#include "efu/schemas/ar51_readout_data_generated.h"

namespace efu::kafka {

Ar51Builder::Ar51Builder(std::string source_name, std::size_t max_payload_bytes)
    : source_name_(std::move(source_name)),
      fbb_(std::make_unique<flatbuffers::FlatBufferBuilder>(max_payload_bytes +
                                                            source_name_.size() + 256)) {
  // The builder allocates its buffer at first use: do it here, not on a processing thread.
  const std::uint8_t nothing = 0;
  (void)build(0, &nothing, 0);
}

Ar51Builder::~Ar51Builder() = default;

std::span<const std::uint8_t> Ar51Builder::build(std::int64_t message_id, const std::uint8_t* data,
                                                 std::uint32_t size) {
  flatbuffers::FlatBufferBuilder& fbb = *fbb_;
  fbb.Clear();
  const auto raw = fbb.CreateVector(data, size);
  const auto source = fbb.CreateString(source_name_);
  FinishRawReadoutMessageBuffer(fbb, CreateRawReadoutMessage(fbb, source, message_id, raw));
  return {fbb.GetBufferPointer(), fbb.GetSize()};
}

}  // namespace efu::kafka
