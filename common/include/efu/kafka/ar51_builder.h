// Serialises one raw UDP payload as an ar51 RawReadoutMessage (docs/architecture.md §5.3).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace flatbuffers {
class FlatBufferBuilder;
}

namespace efu::kafka {

/// Reuses one FlatBufferBuilder, sized for the largest datagram, for every message.
class Ar51Builder {
 public:
  Ar51Builder(std::string source_name, std::size_t max_payload_bytes);
  ~Ar51Builder();
  Ar51Builder(const Ar51Builder&) = delete;
  Ar51Builder& operator=(const Ar51Builder&) = delete;

  /// The bytes stay valid until the next build().
  std::span<const std::uint8_t> build(std::int64_t message_id, const std::uint8_t* data,
                                      std::uint32_t size);

 private:
  std::string source_name_;
  std::unique_ptr<flatbuffers::FlatBufferBuilder> fbb_;
};

}  // namespace efu::kafka
