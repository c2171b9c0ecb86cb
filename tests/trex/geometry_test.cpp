// The channel formulas and the 3D pixels, as hand-worked literals (docs/trex.md "Channels and
// pixels" shows the working): corners and inner pixels of each vessel kind, rotated and not,
// full and short, for TREX and LET; and the channels the ICD leaves unused.
#include "geometry.h"

#include <string>

#include <gtest/gtest.h>

#include "config.h"
#include "trex_test_support.h"

namespace efu::trex {
namespace {

// --- The formulas, against the reference's own test values --------------------------------

TEST(TrexFormulas, WiresOfAColumn) {
  EXPECT_EQ(column_wire(0, 32), 0U);
  EXPECT_EQ(column_wire(0, 63), 31U);
  EXPECT_EQ(column_wire(1, 0), 32U);
  EXPECT_EQ(column_wire(1, 63), 95U);
  EXPECT_TRUE(wire_channel_valid(0, 32));
  EXPECT_FALSE(wire_channel_valid(0, 31));
  EXPECT_TRUE(wire_channel_valid(1, 0));
  EXPECT_FALSE(wire_channel_valid(1, 64));
}

TEST(TrexFormulas, RotationMirrorsXAndKeepsZ) {
  EXPECT_EQ(rotate_wire(0), 176U);   // x 0 -> 11, z 0
  EXPECT_EQ(rotate_wire(191), 15U);  // x 11 -> 0, z 15
  EXPECT_EQ(rotate_wire(42), 154U);  // x 2, z 10 -> x 9, z 10
  EXPECT_EQ(rotate_wire(rotate_wire(100)), 100U);
}

TEST(TrexFormulas, ColumnsAreOddFensOnTrexAndEvenRingsOnLet) {
  EXPECT_EQ(column_of(InstrumentGeometry::kTrex, 0, 0), 0U);
  EXPECT_EQ(column_of(InstrumentGeometry::kTrex, 0, 1), 1U);
  EXPECT_EQ(column_of(InstrumentGeometry::kTrex, 3, 12), 0U);
  EXPECT_EQ(column_of(InstrumentGeometry::kLet, 1, 0), 0U);
  EXPECT_EQ(column_of(InstrumentGeometry::kLet, 0, 0), 1U);
  EXPECT_EQ(column_of(InstrumentGeometry::kLet, 2, 1), 1U);
}

TEST(TrexFormulas, WireXzAsTheReferenceComputesIt) {
  // The reference's TREXGeometryTest values (xAndzCoord(ring, fen, hybrid, vmm, channel,
  // XOffset, rotated)): vessel 14 mid-column, vessel 25 rotated in both columns, vessel 34's
  // last wire.
  EXPECT_EQ(wire_xz(1, 43, 0, false, 168), 2763U);
  EXPECT_EQ(wire_xz(1, 43, 0, true, 300), 4923U);
  EXPECT_EQ(wire_xz(1, 43, 1, true, 300), 4827U);
  EXPECT_EQ(wire_xz(1, 63, 1, false, 372), 6143U);
  // LET: ring 1, hybrid 1, asic 0, channel 33 swaps to 32: the first wire (LETGeometryTest).
  EXPECT_EQ(wire_xz(0, let_wire_channel(33), column_of(InstrumentGeometry::kLet, 1, 0), false, 0),
            0U);
}

TEST(TrexFormulas, GridsOfFullAndShortVessels) {
  EXPECT_EQ(full_grid(1, 0, 58), 0U);
  EXPECT_EQ(full_grid(1, 1, 0), 6U);
  EXPECT_EQ(full_grid(2, 0, 0), 70U);
  EXPECT_EQ(full_grid(2, 1, 5), 139U);
  EXPECT_TRUE(full_grid_valid(1, 0, 58));
  EXPECT_FALSE(full_grid_valid(1, 0, 57));
  EXPECT_TRUE(full_grid_valid(2, 1, 5));
  EXPECT_FALSE(full_grid_valid(2, 1, 6));
  EXPECT_FALSE(full_grid_valid(3, 0, 0));
  EXPECT_TRUE(short_grid_valid(InstrumentGeometry::kTrex, 1, 0, 50));
  EXPECT_FALSE(short_grid_valid(InstrumentGeometry::kTrex, 1, 0, 51));
  EXPECT_FALSE(short_grid_valid(InstrumentGeometry::kTrex, 1, 1, 0));
  EXPECT_TRUE(short_grid_valid(InstrumentGeometry::kLet, 0, 0, 0));
  EXPECT_FALSE(short_grid_valid(InstrumentGeometry::kLet, 1, 0, 0));
}

TEST(TrexFormulas, RotatedGridsCountDownFromYOffsetOn16Bits) {
  EXPECT_EQ(grid_y(0, true, 51), 51U);
  EXPECT_EQ(grid_y(50, true, 51), 1U);
  EXPECT_EQ(grid_y(40, false, 89), 129U);
  EXPECT_EQ(grid_y(1, true, 0), 65535U);  // the reference's uint16_t wraps
}

TEST(TrexFormulas, Pixel3DNumbersXThenYThenZ) {
  const PixelVolume v{384, 140, 16};
  EXPECT_EQ(v.pixel(0, 0, 0), 1U);
  EXPECT_EQ(v.pixel(383, 0, 0), 384U);
  EXPECT_EQ(v.pixel(0, 1, 0), 385U);
  EXPECT_EQ(v.pixel(383, 139, 0) + 1, v.pixel(0, 0, 1));
  EXPECT_EQ(v.pixel(383, 139, 15), 860'160U);
  EXPECT_EQ(v.pixel(384, 0, 0), 0U);
  EXPECT_EQ(v.pixel(0, 140, 0), 0U);
  EXPECT_EQ(v.pixel(0, 0, 16), 0U);
  EXPECT_EQ(event_pixel(v, 234, 26), v.pixel(14, 26, 10));
}

// --- Through the channel map: readout fields -> coordinates -> pixel ----------------------

class Instrument {
 public:
  explicit Instrument(const std::string& text)
      : config_(load_config_json(text, "t.json")), map_(config_) {}

  vmm3a::ChannelMapping place(unsigned ring, unsigned fen, unsigned vmm, unsigned channel,
                              vmm3a::MapStatus expected = vmm3a::MapStatus::kOk) const {
    vmm3a::ChannelMapping m{};
    EXPECT_EQ(map_.map(static_cast<std::uint8_t>(2 * ring), static_cast<std::uint8_t>(fen),
                       static_cast<std::uint8_t>(vmm), static_cast<std::uint8_t>(channel), m),
              expected)
        << "ring " << ring << " fen " << fen << " vmm " << vmm << " channel " << channel;
    return m;
  }
  /// The pixel of one wire readout and one grid readout of the same (ring, FEN).
  std::uint32_t pixel(unsigned ring, unsigned fen, unsigned wire_vmm, unsigned wire_channel,
                      unsigned grid_vmm, unsigned grid_channel) const {
    const auto w = place(ring, fen, wire_vmm, wire_channel);
    const auto g = place(ring, fen, grid_vmm, grid_channel);
    EXPECT_EQ(w.plane, kWire);
    EXPECT_EQ(g.plane, kGrid);
    EXPECT_EQ(w.unit, g.unit);
    return event_pixel(map_.volume(), w.coordinate, g.coordinate);
  }
  const TrexConfig& config() const { return config_; }

 private:
  TrexConfig config_;
  ChannelMap map_;
};

// Volume 384 x 140 x 16: pixel = 1 + x + 384 y + 53760 z.
class TrexPixels : public ::testing::Test {
 protected:
  Instrument trex{test::trex_config()};
};

TEST_F(TrexPixels, FullVesselNotRotated) {
  // Vessel A (XOffset 12), FEN 0 = column 0. Wire vmm 0 ch 32: w 0, xz 0 + 192 -> x 12, z 0;
  // grid hybrid 1 asic 0 (vmm 2) ch 58: y 0.  1 + 12 = 13.
  EXPECT_EQ(trex.pixel(0, 0, 0, 32, 2, 58), 13U);
  // FEN 1 = column 1. Wire vmm 1 ch 63: w 95 + 96 = 191, xz 383 -> x 23, z 15; grid hybrid 2
  // asic 1 (vmm 5) ch 5: y 139.  1 + 23 + 384*139 + 53760*15 = 859800.
  EXPECT_EQ(trex.pixel(0, 1, 1, 63, 5, 5), 859'800U);
  // Inner: FEN 0, wire vmm 1 ch 10: w 42, xz 234 -> x 14, z 10; grid vmm 3 ch 20: y 26.
  // 1 + 14 + 384*26 + 53760*10 = 547599.
  EXPECT_EQ(trex.pixel(0, 0, 1, 10, 3, 20), 547'599U);
}

TEST_F(TrexPixels, FullVesselRotated) {
  // Vessel B (XOffset 24, YOffset 139), FEN 2 = column 0. Wire vmm 0 ch 32: w 0, rotated 176,
  // xz 560 -> x 35, z 0; grid vmm 2 ch 58: grid 0, y 139 - 0 = 139.  1 + 35 + 384*139 = 53412.
  EXPECT_EQ(trex.pixel(0, 2, 0, 32, 2, 58), 53'412U);
  // FEN 3 = column 1. Wire vmm 1 ch 63: w 191, rotated 15, xz 399 -> x 24, z 15; grid vmm 5
  // ch 5: grid 139, y 0.  1 + 24 + 53760*15 = 806425.
  EXPECT_EQ(trex.pixel(0, 3, 1, 63, 5, 5), 806'425U);
  // Inner: FEN 2, wire vmm 1 ch 10: w 42, rotated 154, xz 538 -> x 33, z 10; grid vmm 3 ch 20:
  // grid 26, y 113.  1 + 33 + 384*113 + 53760*10 = 581026.
  EXPECT_EQ(trex.pixel(0, 2, 1, 10, 3, 20), 581'026U);
}

TEST_F(TrexPixels, ShortVesselRotated) {
  // Vessel C (XOffset 300, YOffset 51), ring 1 FEN 0 = column 0. Wire vmm 0 ch 40: w 8, rotated
  // 184, xz 4984 -> x 311, z 8; grid hybrid 1 asic 0 (vmm 2) ch 0: y 51.
  // 1 + 311 + 384*51 + 53760*8 = 449976.
  EXPECT_EQ(trex.pixel(1, 0, 0, 40, 2, 0), 449'976U);
  // FEN 1 = column 1. Wire vmm 1 ch 0: w 32 + 96 = 128, rotated 48, xz 4848 -> x 303, z 0;
  // grid ch 50: y 1.  1 + 303 + 384 = 688.
  EXPECT_EQ(trex.pixel(1, 1, 1, 0, 2, 50), 688U);
}

TEST_F(TrexPixels, ShortVesselNotRotated) {
  // Vessel D (XOffset 300, YOffset 89), ring 1 FEN 2 = column 0. Wire vmm 0 ch 32: xz 4800 ->
  // x 300, z 0; grid vmm 2 ch 0: y 89.  1 + 300 + 384*89 = 34477.
  EXPECT_EQ(trex.pixel(1, 2, 0, 32, 2, 0), 34'477U);
  // FEN 3: wire vmm 1 ch 63: w 191, xz 4991 -> x 311, z 15; grid ch 50: y 139.
  // 1 + 311 + 384*139 + 53760*15 = 860088.
  EXPECT_EQ(trex.pixel(1, 3, 1, 63, 2, 50), 860'088U);
}

TEST_F(TrexPixels, UnusedChannelsHaveNoPlace) {
  trex.place(0, 0, 0, 31, vmm3a::MapStatus::kChannel);  // wires: asic 0 from channel 32
  trex.place(0, 0, 2, 57, vmm3a::MapStatus::kChannel);  // full grids: hybrid 1 asic 0 from 58
  trex.place(0, 0, 5, 6, vmm3a::MapStatus::kChannel);   // full grids: hybrid 2 asic 1 to 5
  trex.place(1, 0, 2, 51, vmm3a::MapStatus::kChannel);  // short grids: channels 0..50
  trex.place(1, 0, 3, 0, vmm3a::MapStatus::kChannel);   // short grids: asic 0 only
  trex.place(0, 0, 0, 64, vmm3a::MapStatus::kChannel);  // no VMM has channel 64
  trex.place(1, 0, 4, 0, vmm3a::MapStatus::kVmm);       // short vessels have no hybrid 2
  trex.place(0, 4, 0, 32, vmm3a::MapStatus::kFen);
  trex.place(2, 0, 0, 32, vmm3a::MapStatus::kFiber);
}

TEST_F(TrexPixels, ThresholdsUnitsAndCalibrationRows) {
  const auto a = trex.place(0, 1, 1, 0);
  EXPECT_EQ(a.threshold, 50);         // DefaultMinADC
  EXPECT_EQ(a.unit, 1);               // (ring 0, FEN 1)
  EXPECT_EQ(a.vmm_index, 3 * 2 + 1);  // Config[] entry 3, asic 1
  const auto d = trex.place(1, 3, 2, 0);
  EXPECT_EQ(d.threshold, 20);  // vessel D's MinADC
  EXPECT_EQ(d.unit, 7);
}

// LET: volume 12 x 51 x 16: pixel = 1 + x + 12 y + 612 z. Wires on hybrid 1, grids on hybrid 0.
TEST(LetPixels, ShortVesselRotated) {
  const Instrument let(
      test::let_config(R"({"NumGrids": 51, "Rotation": true, "Short": true, "YOffset": 50})"));
  // Ring 1 = column 0. Wire vmm 2 ch 33 -> 32: w 0, rotated 176 -> x 11, z 0; grid vmm 0 ch 0:
  // y 50.  1 + 11 + 12*50 = 612.
  EXPECT_EQ(let.pixel(1, 0, 2, 33, 0, 0), 612U);
  // Ring 0 = column 1. Wire vmm 3 ch 62 -> 63: w 95 + 96 = 191, rotated 15 -> x 0, z 15; grid
  // ch 50: y 0.  1 + 612*15 = 9181.
  EXPECT_EQ(let.pixel(0, 0, 3, 62, 0, 50), 9'181U);
  // Inner: ring 1, wire vmm 3 ch 20 -> 21: w 53, rotated 16*8 + 5 = 133 -> x 8, z 5; grid ch 30:
  // y 20.  1 + 8 + 240 + 3060 = 3309.
  EXPECT_EQ(let.pixel(1, 0, 3, 20, 0, 30), 3'309U);
}

TEST(LetPixels, ShortVesselNotRotated) {
  const Instrument let(test::let_config(R"({"NumGrids": 51, "Rotation": false, "Short": true})"));
  // Ring 1: wire vmm 2 ch 33 -> 32: x 0, z 0; grid ch 7: y 7.  1 + 84 = 85.
  EXPECT_EQ(let.pixel(1, 0, 2, 33, 0, 7), 85U);
  // Ring 0 = column 1: wire vmm 3 ch 62 -> 63: w 191 -> x 11, z 15; grid ch 50: y 50.
  // 1 + 11 + 600 + 9180 = 9792, the last pixel.
  EXPECT_EQ(let.pixel(0, 0, 3, 62, 0, 50), 9'792U);
  // The even/odd swap: channel 32 is wire 1 (z 1), channel 33 wire 0.
  EXPECT_EQ(let.place(1, 0, 2, 32).coordinate, 1);
  let.place(1, 0, 2, 31, vmm3a::MapStatus::kChannel);  // -> 30: unused on asic 0
  let.place(1, 0, 0, 51, vmm3a::MapStatus::kChannel);  // short grids: channels 0..50
}

TEST(LetPixels, TheFacilityFilesRotatedVesselWithoutYOffsetWrapsBelowZero) {
  // let.json's vessel: rotated, YOffset absent (0). Grid 0 is y 0; grid 1 is y -1 = 65535 on
  // the reference's 16 bits, outside SizeY 51: its events get no pixel, and a warning says so.
  const std::string vessel = R"({"NumGrids": 51, "Rotation": true, "XOffset": 0, "Short": true,
                                 "MinADC": 20})";
  const Instrument let(test::let_config(vessel));
  EXPECT_EQ(let.pixel(1, 0, 2, 33, 0, 0), 12U);  // x 11, y 0, z 0
  EXPECT_EQ(let.pixel(1, 0, 2, 33, 0, 1), 0U);
  EXPECT_EQ(let.place(1, 0, 0, 1).coordinate, 65535);
  EXPECT_EQ(let.place(1, 0, 0, 0).threshold, 20);
  const std::string warning = ChannelMap::outside_volume_warning(let.config());
  EXPECT_NE(warning.find("vessels 0 have channels outside"), std::string::npos) << warning;
  EXPECT_NE(warning.find("events.rejected.pixel"), std::string::npos) << warning;
}

// A full-length LET vessel (not in the facility's let.json): wires on hybrid 1, grids on
// hybrid 2 only (hybrid 1 is the wires'), volume 12 x 140 x 16: pixel = 1 + x + 12 y + 1680 z.
std::string let_full(const std::string& vessel) {
  const std::string zero(32, '0');
  return R"({"Detector": "TREX", "InstrumentGeometry": "LET", "Vessel_Config": {"0": )" + vessel +
         R"(}, "Config": [)" + test::entry(0, "0", 0, 1, zero) + "," +
         test::entry(0, "0", 0, 2, zero) + "," + test::entry(1, "0", 0, 0, zero) + "," +
         test::entry(1, "0", 0, 1, zero) + "," + test::entry(1, "0", 0, 2, zero) +
         R"(], "SizeX": 12, "SizeY": 140, "SizeZ": 16})";
}

TEST(LetPixels, FullVesselNotRotated) {
  const Instrument let(let_full(R"({"NumGrids": 140, "Rotation": false})"));
  // Ring 1 = column 0: wire vmm 2 ch 33 -> 32: x 0, z 0; grid hybrid 2 asic 0 (vmm 4) ch 0:
  // y 64*2 + 0 - 58 = 70.  1 + 12*70 = 841.
  EXPECT_EQ(let.pixel(1, 0, 2, 33, 4, 0), 841U);
  // Ring 0 = column 1: wire vmm 3 ch 62 -> 63: w 191 -> x 11, z 15; grid vmm 5 ch 5: y 139.
  // 1 + 11 + 12*139 + 1680*15 = 26880, the last pixel.
  EXPECT_EQ(let.pixel(0, 0, 3, 62, 5, 5), 26'880U);
  let.place(1, 0, 0, 0, vmm3a::MapStatus::kChannel);  // hybrid 0: no grids in a full vessel
}

TEST(LetPixels, FullVesselRotated) {
  const Instrument let(let_full(R"({"NumGrids": 140, "Rotation": true, "YOffset": 139})"));
  // Ring 1: wire vmm 2 ch 33 -> 32: w 0, rotated 176 -> x 11, z 0; grid vmm 4 ch 0: grid 70,
  // y 139 - 70 = 69.  1 + 11 + 12*69 = 840.
  EXPECT_EQ(let.pixel(1, 0, 2, 33, 4, 0), 840U);
  // Ring 0: wire vmm 3 ch 62 -> 63: w 191, rotated 15 -> x 0, z 15; grid vmm 5 ch 5: y 0.
  // 1 + 1680*15 = 25201.
  EXPECT_EQ(let.pixel(0, 0, 3, 62, 5, 5), 25'201U);
}

TEST(TrexWarning, NoneWhenEveryChannelIsInside) {
  EXPECT_EQ(ChannelMap::outside_volume_warning(load_config_json(test::trex_config(), "t.json")),
            "");
}

}  // namespace
}  // namespace efu::trex
