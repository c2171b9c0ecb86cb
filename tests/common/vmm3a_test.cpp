// The SDK's VMM3a pieces (common/include/efu/vmm3a/): the 20-byte readout's layout against a byte
// literal written from the format's definition, and the hybrid calibration loaded against a
// plain hybrid list, as a VMM3a plugin other than multiblade uses it (no cassette names, another
// Detector, no strict option).
#include <array>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "efu/errors.h"
#include "efu/vmm3a/hybrid_calibration.h"
#include "efu/vmm3a/hybrid_map.h"
#include "efu/vmm3a/readout.h"

namespace efu::vmm3a {
namespace {

// FiberId 5, FENId 2, DataLength 20, TimeHigh 0x11223344, TimeLow 0x00A0B0C0, BC 0x0102,
// OTADC 0x8155 (over threshold, ADC 0x155 = 341), GEO 7, TDC 200, VMM 3, Channel 63.
constexpr std::array<std::uint8_t, 20> kReadout{0x05, 0x02, 0x14, 0x00, 0x44, 0x33, 0x22,
                                                0x11, 0xC0, 0xB0, 0xA0, 0x00, 0x02, 0x01,
                                                0x55, 0x81, 0x07, 0xC8, 0x03, 0x3F};

TEST(Vmm3aReadout, FieldsAtTheirOffsets) {
  const std::uint8_t* r = kReadout.data();
  EXPECT_EQ(ess::load_u32(r + kTimeHighOffset), 0x11223344U);
  EXPECT_EQ(ess::load_u32(r + kTimeLowOffset), 0x00A0B0C0U);
  EXPECT_EQ(ess::load_u16(r + kBcOffset), 0x0102U);
  EXPECT_EQ(adc(r), 341U);
  EXPECT_EQ(r[kGeoOffset], 7U);
  EXPECT_EQ(r[kTdcOffset], 200U);
  EXPECT_EQ(r[kVmmOffset], 3U);
  EXPECT_EQ(r[kChannelOffset], 63U);
}

TEST(Vmm3aReadout, WriterGivesTheLiteral) {
  std::array<std::uint8_t, kReadoutSize> out{};
  write_readout(out.data(),
                Readout{5, 2, 20, 0x11223344U, 0x00A0B0C0U, 0x0102, 0x8155, 7, 200, 3, 63});
  EXPECT_EQ(out, kReadout);
}

TEST(Vmm3aReadout, VmmIndexIsTwoPerHybridByParity) {
  EXPECT_EQ(vmm_index(0, 0), 0U);
  EXPECT_EQ(vmm_index(0, 1), 1U);
  EXPECT_EQ(vmm_index(1, 2), 2U);  // VMM 2 of a FEN is hybrid 1's first ASIC...
  EXPECT_EQ(vmm_index(1, 3), 3U);  // ...VMM 3 its second
  EXPECT_EQ(vmm_index(5, 7), 11U);
}

// Ring 2 FEN 0 hybrids 0 and 3, ring 10 FEN 13 hybrid 10 (the facility's last of each).
HybridMap three_entries() {
  HybridMap m;
  m.add(2, 0, 0, 0);
  m.add(2, 0, 3, 1);
  m.add(10, 13, 10, 2);
  return m;
}

TEST(Vmm3aHybridMap, FindsEachConfiguredHybridByFibreFenAndVmm) {
  const HybridMap m = three_entries();
  std::uint32_t index = 99;
  // Fibres 4 and 5 are ring 2; VMMs 6 and 7 are hybrid 3.
  EXPECT_EQ(m.find(4, 0, 0, index), HybridStatus::kOk);
  EXPECT_EQ(index, 0U);
  EXPECT_EQ(m.find(5, 0, 1, index), HybridStatus::kOk);
  EXPECT_EQ(index, 0U);
  EXPECT_EQ(m.find(4, 0, 7, index), HybridStatus::kOk);
  EXPECT_EQ(index, 1U);
  EXPECT_EQ(m.find(21, 13, 21, index), HybridStatus::kOk);
  EXPECT_EQ(index, 2U);
  EXPECT_EQ(m.index_of(2, 0, 3), 1);
  EXPECT_EQ(m.index_of(2, 0, 1), -1);
  EXPECT_EQ(m.index_of(11, 0, 0), -1);  // beyond the limits: no index, no out-of-range read
}

TEST(Vmm3aHybridMap, EachRejectionHasItsStatus) {
  const HybridMap m = three_entries();
  std::uint32_t index = 99;
  EXPECT_EQ(m.find(2, 0, 0, index), HybridStatus::kFiber);   // ring 1: no FEN configured
  EXPECT_EQ(m.find(22, 0, 0, index), HybridStatus::kFiber);  // ring 11: above the limit
  EXPECT_EQ(m.find(255, 0, 0, index), HybridStatus::kFiber);
  EXPECT_EQ(m.find(4, 1, 0, index), HybridStatus::kFen);   // ring 2 FEN 1: unused
  EXPECT_EQ(m.find(4, 14, 0, index), HybridStatus::kFen);  // FEN 14: above the limit
  EXPECT_EQ(m.find(4, 0, 2, index), HybridStatus::kVmm);   // hybrid 1: unused
  EXPECT_EQ(m.find(4, 0, 22, index), HybridStatus::kVmm);  // hybrid 11: above the limit
  EXPECT_EQ(m.find(4, 0, 255, index), HybridStatus::kVmm);
  EXPECT_EQ(index, 99U);  // untouched by a rejection
}

const std::string kIdA = "AAAA0000000000000000000000000001";
const std::string kIdB = "BBBB0000000000000000000000000002";
const std::string kIdC = "CCCC0000000000000000000000000003";

Hybrids three_hybrids() {
  Hybrids h;
  h.ids = {kIdA, kIdB, kIdC};
  h.origin = "nmx config 'nmx.json'";
  h.detector = "NMX";
  h.what = "nmx calibration";
  return h;
}

// 64 values: `first` for channel 0, the rest `rest`.
std::string values(const std::string& first, const std::string& rest) {
  std::string s = "[" + first;
  for (int i = 1; i < 64; ++i) s += ", " + rest;
  return s + "]";
}

std::string vmm(const std::string& adc_offset, const std::string& adc_slope,
                const std::string& tdc_offset, const std::string& tdc_slope) {
  return R"({"Settings": "s", "adc_offset": )" + values(adc_offset, "0") + R"(, "adc_slope": )" +
         values(adc_slope, "1") + R"(, "tdc_offset": )" + values(tdc_offset, "0") +
         R"(, "tdc_slope": )" + values(tdc_slope, "1") + "}";
}

std::string entry(const std::string& id, const std::string& vmm1) {
  return R"({"VMMHybridCalibration": {"HybridId": ")" + id +
         R"(", "CalibrationDate": "d", "vmm0": )" + vmm("0", "1", "0", "1") + R"(, "vmm1": )" +
         vmm1 + "}}";
}

std::string file(const std::string& detector, const std::string& entries) {
  return R"({"Detector": ")" + detector + R"(", "Version": 1, "Calibrations": [)" + entries + "]}";
}

TEST(Vmm3aHybridCalibration, AppliesEachHybridsChannelsByVmmIndex) {
  // Hybrid C (index 2) vmm1 channel 0: ADC (raw - 10) * 2, TDC offset 4, slope 0.5.
  // Hybrid A (index 0): the identity.
  const HybridCalibration c =
      HybridCalibration::from_json(file("NMX", entry(kIdC, vmm("10", "2", "4", "0.5")) + "," +
                                                   entry(kIdA, vmm("0", "1", "0", "1"))),
                                   "cal.json", three_hybrids());
  ASSERT_TRUE(c.enabled());
  EXPECT_EQ(c.adc(vmm_index(2, 1), 0, 100), 180U);    // (100 - 10) * 2
  EXPECT_EQ(c.adc(vmm_index(2, 1), 0, 1000), 1023U);  // 1980, clamped
  EXPECT_EQ(c.adc(vmm_index(2, 1), 0, 5), 0U);        // -10, clamped
  EXPECT_EQ(c.adc(vmm_index(2, 1), 1, 100), 100U);    // channel 1: offset 0, slope 1
  // TDC 0: (1.5 * 22.72 - 0 - 4) * 0.5 = 15.04 -> 15; TDC 255: (34.08 - 60 - 4) * 0.5 -> -14.
  EXPECT_EQ(c.tdc_ns(vmm_index(2, 1), 0, 0), 15);
  EXPECT_EQ(c.tdc_ns(vmm_index(2, 1), 0, 255), -14);
  EXPECT_EQ(c.adc(vmm_index(0, 0), 0, 517), 517U);
  // Hybrid B has no entry: uncalibrated, named by index (the list gives no names), and no
  // strict option is offered.
  EXPECT_EQ(c.uncalibrated(), std::vector<std::uint32_t>{1});
  EXPECT_EQ(c.adc(vmm_index(1, 0), 9, 333), 333U);
  EXPECT_EQ(c.uncalibrated_warning("nmx", three_hybrids()),
            "nmx: 1 of 3 hybrids has no calibration in 'cal.json' and runs uncalibrated (ADC "
            "unchanged; TDC term with offset 0 and slope 1, as the reference does): hybrid 1 "
            "(HybridId " +
                kIdB + ")");
}

TEST(Vmm3aHybridCalibration, OffIsTheIdentity) {
  const HybridCalibration off;
  EXPECT_FALSE(off.enabled());
  EXPECT_EQ(off.adc(3, 5, 700), 700U);
  EXPECT_EQ(off.tdc_ns(3, 5, 100), 0);
  EXPECT_EQ(off.uncalibrated_warning("nmx", three_hybrids()), "");
}

std::string error_of(const std::string& json, MissingHybrids missing) {
  try {
    HybridCalibration::from_json(json, "cal.json", three_hybrids(), missing);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Vmm3aHybridCalibration, BadFilesAreOneLineNamingFilePathAndExpectation) {
  const std::string all = entry(kIdA, vmm("0", "1", "0", "1")) + "," +
                          entry(kIdB, vmm("0", "1", "0", "1")) + "," +
                          entry(kIdC, vmm("0", "1", "0", "1"));
  EXPECT_EQ(error_of(file("Freia", all), MissingHybrids::kUncalibrated),
            "nmx calibration 'cal.json': /Detector: \"Freia\" is not the geometry's detector; "
            "expected \"NMX\"");
  EXPECT_EQ(
      error_of(file("NMX", entry("DDDD0000000000000000000000000004", vmm("0", "1", "0", "1"))),
               MissingHybrids::kUncalibrated),
      "nmx calibration 'cal.json': /Calibrations/0/VMMHybridCalibration/HybridId: "
      "\"DDDD0000000000000000000000000004\" is not in the nmx config 'nmx.json'; expected "
      "one of its HybridIds");
  EXPECT_EQ(error_of(file("NMX", entry(kIdA, vmm("0", "1", "0", "1"))), MissingHybrids::kRefuse),
            "nmx calibration 'cal.json': /Calibrations: has no entry for HybridId \"" + kIdB +
                "\" (hybrid 1); expected every hybrid of the instrument config, or "
                "--calibration off");
  EXPECT_EQ(error_of(file("NMX", all), MissingHybrids::kRefuse), "(no error)");
}

}  // namespace
}  // namespace efu::vmm3a
