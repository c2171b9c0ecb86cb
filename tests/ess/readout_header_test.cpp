#include "efu/ess/readout_header.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "efu/ess/header_writer.h"

namespace efu::ess {
namespace {

constexpr std::uint8_t kType = 0x48;

const char* const kErrorNames[] = {
    "padding",       "version",          "cookie",          "type",    "length", "output_queue",
    "time_fraction", "prev_pulse_later", "pulse_time_diff", "sequence"};

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

// Written byte by byte from the format's definition (docs/architecture.md §5.1), not with
// write_header(), so that a shared offset mistake in the writer and the parser cannot cancel out.
TEST_F(HeaderParserTest, ByteLiteralV1PacketDecodesFieldByField) {
  const std::vector<std::uint8_t> bytes = {
      0x00,                    // padding
      0x01,                    // version 1
      0x45, 0x53, 0x53,        // cookie "ESS"
      0x48,                    // type: Freia
      0x24, 0x00,              // total length 36 = 32 header + 4 data
      0x03,                    // output queue 3
      0x05,                    // time source flags
      0x00, 0xF1, 0x53, 0x65,  // pulse time high 1 700 000 000 = 0x6553F100
      0xE8, 0x03, 0x00, 0x00,  // pulse time low 1000 ticks
      0xFF, 0xF0, 0x53, 0x65,  // previous pulse high 1 699 999 999
      0x80, 0x38, 0xE3, 0x04,  // previous pulse low 82 000 000 = 0x04E33880 ticks
      0x07, 0x00, 0x00, 0x00,  // sequence 7
      0x00, 0x00,              // v1 padding
      0xAB, 0xAB, 0xAB, 0xAB,  // data
  };
  ASSERT_EQ(parse(bytes), HeaderStatus::kData);
  EXPECT_EQ(header.version, 1);
  EXPECT_EQ(header.type, 0x48);
  EXPECT_EQ(header.total_length, 36);
  EXPECT_EQ(header.header_size, 32U);
  EXPECT_EQ(header.output_queue, 3);
  EXPECT_EQ(header.time_source, 0x05);
  EXPECT_EQ(header.sequence, 7U);
  // ns = high * 10^9 + floor(low * 10^9 / 88 052 500): 1000 ticks = 11 356 ns, 82 000 000 ticks
  // = 931 262 599 ns.
  EXPECT_EQ(header.pulse_time_ns, 1'700'000'000'000'011'356ULL);
  EXPECT_EQ(header.prev_pulse_time_ns, 1'699'999'999'931'262'599ULL);
}

TEST_F(HeaderParserTest, ByteLiteralV0HeartbeatIsThirtyBytes) {
  const std::vector<std::uint8_t> bytes = {
      0x00, 0x00, 0x45, 0x53, 0x53, 0x48,  // padding, version 0, "ESS", Freia
      0x1E, 0x00,                          // total length 30: the header alone
      0x00, 0x00,                          // queue 0, time source 0
      0x00, 0xF1, 0x53, 0x65, 0x00, 0x00, 0x00, 0x00,  // pulse 1 700 000 000 s + 0 ticks
      0xFF, 0xF0, 0x53, 0x65, 0x00, 0x00, 0x00, 0x00,  // previous pulse 1 699 999 999 s
      0x2A, 0x00, 0x00, 0x00,                          // sequence 42
  };
  ASSERT_EQ(parse(bytes), HeaderStatus::kHeartbeat);
  EXPECT_EQ(header.header_size, 30U);
  EXPECT_EQ(header.sequence, 42U);
  EXPECT_EQ(header.pulse_time_ns, 1'700'000'000'000'000'000ULL);
  // One byte of the cookie changed: rejected as a cookie error and nothing else.
  auto bad = bytes;
  bad[4] = 0x54;
  CounterRegistry other;
  HeaderParser fresh{other, kType};
  PacketHeader h{};
  EXPECT_EQ(fresh.parse(bad.data(), static_cast<std::uint32_t>(bad.size()), h),
            HeaderStatus::kRejected);
  EXPECT_EQ(other.value("parser.essheader.errors.cookie"), 1U);
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

TEST_F(HeaderParserTest, ImplausibleSequenceJumpIsARestartNotBillionsOfLostPackets) {
  HeaderFields f = fields();
  ASSERT_EQ(parse(packet(f)), HeaderStatus::kData);  // sequence 7
  f.sequence = 0x8000'0007U;                         // one corrupted number: 2^31 ahead
  ASSERT_EQ(parse(packet(f)), HeaderStatus::kData);
  EXPECT_EQ(counters.value("parser.essheader.missing_packets"), 0U);
  EXPECT_EQ(counters.value("parser.essheader.sequence_jumps"), 1U);
  EXPECT_EQ(errors("sequence"), 1U);
  // Just below the limit is still believed as loss, and counting goes on from the new number.
  f.sequence = 0x8000'0008U + (kMaxPlausibleSequenceGap - 1);
  ASSERT_EQ(parse(packet(f)), HeaderStatus::kData);
  EXPECT_EQ(counters.value("parser.essheader.missing_packets"), kMaxPlausibleSequenceGap - 1);
  EXPECT_EQ(counters.value("parser.essheader.sequence_jumps"), 1U);
  // A large step back (a sender restart) is a jump too; a step back by one is only an error.
  f.sequence = 5;
  ASSERT_EQ(parse(packet(f)), HeaderStatus::kData);
  EXPECT_EQ(counters.value("parser.essheader.sequence_jumps"), 2U);
  f.sequence = 5;
  ASSERT_EQ(parse(packet(f)), HeaderStatus::kData);
  EXPECT_EQ(counters.value("parser.essheader.sequence_jumps"), 2U);
  EXPECT_EQ(errors("sequence"), 4U);
  EXPECT_EQ(counters.value("parser.essheader.missing_packets"), kMaxPlausibleSequenceGap - 1);
}

TEST(HeaderParserMaxPulseTime, PulseTooFarAfterThePreviousPulseIsRejected) {
  // The facility's MaxPulseTimeNS rule: pulse - previous pulse > MaxPulseTimeNS is rejected.
  CounterRegistry counters;
  HeaderParser parser(counters, HeaderSettings{kType, 71'428'570});
  PacketHeader header{};
  HeaderFields f = fields();
  f.pulse = EssTime{1'700'000'000, 0};
  // 81763035 ticks = floor(81763035 * 400000 / 35221) = 928'571'420 ns: 71'428'580 ns earlier.
  f.prev_pulse = EssTime{1'699'999'999, 81'763'035};
  auto bytes = packet(f);
  EXPECT_EQ(parser.parse(bytes.data(), static_cast<std::uint32_t>(bytes.size()), header),
            HeaderStatus::kRejected);
  EXPECT_EQ(counters.value("parser.essheader.errors.pulse_time_diff"), 1U);
  f.prev_pulse = EssTime{1'699'999'999, 81'763'036};  // 928'571'431 ns: 71'428'569 ns earlier
  bytes = packet(f);
  EXPECT_EQ(parser.parse(bytes.data(), static_cast<std::uint32_t>(bytes.size()), header),
            HeaderStatus::kData);
  EXPECT_EQ(counters.value("parser.essheader.errors.pulse_time_diff"), 1U);
  EXPECT_EQ(header.pulse_time_ns - header.prev_pulse_time_ns, 71'428'569U);
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
