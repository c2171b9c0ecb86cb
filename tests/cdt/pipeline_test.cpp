// The cdt pipeline: options, the instrument's type byte, and each readout's way through header,
// block walker, geometry and TOF into exactly one event or one counter, from byte literals.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cdt_pipeline.h"
#include "efu/errors.h"
#include "efu/ess/header_writer.h"

namespace efu::cdt {
namespace {

struct Event {
  std::uint64_t pulse_ns;
  std::uint32_t tof_ns;
  std::uint32_t pixel;
  bool operator==(const Event&) const = default;
};

class RecordingSink : public EventSink {
 public:
  void add(std::uint64_t pulse_ns, std::uint32_t tof_ns, std::uint32_t pixel) override {
    events.push_back(Event{pulse_ns, tof_ns, pixel});
  }
  std::vector<Event> events;
};

OptionValues defaults() {
  OptionValues values;
  for (std::size_t i = 0; i < kOptionCount; ++i) {
    values.set(kOptions[i].name, kOptions[i].default_value, false);
  }
  return values;
}

// One HEIMDAL mantle module on ring 0 FEN 0: MU 3, cassette 4 (docs/cdt.md's example).
const char* const kHeimdal = R"({"Detector": "HEIMDAL", "MaxPulseTimeDiffNS": 2000000000,
  "Config": [{"Ring": 0, "FEN": 0, "Type": "HeimdalMantle", "Index": 3, "Index2": 4}]})";

std::unique_ptr<const CdtShared> heimdal(std::uint64_t max_tof_ns = kDefaultMaxTofNs) {
  return std::make_unique<const CdtShared>(
      CdtShared{CdtConfig::from_text(kHeimdal, "heimdal.json"), max_tof_ns});
}

// Pulse 1000 s, previous pulse 999 s.
constexpr std::uint64_t kPulseNs = 1'000'000'000'000ULL;
constexpr std::uint64_t kPrevNs = 999'000'000'000ULL;

std::vector<std::uint8_t> packet(std::uint8_t type, const std::vector<std::uint8_t>& readouts) {
  std::vector<std::uint8_t> p(ess::kHeaderSizeV1);
  p.insert(p.end(), readouts.begin(), readouts.end());
  ess::HeaderFields f;
  f.type = type;
  f.total_length = static_cast<std::uint16_t>(p.size());
  f.pulse = ess::EssTime{1000, 0};
  f.prev_pulse = ess::EssTime{999, 0};
  ess::write_header(p.data(), f);
  return p;
}

void run(CdtPipeline& pipeline, const std::vector<std::uint8_t>& p) {
  const PacketView view{p.data(), static_cast<std::uint32_t>(p.size())};
  pipeline.process(PacketBatch(&view, 1));
}

// fiber, fen, length 16, time high, time low, OM, UnitId, cathode, anode.
// clang-format off
const std::vector<std::uint8_t> kGood{  // 1000 s + 8805 ticks; A 40, C 20
    0x01, 0x00, 0x10, 0x00, 0xE8, 0x03, 0x00, 0x00, 0x65, 0x22, 0x00, 0x00, 0x00, 0x00, 20, 40};
const std::vector<std::uint8_t> kLate{  // 999 s + 88052400 ticks: before the pulse
    0x00, 0x00, 0x10, 0x00, 0xE7, 0x03, 0x00, 0x00, 0xB0, 0x92, 0x3F, 0x05, 0x00, 0x00, 20, 40};
const std::vector<std::uint8_t> kBeforeBoth{  // 998 s
    0x00, 0x00, 0x10, 0x00, 0xE6, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 20, 40};
const std::vector<std::uint8_t> kBadFraction{  // time low 88052500
    0x00, 0x00, 0x10, 0x00, 0xE8, 0x03, 0x00, 0x00, 0x14, 0x93, 0x3F, 0x05, 0x00, 0x00, 20, 40};
const std::vector<std::uint8_t> kUnconfigured{  // FEN 1
    0x00, 0x01, 0x10, 0x00, 0xE8, 0x03, 0x00, 0x00, 0x65, 0x22, 0x00, 0x00, 0x00, 0x00, 20, 40};
const std::vector<std::uint8_t> kRing{  // fiber 24: ring 12
    0x18, 0x00, 0x10, 0x00, 0xE8, 0x03, 0x00, 0x00, 0x65, 0x22, 0x00, 0x00, 0x00, 0x00, 20, 40};
const std::vector<std::uint8_t> kFen{  // FEN 12
    0x00, 0x0C, 0x10, 0x00, 0xE8, 0x03, 0x00, 0x00, 0x65, 0x22, 0x00, 0x00, 0x00, 0x00, 20, 40};
const std::vector<std::uint8_t> kLength{  // data_length 15
    0x00, 0x00, 0x0F, 0x00, 0xE8, 0x03, 0x00, 0x00, 0x65, 0x22, 0x00, 0x00, 0x00, 0x00, 20, 40};
// clang-format on

// MU 3, cassette 4, A 40, C 20: x = 36 + 8 + 1 = 45, y = 20 + 64·8 = 532 → 1 + 45 + 144·532.
constexpr std::uint32_t kPixel = 76'654;

std::vector<std::uint8_t> join(const std::vector<std::vector<std::uint8_t>>& blocks) {
  std::vector<std::uint8_t> out;
  for (const auto& b : blocks) out.insert(out.end(), b.begin(), b.end());
  return out;
}

TEST(CdtPipeline, EachReadoutIsOneEventOrOneCounter) {
  CounterRegistry counters;
  RecordingSink sink;
  CdtPipeline pipeline(heimdal(), counters, sink);
  run(pipeline, packet(0x68, join({kGood, kLate, kBeforeBoth, kBadFraction, kUnconfigured, kRing,
                                   kFen, kLength})));
  // 8805 ticks = 99 997.16 ns; 88 052 400 ticks = 999 998 864.3 ns (truncated, as ESSTime).
  EXPECT_EQ(sink.events,
            (std::vector<Event>{{kPulseNs, 99'997, kPixel}, {kPrevNs, 999'998'864, kPixel}}));
  EXPECT_EQ(counters.value("readouts.received"), 8U);
  EXPECT_EQ(counters.value("events.formed"), 2U);
  EXPECT_EQ(counters.value("readouts.errors.tof_negative"), 1U);
  EXPECT_EQ(counters.value("readouts.errors.time_fraction"), 1U);
  EXPECT_EQ(counters.value("readouts.errors.unconfigured"), 1U);
  EXPECT_EQ(counters.value("readouts.errors.ring"), 1U);
  EXPECT_EQ(counters.value("readouts.errors.fen"), 1U);
  EXPECT_EQ(counters.value("readouts.errors.length"), 1U);
  std::uint64_t errors = 0;
  for (const CounterSample& c : counters.sample()) {
    if (c.name.rfind("readouts.errors.", 0) == 0) errors += c.value;
  }
  EXPECT_EQ(errors + counters.value("events.formed"), counters.value("readouts.received"));
}

TEST(CdtPipeline, ATofAboveMaxTofIsCounted) {
  CounterRegistry counters;
  RecordingSink sink;
  CdtPipeline pipeline(heimdal(/*max_tof_ns=*/99'996), counters, sink);
  run(pipeline, packet(0x68, kGood));
  EXPECT_TRUE(sink.events.empty());
  EXPECT_EQ(counters.value("readouts.errors.tof_too_large"), 1U);
}

TEST(CdtPipeline, OnlyTheInstrumentsTypeByteIsAccepted) {
  CounterRegistry counters;
  RecordingSink sink;
  CdtPipeline pipeline(heimdal(), counters, sink);
  for (const std::uint8_t type : {0x60, 0x64, 0x68, 0x44}) run(pipeline, packet(type, kGood));
  EXPECT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(counters.value("parser.essheader.errors.type"), 3U);
}

TEST(CdtPipeline, EveryGeometryRejectionHasItsOwnCounter) {
  CounterRegistry counters;
  RecordingSink sink;
  const CdtPipeline pipeline(heimdal(), counters, sink);
  for (std::size_t s = 0; s < kPixelErrors; ++s) {
    EXPECT_STREQ(
        kReadoutErrorNames[static_cast<std::size_t>(to_error(static_cast<PixelStatus>(s)))],
        kPixelErrorNames[s]);
    EXPECT_NE(counters.find(std::string("readouts.errors.") + kPixelErrorNames[s]), nullptr);
  }
}

TEST(CdtOptions, DefaultsAndBadValues) {
  OptionValues values = defaults();
  EXPECT_EQ(settings_from_options(values).geometry_path, default_geometry_path());
  EXPECT_EQ(load_shared(settings_from_options(values))->config.instrument, Instrument::kDream);
  values.set("max-tof-ns", "0", true);
  try {
    settings_from_options(values);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "--max-tof-ns: 0 is out of range; expected 1..2147483647");
  }
  values = defaults();
  values.set("geometry", "/nonexistent.json", true);
  EXPECT_THROW(load_shared(settings_from_options(values)), ConfigError);
}

TEST(CdtOptions, EachShippedFileChoosesItsInstrument) {
  const std::pair<const char*, Instrument> files[] = {{"DreamInst.json", Instrument::kDream},
                                                      {"MagicInst.json", Instrument::kMagic},
                                                      {"HeimdalInst.json", Instrument::kHeimdal}};
  for (const auto& [file, instrument] : files) {
    OptionValues values = defaults();
    values.set("geometry", shipped_config(file), true);
    EXPECT_EQ(load_shared(settings_from_options(values))->config.instrument, instrument) << file;
  }
}

}  // namespace
}  // namespace efu::cdt
