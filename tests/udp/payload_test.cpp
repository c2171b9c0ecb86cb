#include "payload.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "sequence_tracker.h"

namespace efu::udp {
namespace {

class PayloadTest : public ::testing::TestWithParam<SeqFormat> {};

TEST_P(PayloadTest, WrittenFillerVerifiesAtEverySize) {
  const SeqFormat f = GetParam();
  for (std::uint32_t size = seq_size(f); size < 80; ++size) {
    std::vector<std::uint8_t> d(size);
    write_seq(f, 12345, d.data());
    write_filler(f, 12345, d.data(), size);
    EXPECT_TRUE(filler_matches(f, 12345, d.data(), size)) << "size " << size;
  }
}

TEST_P(PayloadTest, AnyFlippedByteFailsVerification) {
  const SeqFormat f = GetParam();
  const std::uint32_t size = 8972;
  std::vector<std::uint8_t> d(size);
  write_seq(f, 7, d.data());
  write_filler(f, 7, d.data(), size);
  for (std::uint32_t i = seq_size(f); i < size; i += 97) {
    d[i] ^= 0x10;
    EXPECT_FALSE(filler_matches(f, 7, d.data(), size)) << "byte " << i;
    d[i] ^= 0x10;
  }
  d[size - 1] ^= 1;  // the cut-short last word counts too
  EXPECT_FALSE(filler_matches(f, 7, d.data(), size));
}

TEST_P(PayloadTest, FillerDependsOnTheSequenceNumber) {
  const SeqFormat f = GetParam();
  std::vector<std::uint8_t> d(1472);
  write_filler(f, 100, d.data(), d.size());
  EXPECT_FALSE(filler_matches(f, 101, d.data(), d.size()));
  std::vector<std::uint8_t> zeros(1472, 0);
  EXPECT_FALSE(filler_matches(f, 0, zeros.data(), zeros.size()));
}

TEST_P(PayloadTest, TrackerCountsCorruptedOnlyWithVerificationOn) {
  const SeqFormat f = GetParam();
  std::vector<std::uint8_t> good(1000);
  write_seq(f, seq_start(f), good.data());
  write_filler(f, seq_start(f), good.data(), good.size());
  std::vector<std::uint8_t> bad(1000);
  write_seq(f, seq_start(f) + 1, bad.data());
  write_filler(f, seq_start(f) + 1, bad.data(), bad.size());
  bad[500] ^= 0xFF;

  SequenceTracker verifying(f, true);
  SequenceTracker trusting(f, false);
  for (SequenceTracker* t : {&verifying, &trusting}) {
    t->on_packet(good.data(), 1000);
    t->on_packet(bad.data(), 1000);
    t->flush();
  }
  EXPECT_EQ(verifying.stats().corrupted, 1U);
  EXPECT_EQ(trusting.stats().corrupted, 0U);
  // A corrupted filler still carries a sequence number: it is not lost.
  EXPECT_EQ(verifying.stats().lost, 0U);
  EXPECT_EQ(verifying.stats().expected, 2U);
}

INSTANTIATE_TEST_SUITE_P(Formats, PayloadTest,
                         ::testing::Values(SeqFormat::kEfu64, SeqFormat::kUdptx32),
                         [](const auto& param_info) {
                           return std::string(seq_format_name(param_info.param));
                         });

TEST(SeqFormatNames, ParseRoundTripsAndRejectsOthers) {
  EXPECT_EQ(parse_seq_format("efu64"), SeqFormat::kEfu64);
  EXPECT_EQ(parse_seq_format("udptx32"), SeqFormat::kUdptx32);
  EXPECT_FALSE(parse_seq_format("udptx").has_value());
  EXPECT_FALSE(parse_seq_format("").has_value());
}

TEST(SeqFormatWire, Efu64IsLittleEndianFromZero) {
  std::uint8_t d[8] = {};
  write_seq(SeqFormat::kEfu64, 0x0102030405060708ULL, d);
  EXPECT_EQ(d[0], 0x08);
  EXPECT_EQ(d[7], 0x01);
  EXPECT_EQ(seq_start(SeqFormat::kEfu64), 0U);
  EXPECT_EQ(seq_start(SeqFormat::kUdptx32), 1U);
}

}  // namespace
}  // namespace efu::udp
