#include "efu/kafka/ar51_builder.h"

#include <vector>

#include <gtest/gtest.h>

#include "efu/schemas/ar51_readout_data_generated.h"

namespace efu::kafka {
namespace {

TEST(Ar51Builder, RoundTripsPayloadAndId) {
  Ar51Builder b("loki", 9000);
  std::vector<std::uint8_t> payload(8972);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(i * 7);
  for (std::int64_t id : {0, 1, 123456789}) {
    const auto bytes = b.build(id, payload.data(), static_cast<std::uint32_t>(payload.size()));
    flatbuffers::Verifier verifier(bytes.data(), bytes.size());
    ASSERT_TRUE(VerifyRawReadoutMessageBuffer(verifier));
    const RawReadoutMessage* m = GetRawReadoutMessage(bytes.data());
    EXPECT_EQ(m->source_name()->str(), "loki");
    EXPECT_EQ(m->message_id(), id);
    EXPECT_EQ(std::vector<std::uint8_t>(m->raw_data()->begin(), m->raw_data()->end()), payload);
  }
}

}  // namespace
}  // namespace efu::kafka
