// The 16-byte CDT readout, decoded from bytes written by hand from the format's definition
// (docs/cdt.md): fibre u8, FEN u8, data length u16, time high u32, time low u32, OM u8,
// UnitId u8, cathode u8, anode u8, all little-endian.
#include <array>
#include <cstdint>

#include <gtest/gtest.h>

#include "cdt_readout.h"

namespace efu::cdt {
namespace {

// clang-format off
constexpr std::array<std::uint8_t, 16> kBlock{
    0x05, 0x0b, 0x10, 0x00,  // fibre 5, FEN 11, data length 16
    0x78, 0x56, 0x34, 0x12,  // time high 0x12345678
    0x21, 0x43, 0x65, 0x07,  // time low 0x07654321
    0x01, 0x06, 0x2a, 0x3f,  // OM 1, UnitId 6, cathode 42, anode 63
};
// clang-format on

TEST(CdtReadout, TypeBytes) {
  EXPECT_EQ(type_byte(Instrument::kDream), 0x60);
  EXPECT_EQ(type_byte(Instrument::kMagic), 0x64);
  EXPECT_EQ(type_byte(Instrument::kHeimdal), 0x68);
}

TEST(CdtReadout, DecodesEveryField) {
  const CdtReadout r = read_readout(kBlock.data());
  EXPECT_EQ(r.fiber, 5);
  EXPECT_EQ(r.fen, 11);
  EXPECT_EQ(r.data_length, 16);
  EXPECT_EQ(r.time_high, 0x12345678U);
  EXPECT_EQ(r.time_low, 0x07654321U);
  EXPECT_EQ(r.om, 1);
  EXPECT_EQ(r.unit, 6);
  EXPECT_EQ(r.cathode, 42);
  EXPECT_EQ(r.anode, 63);
}

TEST(CdtReadout, DecodesAtAnUnalignedAddress) {
  std::array<std::uint8_t, 17> buffer{};
  for (std::size_t i = 0; i < kBlock.size(); ++i) buffer[i + 1] = kBlock[i];
  EXPECT_EQ(read_readout(buffer.data() + 1), read_readout(kBlock.data()));
}

TEST(CdtReadout, LengthAndTimesAreLittleEndian) {
  // clang-format off
  constexpr std::array<std::uint8_t, 16> block{
      0x17, 0x00, 0x01, 0x02,  // fibre 23, FEN 0, data length 0x0201 = 513
      0xff, 0x00, 0x00, 0x80,  // time high 0x800000ff
      0x00, 0x01, 0x00, 0x00,  // time low 256
      0xff, 0x00, 0x00, 0xff,  // OM 255, UnitId 0, cathode 0, anode 255
  };
  // clang-format on
  const CdtReadout r = read_readout(block.data());
  EXPECT_EQ(r.fiber, 23);
  EXPECT_EQ(r.data_length, 513);
  EXPECT_EQ(r.time_high, 0x800000ffU);
  EXPECT_EQ(r.time_low, 256U);
  EXPECT_EQ(r.om, 255);
  EXPECT_EQ(r.unit, 0);
  EXPECT_EQ(r.cathode, 0);
  EXPECT_EQ(r.anode, 255);
}

TEST(CdtReadout, WriterProducesTheSameBytes) {
  CdtReadout r;
  r.fiber = 5;
  r.fen = 11;
  r.time_high = 0x12345678;
  r.time_low = 0x07654321;
  r.om = 1;
  r.unit = 6;
  r.cathode = 42;
  r.anode = 63;
  std::array<std::uint8_t, 16> out{};
  out.fill(0xee);
  write_readout(out.data(), r);
  EXPECT_EQ(out, kBlock);
}

}  // namespace
}  // namespace efu::cdt
