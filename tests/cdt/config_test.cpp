// Loading a CDT instrument file: what is read, and that every bad value is one ConfigError that
// names the file and the JSON path of the value.
#include "config.h"

#include <string>

#include <gtest/gtest.h>

#include "efu/errors.h"

namespace efu::cdt {
namespace {

std::string config_error(const std::string& text) {
  try {
    CdtConfig::from_text(text, "bad.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

/// A DREAM file with one Config[] entry `entry` (JSON object members without braces).
std::string dream_with(const std::string& entry) {
  return R"({"Detector": "DREAM", "MaxPulseTimeDiffNS": 50000, "Config": [{)" + entry + "}]}";
}

#define EXPECT_NAMES(message, path)                                        \
  do {                                                                     \
    const std::string message_ = (message);                                \
    EXPECT_NE(message_.find("'bad.json'"), std::string::npos) << message_; \
    EXPECT_NE(message_.find(path), std::string::npos) << message_;         \
  } while (false)

TEST(CdtConfig, ReadsTheTable) {
  const CdtConfig c = CdtConfig::from_text(R"({
    "Detector": "DREAM", "MaxPulseTimeDiffNS": 50000,
    "Config": [
      {"Ring": 4, "FEN": 2, "Type": "BwEndCap", "Index": 7, "Index2": 6},
      {"Ring": 11, "FEN": 11, "Type": "HR", "Index": 32, "Index2": 255},
      {"Ring": 0, "FEN": 0, "Type": "DreamMantle"}
    ]})",
                                           "dream.json");
  EXPECT_EQ(c.instrument, Instrument::kDream);
  EXPECT_EQ(c.path, "dream.json");
  EXPECT_EQ(c.max_pulse_time_diff_ns, 50000U);
  EXPECT_EQ(c.configured, 3U);
  const Module& bw = c.module(4, 2);
  EXPECT_TRUE(bw.configured);
  EXPECT_EQ(bw.type, ModuleType::kBwEndCap);
  EXPECT_EQ(bw.index, 7);
  EXPECT_EQ(bw.index2, 6);
  const Module& hr = c.module(11, 11);
  EXPECT_EQ(hr.type, ModuleType::kHr);
  EXPECT_EQ(hr.index, 32);
  EXPECT_EQ(hr.index2, kNoCuboid);
  // Index and Index2 default to 0, as in the reference.
  EXPECT_EQ(c.module(0, 0).type, ModuleType::kDreamMantle);
  EXPECT_EQ(c.module(0, 0).index, 0);
  EXPECT_EQ(c.module(0, 0).index2, 0);
  EXPECT_FALSE(c.module(4, 3).configured);
  EXPECT_FALSE(c.module(3, 2).configured);
}

TEST(CdtConfig, PulseTimeDefaultsToFivePulsesAndKeepsSixtyFourBits) {
  const CdtConfig d = CdtConfig::from_text(R"({"Detector": "MAGIC", "Config": [{"Ring": 0, "FEN": 0,
      "Type": "PADetector"}]})",
                                           "m.json");
  EXPECT_EQ(d.instrument, Instrument::kMagic);
  EXPECT_EQ(d.max_pulse_time_diff_ns, 357'142'855U);  // 5 · 71 428 571
  const CdtConfig h =
      CdtConfig::from_text(R"({"Detector": "HEIMDAL", "MaxPulseTimeDiffNS": 5000000000,
      "Config": [{"Ring": 0, "FEN": 0, "Type": "HeimdalMantle"}]})",
                           "h.json");
  EXPECT_EQ(h.instrument, Instrument::kHeimdal);
  EXPECT_EQ(h.max_pulse_time_diff_ns, 5'000'000'000U);
}

TEST(CdtConfig, InstrumentNames) {
  EXPECT_STREQ(instrument_name(Instrument::kDream), "DREAM");
  EXPECT_STREQ(instrument_name(Instrument::kMagic), "MAGIC");
  EXPECT_STREQ(instrument_name(Instrument::kHeimdal), "HEIMDAL");
}

TEST(CdtConfig, ModuleTypeNamesAreTheReferences) {
  const char* expected[] = {"BwEndCap", "FwEndCap",   "DreamMantle", "HR",
                            "SANS",     "PADetector", "FRDetector",  "HeimdalMantle"};
  for (std::size_t i = 0; i < kModuleTypes; ++i) EXPECT_STREQ(kModuleTypeInfo[i].name, expected[i]);
}

TEST(CdtConfigErrors, MissingFile) {
  try {
    CdtConfig::from_file("/nonexistent/DreamInst.json");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/DreamInst.json"), std::string::npos);
  }
}

TEST(CdtConfigErrors, NotJson) {
  const std::string m = config_error(R"({"Detector": "DREAM",)");
  EXPECT_NE(m.find("'bad.json'"), std::string::npos) << m;
}

TEST(CdtConfigErrors, MissingDetector) {
  EXPECT_NAMES(config_error(R"({"NotDetector": "x", "Config": []})"), ": /: missing \"Detector\"");
}

TEST(CdtConfigErrors, UnknownDetector) {
  const std::string m = config_error(R"({"Detector": "Freia", "Config": []})");
  EXPECT_NAMES(m, "/Detector: 'Freia' is not a CDT instrument; expected DREAM, MAGIC or HEIMDAL");
}

TEST(CdtConfigErrors, DetectorNamesAreCaseSensitive) {
  EXPECT_NAMES(config_error(R"({"Detector": "dream", "Config": []})"), "/Detector:");
}

TEST(CdtConfigErrors, PulseTimeNotAnInteger) {
  const std::string m = config_error(
      R"({"Detector": "DREAM", "MaxPulseTimeDiffNS": "5", "Config": [{"Ring": 0, "FEN": 0,
      "Type": "HR"}]})");
  EXPECT_NAMES(m, "/MaxPulseTimeDiffNS:");
}

TEST(CdtConfigErrors, MissingConfig) {
  EXPECT_NAMES(config_error(R"({"Detector": "DREAM"})"), ": /: missing \"Config\"");
}

TEST(CdtConfigErrors, EmptyConfig) {
  EXPECT_NAMES(config_error(R"({"Detector": "DREAM", "Config": []})"), "/Config: has 0 elements");
}

TEST(CdtConfigErrors, RingOutOfRange) {
  EXPECT_NAMES(config_error(dream_with(R"("Ring": 255, "FEN": 2, "Type": "BwEndCap")")),
               "/Config/0/Ring: 255 is out of range; expected 0..11");
}

TEST(CdtConfigErrors, RingNotAnInteger) {
  EXPECT_NAMES(config_error(dream_with(R"("Ring": "4", "FEN": 2, "Type": "BwEndCap")")),
               "/Config/0/Ring:");
}

TEST(CdtConfigErrors, FenOutOfRange) {
  EXPECT_NAMES(config_error(dream_with(R"("Ring": 4, "FEN": 12, "Type": "BwEndCap")")),
               "/Config/0/FEN: 12 is out of range; expected 0..11");
}

TEST(CdtConfigErrors, MissingRing) {
  EXPECT_NAMES(config_error(dream_with(R"("FEN": 2, "Type": "BwEndCap")")),
               "/Config/0: missing \"Ring\"");
}

TEST(CdtConfigErrors, MisspeltKey) {
  EXPECT_NAMES(config_error(dream_with(R"("Ringz": 4, "Ring": 4, "FEN": 2, "Type": "HR")")),
               "/Config/0/Ringz: unknown key");
}

TEST(CdtConfigErrors, UnknownType) {
  EXPECT_NAMES(config_error(dream_with(R"("Ring": 4, "FEN": 2, "Type": "BadType")")),
               "/Config/0/Type: 'BadType' is not a DREAM module type; expected one of BwEndCap, "
               "FwEndCap, DreamMantle, HR, SANS");
}

TEST(CdtConfigErrors, TypeOfAnotherInstrument) {
  // The reference accepts these and then gives every readout of the FEN no pixel.
  EXPECT_NAMES(config_error(dream_with(R"("Ring": 0, "FEN": 0, "Type": "PADetector")")),
               "/Config/0/Type: 'PADetector' is not a DREAM module type");
  EXPECT_NAMES(config_error(R"({"Detector": "HEIMDAL", "Config": [{"Ring": 0, "FEN": 0,
               "Type": "DreamMantle"}]})"),
               "/Config/0/Type: 'DreamMantle' is not a HEIMDAL module type; expected one of "
               "HeimdalMantle");
  EXPECT_NAMES(config_error(R"({"Detector": "MAGIC", "Config": [{"Ring": 0, "FEN": 0,
               "Type": "BwEndCap"}]})"),
               "expected one of PADetector, FRDetector");
}

TEST(CdtConfigErrors, DuplicatePair) {
  const std::string m = config_error(R"({"Detector": "DREAM", "Config": [
      {"Ring": 4, "FEN": 2, "Type": "BwEndCap"}, {"Ring": 4, "FEN": 2, "Type": "BwEndCap"}]})");
  EXPECT_NAMES(m, "/Config/1/FEN: ring 4 FEN 2 is given twice");
}

TEST(CdtConfigErrors, IndexOutsideTheModuleType) {
  // 5 mounting units of the DREAM mantle: MU 5 would alias the next wire's rows.
  EXPECT_NAMES(config_error(dream_with(R"("Ring": 3, "FEN": 0, "Type": "DreamMantle",
               "Index": 5)")),
               "/Config/0/Index: 5 is out of range for DreamMantle; expected 0..4");
  // The reference's ValidIndexes test stores Index 42 for a BwEndCap; it has 11 sectors.
  EXPECT_NAMES(config_error(dream_with(R"("Ring": 4, "FEN": 2, "Type": "BwEndCap",
               "Index": 42, "Index2": 84)")),
               "/Config/0/Index: 42 is out of range for BwEndCap; expected 0..10");
  EXPECT_NAMES(config_error(dream_with(R"("Ring": 4, "FEN": 2, "Type": "HR", "Index": 255)")),
               "/Config/0/Index: 255 is out of range for HR; expected 0..32");
  EXPECT_NAMES(config_error(dream_with(R"("Ring": 4, "FEN": 2, "Type": "SANS", "Index": -1)")),
               "/Config/0/Index: -1 is out of range; expected 0..255");
}

TEST(CdtConfigErrors, Index2OutsideTheModuleType) {
  EXPECT_NAMES(config_error(dream_with(R"("Ring": 3, "FEN": 0, "Type": "DreamMantle",
               "Index2": 6)")),
               "/Config/0/Index2: 6 is out of range for DreamMantle; expected 0..5");
  EXPECT_NAMES(config_error(dream_with(R"("Ring": 7, "FEN": 0, "Type": "HR", "Index2": 33)")),
               "/Config/0/Index2: 33 is out of range for HR; expected 0..32 or 255 "
               "(no second cuboid)");
  EXPECT_NAMES(config_error(R"({"Detector": "HEIMDAL", "Config": [{"Ring": 0, "FEN": 0,
               "Type": "HeimdalMantle", "Index": 11, "Index2": 255}]})"),
               "/Config/0/Index2: 255 is out of range for HeimdalMantle; expected 0..5");
}

TEST(CdtConfigErrors, ErrorInALaterEntryNamesIt) {
  const std::string m = config_error(R"({"Detector": "DREAM", "Config": [
      {"Ring": 0, "FEN": 0, "Type": "BwEndCap"}, {"Ring": 0, "FEN": 1, "Type": "BwEndCap"},
      {"Ring": 0, "FEN": 2, "Type": "FwEndCap", "Index": 5}]})");
  EXPECT_NAMES(m, "/Config/2/Index: 5 is out of range for FwEndCap; expected 0..4");
}

}  // namespace
}  // namespace efu::cdt
