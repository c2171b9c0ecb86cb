#include "efu/ess/readout_header.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "efu/ess/header_writer.h"

namespace efu::ess {
namespace {

constexpr std::uint8_t kType = 0x48;

const char* const kErrorNames[] = {"padding",       "version",          "cookie",
                                   "type",          "length",           "output_queue",
                                   "time_fraction", "prev_pulse_later", "sequence"};

HeaderFields fields(std::uint8_t version = 1) {
  HeaderFields f;
  f.version = version;
  f.type = kType;
  f.output_queue = 3;
  f.time_source = 0x05;
  f.pulse = EssTime{1'700'000'000, 1000};
  f.prev_pulse = EssTime{1'699'999'999, 82'000'000};
  f.sequence = 7;
  return f;
}

std::vector<std::uint8_t> packet(HeaderFields f, std::uint32_t payload = 40) {
  std::vector<std::uint8_t> bytes(header_size(f.version) + payload, 0xAB);
  f.total_length = static_cast<std::uint16_t>(bytes.size());
  write_header(bytes.data(), f);
  return bytes;
}

class HeaderParserTest : public ::testing::Test {
 protected:
  HeaderStatus parse(const std::vector<std::uint8_t>& bytes) {
    return parser.parse(bytes.data(), static_cast<std::uint32_t>(bytes.size()), header);
  }
  std::uint64_t errors(const std::string& reason) const {
    return counters.value("parser.essheader.errors." + reason);
  }
  // The one rejection reason that fired, and that no other counter moved.
  void expect_only_error(const std::string& reason) const {
    for (const char* name : kErrorNames) {
      EXPECT_EQ(errors(name), name == reason ? 1U : 0U) << name;
    }
    EXPECT_EQ(counters.value("parser.essheader.packets"), 0U);
  }

  CounterRegistry counters;
  HeaderParser parser{counters, kType};
  PacketHeader header{};
};

TEST_F(HeaderParserTest, AcceptsV1AndReportsEveryField) {
  ASSERT_EQ(parse(packet(fields(1))), HeaderStatus::kData);
  EXPECT_EQ(header.version, 1);
  EXPECT_EQ(header.header_size, kHeaderSizeV1);
  EXPECT_EQ(header.total_length, kHeaderSizeV1 + 40);
  EXPECT_EQ(header.output_queue, 3);
  EXPECT_EQ(header.time_source, 0x05);
  EXPECT_EQ(header.sequence, 7U);
  EXPECT_EQ(header.pulse_time_ns, to_ns(1'700'000'000, 1000));
  EXPECT_EQ(header.prev_pulse_time_ns, to_ns(1'699'999'999, 82'000'000));
  EXPECT_EQ(counters.value("parser.essheader.packets"), 1U);
}

TEST_F(HeaderParserTest, AcceptsV0WithItsShorterHeader) {
  ASSERT_EQ(parse(packet(fields(0))), HeaderStatus::kData);
  EXPECT_EQ(header.header_size, kHeaderSizeV0);
}

TEST_F(HeaderParserTest, HeaderOnlyPacketsAreHeartbeats) {
  EXPECT_EQ(parse(packet(fields(0), 0)), HeaderStatus::kHeartbeat);
  auto f = fields(1);
  f.sequence = 8;  // same queue: keep the sequence consecutive
  EXPECT_EQ(parse(packet(f, 0)), HeaderStatus::kHeartbeat);
  EXPECT_EQ(counters.value("parser.essheader.heartbeats"), 2U);
  EXPECT_EQ(counters.value("parser.essheader.packets"), 2U);
}

TEST_F(HeaderParserTest, RejectsNonZeroPadding) {
  auto p = packet(fields());
  p[0] = 1;
  EXPECT_EQ(parse(p), HeaderStatus::kRejected);
  expect_only_error("padding");
}

TEST_F(HeaderParserTest, RejectsUnknownVersion) {
  auto p = packet(fields());
  p[1] = 2;
  EXPECT_EQ(parse(p), HeaderStatus::kRejected);
  expect_only_error("version");
}

TEST_F(HeaderParserTest, RejectsWrongCookie) {
  for (int i = 2; i <= 4; ++i) {
    CounterRegistry c;
    HeaderParser p{c, kType};
    auto bytes = packet(fields());
    bytes[static_cast<std::size_t>(i)] = 'X';
    EXPECT_EQ(p.parse(bytes.data(), static_cast<std::uint32_t>(bytes.size()), header),
              HeaderStatus::kRejected);
    EXPECT_EQ(c.value("parser.essheader.errors.cookie"), 1U) << "byte " << i;
  }
}

TEST_F(HeaderParserTest, RejectsOtherDetectorTypes) {
  auto p = packet(fields());
  p[5] = 0x34;
  EXPECT_EQ(parse(p), HeaderStatus::kRejected);
  expect_only_error("type");
}

TEST_F(HeaderParserTest, RejectsPacketsShorterThanAnyHeader) {
  auto p = packet(fields(0), 0);
  EXPECT_EQ(parser.parse(p.data(), kHeaderSizeV0 - 1, header), HeaderStatus::kRejected);
  expect_only_error("length");
}

TEST_F(HeaderParserTest, RejectsV1PacketsShorterThanTheV1Header) {
  auto f = fields(1);
  std::vector<std::uint8_t> p(kHeaderSizeV1, 0);
  f.total_length = kHeaderSizeV0 + 1;
  write_header(p.data(), f);
  EXPECT_EQ(parser.parse(p.data(), kHeaderSizeV0 + 1, header), HeaderStatus::kRejected);
  expect_only_error("length");
}

TEST_F(HeaderParserTest, RejectsTotalLengthDifferentFromTheDatagram) {
  auto p = packet(fields());
  EXPECT_EQ(parser.parse(p.data(), static_cast<std::uint32_t>(p.size() - 1), header),
            HeaderStatus::kRejected);
  expect_only_error("length");
}

TEST_F(HeaderParserTest, RejectsOutputQueue12AndAbove) {
  auto f = fields();
  f.output_queue = 11;
  EXPECT_EQ(parse(packet(f)), HeaderStatus::kData);
  f.output_queue = 12;
  EXPECT_EQ(parse(packet(f)), HeaderStatus::kRejected);
  EXPECT_EQ(errors("output_queue"), 1U);
}

TEST_F(HeaderParserTest, RejectsTimeFractionsOfASecondOrMore) {
  auto f = fields();
  f.pulse.low = kTicksPerSecond;
  EXPECT_EQ(parse(packet(f)), HeaderStatus::kRejected);
  f = fields();
  f.prev_pulse.low = kTicksPerSecond;
  EXPECT_EQ(parse(packet(f)), HeaderStatus::kRejected);
  EXPECT_EQ(errors("time_fraction"), 2U);
  EXPECT_EQ(counters.value("parser.essheader.packets"), 0U);
}

TEST_F(HeaderParserTest, RejectsPreviousPulseLaterThanThePulse) {
  auto f = fields();
  f.prev_pulse = EssTime{f.pulse.high, f.pulse.low + 1};
  EXPECT_EQ(parse(packet(f)), HeaderStatus::kRejected);
  expect_only_error("prev_pulse_later");
}

TEST_F(HeaderParserTest, SequenceGapIsCountedButThePacketIsKept) {
  auto f = fields();
  f.sequence = 10;
  EXPECT_EQ(parse(packet(f)), HeaderStatus::kData);
  f.sequence = 11;
  EXPECT_EQ(parse(packet(f)), HeaderStatus::kData);
  EXPECT_EQ(errors("sequence"), 0U);
  f.sequence = 15;  // 12, 13, 14 lost upstream
  EXPECT_EQ(parse(packet(f)), HeaderStatus::kData);
  EXPECT_EQ(errors("sequence"), 1U);
  EXPECT_EQ(counters.value("parser.essheader.missing_packets"), 3U);
  f.sequence = 16;
  EXPECT_EQ(parse(packet(f)), HeaderStatus::kData);
  EXPECT_EQ(errors("sequence"), 1U);
  EXPECT_EQ(counters.value("parser.essheader.packets"), 4U);
}

TEST_F(HeaderParserTest, RepeatedSequenceIsAnErrorButNotMissingPackets) {
  auto f = fields();
  EXPECT_EQ(parse(packet(f)), HeaderStatus::kData);
  EXPECT_EQ(parse(packet(f)), HeaderStatus::kData);
  EXPECT_EQ(errors("sequence"), 1U);
  EXPECT_EQ(counters.value("parser.essheader.missing_packets"), 0U);
}

TEST_F(HeaderParserTest, SequenceIsTrackedPerOutputQueue) {
  auto a = fields();
  auto b = fields();
  a.output_queue = 0;
  b.output_queue = 5;
  a.sequence = 100;
  b.sequence = 7;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(parse(packet(a)), HeaderStatus::kData);
    EXPECT_EQ(parse(packet(b)), HeaderStatus::kData);
    ++a.sequence;
    ++b.sequence;
  }
  EXPECT_EQ(errors("sequence"), 0U);
  b.sequence += 1;
  EXPECT_EQ(parse(packet(b)), HeaderStatus::kData);
  EXPECT_EQ(parse(packet(a)), HeaderStatus::kData);
  EXPECT_EQ(errors("sequence"), 1U);
}

TEST_F(HeaderParserTest, SequenceWrapsAround) {
  auto f = fields();
  f.sequence = 0xFFFF'FFFF;
  EXPECT_EQ(parse(packet(f)), HeaderStatus::kData);
  f.sequence = 0;
  EXPECT_EQ(parse(packet(f)), HeaderStatus::kData);
  EXPECT_EQ(errors("sequence"), 0U);
}

TEST_F(HeaderParserTest, RejectedPacketsDoNotAdvanceTheSequence) {
  auto f = fields();
  EXPECT_EQ(parse(packet(f)), HeaderStatus::kData);
  ++f.sequence;
  auto bad = packet(f);
  bad[2] = 'X';
  EXPECT_EQ(parse(bad), HeaderStatus::kRejected);
  EXPECT_EQ(parse(packet(f)), HeaderStatus::kData);
  EXPECT_EQ(errors("sequence"), 0U);
}

TEST(RouteKey, IsTheOutputQueueByte) {
  auto f = fields();
  f.output_queue = 9;
  const auto p = packet(f);
  EXPECT_EQ(route_key(PacketView{p.data(), static_cast<std::uint32_t>(p.size())}), 9U);
  EXPECT_EQ(route_key(PacketView{p.data(), 8}), 0U);  // too short to hold it
}

}  // namespace
}  // namespace efu::ess
