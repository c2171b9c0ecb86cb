// The trex pipeline on byte-literal packets: an event with its pixel and TOF, one case per
// rejection (readouts and events) with the accounting that every readout and every time group
// lands in exactly one counter, calibration applied, the reorder window, the wall-clock timeout,
// and the same events from readouts in time order and shuffled.
#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config_error_of.h"
#include "efu/errors.h"
#include "trex_pipeline.h"
#include "trex_test_support.h"

namespace efu::trex {
namespace {

using test::PacketBuilder;
using test::RecordingSink;
using test::TempFile;

OptionValues defaults() {
  OptionValues values;
  for (std::size_t i = 0; i < kOptionCount; ++i) {
    values.set(kOptions[i].name, kOptions[i].default_value, false);
  }
  return values;
}

TrexSettings settings_for(const std::string& geometry, const OptionValues& extra = {}) {
  OptionValues values = defaults();
  values.set("geometry", geometry, true);
  for (const char* name :
       {"calibration", "max-tof-ns", "max-grid-span", "reorder-window-ns", "reorder-buffer-hits"}) {
    if (extra.has(name)) values.set(name, extra.get_string(name), true);
  }
  return settings_from_options(values);
}

PacketView view(const std::vector<std::uint8_t>& p) {
  return PacketView{p.data(), static_cast<std::uint32_t>(p.size())};
}

const char* const kReadoutErrors[] = {
    "readouts.errors.fiber",         "readouts.errors.fen",
    "readouts.errors.vmm",           "readouts.errors.channel",
    "readouts.errors.time_fraction", "readouts.errors.adc_below_threshold",
    "readouts.errors.tof_negative",  "readouts.errors.tof_too_large",
    "readouts.errors.length",        "readouts.errors.truncated"};
const char* const kEventOutcomes[] = {"events.formed", "events.rejected.wire_only",
                                      "events.rejected.grid_only", "events.rejected.grid_span",
                                      "events.rejected.pixel"};

class TrexPipelineTest : public ::testing::Test {
 protected:
  void start(const OptionValues& extra = {}, const std::string& text = test::trex_config()) {
    file_ = std::make_unique<TempFile>(text);
    pipeline_ = std::make_unique<TrexPipeline>(settings_for(file_->path(), extra), counters, sink);
  }
  void send(const std::vector<std::uint8_t>& packet) {
    pipeline_->process(PacketBatch(std::vector<PacketView>{view(packet)}));
  }
  std::uint64_t value(const std::string& name) const { return counters.value(name); }
  std::uint64_t sum(const char* const* names, std::size_t n) const {
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < n; ++i) total += counters.value(names[i]);
    return total;
  }
  /// Every well-framed or not readout is accepted or counted under one error.
  void expect_readouts_accounted() const {
    EXPECT_EQ(value("readouts.received"),
              value("readouts.accepted") + sum(kReadoutErrors, std::size(kReadoutErrors)));
  }
  std::uint64_t groups() const { return sum(kEventOutcomes, std::size(kEventOutcomes)); }

  CounterRegistry counters;
  RecordingSink sink;
  std::unique_ptr<TempFile> file_;
  std::unique_ptr<TrexPipeline> pipeline_;
};

TEST_F(TrexPipelineTest, AnEventHasTheCentreOfMassPixelAndTheEarliestHitsTof) {
  start();
  // Vessel A, ring 0 (fibre 0 or 1), FEN 0. Wires vmm 1 ch 10 (xz 234) adc 100 and ch 11
  // (xz 235) adc 300: (234*100 + 235*300) / 400 = 234.75 -> 235: x 14, z 11. Grids vmm 3 ch 20
  // (y 26) and ch 21 (y 27), adc 200 each: 26.5 -> 27 (std::round, half up).
  // 1 + 14 + 384*27 + 53760*11 = 601743.
  send(PacketBuilder(0)
           .hit(1, 0, 3, 20, 200, 40'010)
           .hit(0, 0, 1, 10, 100, 40'000)
           .hit(0, 0, 1, 11, 300, 40'020)
           .hit(1, 0, 3, 21, 200, 40'300)
           .build());
  EXPECT_TRUE(sink.events.empty()) << "the reorder window is still open";
  pipeline_->flush();
  ASSERT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(sink.events[0].pixel, 601'743U);
  EXPECT_EQ(sink.events[0].pulse_ns, test::decoded(test::kPulseNs));
  EXPECT_EQ(sink.events[0].tof_ns, test::quantised_tof(40'000));
  EXPECT_EQ(value("events.formed"), 1U);
  EXPECT_EQ(value("readouts.accepted"), 4U);
  EXPECT_EQ(groups(), 1U);
  expect_readouts_accounted();
}

TEST_F(TrexPipelineTest, TheWindowClosesGroupsAndHitsFurtherApartThanTheGapAreTwoEvents) {
  start();
  // Two neutrons in vessel D (ring 1, FEN 2) 600 ns apart (gap 500): two events.
  send(PacketBuilder(0)
           .hit(2, 2, 0, 32, 100, 50'000)  // xz 4800: x 300, z 0
           .hit(2, 2, 2, 0, 100, 50'010)   // y 89
           .hit(2, 2, 0, 33, 100, 50'610)  // xz 4801: z 1
           .hit(2, 2, 2, 1, 100, 50'620)   // y 90
           .build());
  // 2 ms later on the same queue: the 1 ms window has passed both groups.
  send(PacketBuilder(1).hit(0, 0, 0, 32, 100, 2'060'000).build());
  ASSERT_EQ(sink.events.size(), 2U);
  EXPECT_EQ(sink.events[0].pixel, 1U + 300 + 384 * 89);
  EXPECT_EQ(sink.events[1].pixel, 1U + 300 + 384 * 90 + 53'760);
  EXPECT_EQ(sink.events[1].tof_ns, test::quantised_tof(50'610));
  EXPECT_EQ(value("events.formed"), 2U);
}

// One readout per packet, each rejected for one reason.
struct ReadoutCase {
  const char* name;
  const char* counter;
  std::vector<std::uint8_t> body;
};

std::vector<std::uint8_t> body(const PacketBuilder& b) {
  const std::vector<std::uint8_t> p = b.build();
  return std::vector<std::uint8_t>(p.begin() + 32, p.end());
}

std::vector<ReadoutCase> readout_cases() {
  const ess::EssTime t = ess::to_ess(test::kPulseNs + 1000);
  const ess::EssTime early = ess::to_ess(test::kPulseNs - test::kPeriodNs - 2000);
  return {
      {"fiber", "readouts.errors.fiber", body(PacketBuilder().hit(20, 0, 0, 32, 100, 1000))},
      {"fen", "readouts.errors.fen", body(PacketBuilder().hit(0, 9, 0, 32, 100, 1000))},
      {"vmm", "readouts.errors.vmm", body(PacketBuilder().hit(2, 0, 4, 0, 100, 1000))},
      {"channel", "readouts.errors.channel", body(PacketBuilder().hit(0, 0, 0, 10, 100, 1000))},
      {"time_fraction", "readouts.errors.time_fraction",
       body(PacketBuilder().readout(0, 0, 20, t.high, 88'052'500, 100, 0, 0, 32))},
      {"adc", "readouts.errors.adc_below_threshold",
       body(PacketBuilder().hit(0, 0, 0, 32, 49, 1000))},  // vessel A: DefaultMinADC 50
      {"adc_vessel", "readouts.errors.adc_below_threshold",
       body(PacketBuilder().hit(2, 2, 0, 32, 19, 1000))},  // vessel D: MinADC 20
      {"adc_over_threshold_bit", "readouts.errors.adc_below_threshold",
       body(PacketBuilder().hit(0, 0, 0, 32, 0x8000 | 49, 1000))},  // bit 15 is not the ADC
      {"tof_negative", "readouts.errors.tof_negative",              // before the previous pulse too
       body(PacketBuilder().readout(0, 0, 20, early.high, early.low, 100, 0, 0, 32))},
      {"tof_too_large", "readouts.errors.tof_too_large",
       body(PacketBuilder().hit(0, 0, 0, 32, 100, 1'500'000'000))},
      {"length", "readouts.errors.length",
       body(PacketBuilder().readout(0, 0, 21, t.high, t.low, 100, 0, 0, 32))},
      {"truncated", "readouts.errors.truncated", {0, 0, 20, 0, 1, 2, 3}},
  };
}

TEST_F(TrexPipelineTest, EveryRejectedReadoutIsCountedOnce) {
  start();
  std::uint32_t sequence = 0;
  for (const ReadoutCase& c : readout_cases()) {
    SCOPED_TRACE(c.name);
    const std::uint64_t before = value(c.counter);
    send(PacketBuilder(sequence++).raw(c.body).build());
    EXPECT_EQ(value(c.counter), before + 1);
    EXPECT_EQ(value("readouts.accepted"), 0U);
    expect_readouts_accounted();
  }
  // One that passes on vessel D at its own MinADC 20 (vessel A's 50 would refuse it).
  send(PacketBuilder(sequence++).hit(2, 2, 0, 32, 20, 1000).build());
  EXPECT_EQ(value("readouts.accepted"), 1U);
  expect_readouts_accounted();
}

TEST_F(TrexPipelineTest, APacketOfAnotherDetectorIsCountedByTheHeaderParser) {
  start();
  send(PacketBuilder(0, 0, 0x48).hit(0, 0, 0, 32, 100, 1000).build());  // Freia's type
  EXPECT_EQ(value("parser.essheader.errors.type"), 1U);
  EXPECT_EQ(value("readouts.received"), 0U);
}

TEST_F(TrexPipelineTest, EveryEventRejectionIsCountedOnce) {
  start();
  // Wires only (vessel A FEN 0), grids only (FEN 1), grids spanning 5 > 3 (vessel B FEN 2:
  // y 113 and 109), then grids spanning exactly 3 (FEN 3), each group alone on its unit.
  send(PacketBuilder(0)
           .hit(0, 0, 1, 10, 100, 1000)
           .hit(0, 0, 1, 11, 100, 1010)
           .hit(0, 1, 3, 20, 100, 1000)
           .hit(0, 2, 1, 10, 100, 1000)
           .hit(0, 2, 3, 20, 100, 1010)
           .hit(0, 2, 3, 24, 100, 1020)
           .hit(0, 3, 1, 10, 100, 1000)
           .hit(0, 3, 3, 20, 100, 1010)
           .hit(0, 3, 3, 22, 100, 1020)
           .build());
  pipeline_->flush();
  EXPECT_EQ(value("events.rejected.wire_only"), 1U);
  EXPECT_EQ(value("events.rejected.grid_only"), 1U);
  EXPECT_EQ(value("events.rejected.grid_span"), 1U);
  EXPECT_EQ(value("events.formed"), 1U);
  EXPECT_EQ(groups(), 4U);
  ASSERT_EQ(sink.events.size(), 1U);
  // FEN 3 (vessel B, column 1): wire vmm 1 ch 10: w 42 + 96 = 138, rotated 16*3 + 10 = 58,
  // xz 442 -> x 27, z 10; grids 26 and 28 -> y 139 - 27 = 112.  1 + 27 + 384*112 + 537600.
  EXPECT_EQ(sink.events[0].pixel, 1U + 27 + 384 * 112 + 537'600);
}

TEST_F(TrexPipelineTest, TheGridSpanOptionWinsOverTheFile) {
  OptionValues extra;
  extra.set("max-grid-span", "5", true);
  start(extra);
  send(PacketBuilder(0)
           .hit(0, 2, 1, 10, 100, 1000)
           .hit(0, 2, 3, 20, 100, 1010)
           .hit(0, 2, 3, 24, 100, 1020)
           .build());
  pipeline_->flush();
  EXPECT_EQ(value("events.formed"), 1U);
  EXPECT_EQ(value("events.rejected.grid_span"), 0U);
}

TEST_F(TrexPipelineTest, AnEventOutsideThePixelVolumeIsCounted) {
  // let.json's vessel: rotated, YOffset 0, so grid channel 1 is y 65535.
  start({}, test::let_config(R"({"NumGrids": 51, "Rotation": true, "Short": true})"));
  send(PacketBuilder(0)
           .hit(2, 0, 2, 33, 100, 1000)  // ring 1, wire: x 11, z 0
           .hit(2, 0, 0, 1, 100, 1010)   // grid: y 65535
           .hit(0, 0, 2, 33, 100, 5000)  // ring 0 (column 1): rotated x 5, z 0
           .hit(0, 0, 0, 0, 100, 5010)   // grid: y 0
           .build());
  pipeline_->flush();
  EXPECT_EQ(value("events.rejected.pixel"), 1U);
  ASSERT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(sink.events[0].pixel, 1U + 5);
  EXPECT_EQ(groups(), 2U);
}

TEST_F(TrexPipelineTest, ALateHitIsCountedAndStillUsed) {
  start();
  send(PacketBuilder(0).hit(0, 0, 1, 10, 100, 3'000'000).hit(0, 0, 3, 20, 100, 3'000'010).build());
  // 2 ms behind the latest hit of its queue: later than the 1 ms window.
  send(PacketBuilder(1).hit(2, 2, 0, 32, 100, 1'000'000).hit(2, 2, 2, 0, 100, 1'000'010).build());
  pipeline_->flush();
  EXPECT_EQ(value("hits.late"), 2U);
  EXPECT_EQ(value("events.formed"), 2U);
}

TEST_F(TrexPipelineTest, AFullReorderBufferClosesEarlyAndLosesNothing) {
  OptionValues extra;
  extra.set("reorder-buffer-hits", "64", true);
  start(extra);
  PacketBuilder b(0);
  for (unsigned i = 0; i < 40; ++i) {  // 40 neutrons, 80 hits, on one unit inside the window
    b.hit(0, 0, 1, 10, 100, 10'000 + i * 1000).hit(0, 0, 3, 20, 100, 10'010 + i * 1000);
  }
  send(b.build());
  pipeline_->flush();
  EXPECT_GT(value("hits.reorder_buffer_full"), 0U);
  EXPECT_EQ(value("events.formed"), 40U);
  EXPECT_EQ(groups(), 40U);
}

TEST_F(TrexPipelineTest, TheTimeoutClosesAQuietUnitsGroups) {
  start();
  send(PacketBuilder(0).hit(0, 0, 1, 10, 100, 1000).hit(0, 0, 3, 20, 100, 1010).build());
  pipeline_->tick(1'000'000'000);  // the unit was active
  EXPECT_TRUE(sink.events.empty());
  pipeline_->tick(1'100'000'000);  // 100 ms quiet: not yet
  EXPECT_TRUE(sink.events.empty());
  pipeline_->tick(1'200'000'000);  // 200 ms quiet: cluster-timeout-ms
  EXPECT_EQ(sink.events.size(), 1U);
}

// --- Calibration ---------------------------------------------------------------------------

std::string values(double v) {
  std::string s = "[";
  for (unsigned i = 0; i < 64; ++i) s += (i == 0 ? "" : ",") + std::to_string(v);
  return s + "]";
}

std::string vmm(double adc_slope) {
  return R"({"adc_offset": )" + values(0) + R"(, "adc_slope": )" + values(adc_slope) +
         R"(, "tdc_offset": )" + values(0) + R"(, "tdc_slope": )" + values(1) + "}";
}

std::string calibration(const std::string& id, double vmm0_adc_slope) {
  return R"({"Detector": "TREX", "Version": 1, "Calibrations": [{"VMMHybridCalibration": {
    "HybridId": ")" +
         id + R"(", "CalibrationDate": "2026-01-01",
    "vmm0": )" +
         vmm(vmm0_adc_slope) + R"(, "vmm1": )" + vmm(1) + "}}]}";
}

TEST_F(TrexPipelineTest, TheCalibrationIsAppliedToAdcAndTime) {
  // Vessel A ring 0 FEN 0 hybrid 0 (Config[] 0): its VMM 0 ADCs scaled by 0.1.
  const TempFile cal(calibration(test::hybrid_id(0), 0.1));
  OptionValues extra;
  extra.set("calibration", cal.path(), true);
  start(extra);
  EXPECT_EQ(value("calibration.uncalibrated_hybrids"), 19U);
  // VMM 0 ch 32: 400 -> 40, below 50. VMM 1 ch 10 keeps 400; every time gets the TDC term
  // (1.5 * 22.72 - 0) * 1 = 34.08 -> 34 ns.
  send(PacketBuilder(0)
           .hit(0, 0, 0, 32, 400, 1000)
           .hit(0, 0, 1, 10, 400, 2000)
           .hit(0, 0, 3, 20, 400, 2010)
           .build());
  pipeline_->flush();
  EXPECT_EQ(value("readouts.errors.adc_below_threshold"), 1U);
  ASSERT_EQ(sink.events.size(), 1U);
  EXPECT_EQ(sink.events[0].tof_ns, test::quantised_tof(2000) + 34);
}

TEST(TrexCalibration, APlaceholderHybridCannotBeCalibrated) {
  const TempFile config(test::let_config(R"({"NumGrids": 51, "Rotation": true, "Short": true})"));
  const TempFile cal(calibration(std::string(32, '0'), 1));
  OptionValues extra;
  extra.set("calibration", cal.path(), true);
  const std::string message =
      efu::test::config_error_of([&] { load_shared(settings_for(config.path(), extra)); });
  EXPECT_NE(message.find("/Calibrations/0/VMMHybridCalibration/HybridId: "
                         "\"00000000000000000000000000000000\" is not in the trex instrument "
                         "config"),
            std::string::npos)
      << message;
}

// --- Options -------------------------------------------------------------------------------

TEST(TrexOptions, RangesAreChecked) {
  const auto error = [](const char* name, const char* v) {
    OptionValues values = defaults();
    values.set(name, v, true);
    return efu::test::config_error_of([&] { settings_from_options(values); });
  };
  EXPECT_NE(error("max-grid-span", "0").find("expected 1..65535"), std::string::npos);
  EXPECT_NE(error("max-tof-ns", "0").find("expected 1..2147483647"), std::string::npos);
  EXPECT_NE(error("reorder-buffer-hits", "63").find("expected 64..1048576"), std::string::npos);
  EXPECT_NE(error("cluster-timeout-ms", "0").find("expected 1..3600000"), std::string::npos);
}

TEST(TrexOptions, TheFilesGridSpanAppliesUnlessTheOptionIsGiven) {
  const TempFile config(test::let_config(R"({"NumGrids": 51, "Rotation": true, "Short": true})"));
  EXPECT_EQ(load_shared(settings_for(config.path()))->settings.max_grid_span, 5);
  OptionValues extra;
  extra.set("max-grid-span", "3", true);
  EXPECT_EQ(load_shared(settings_for(config.path(), extra))->settings.max_grid_span, 3);
  // Neither the file nor the option: the reference's 3.
  const TempFile bare(R"({"Detector": "TREX", "InstrumentGeometry": "TREX",
    "Vessel_Config": {"0": {"Rotation": false}},
    "Config": [{"Ring": 0, "VesselId": "0", "FEN": 0, "Hybrid": 0,
                "HybridId": "E5533333222222221111111100000000"}]})");
  EXPECT_EQ(load_shared(settings_for(bare.path()))->settings.max_grid_span, 3);
  // The shipped trex.json: its MaxGridsSpan 5.
  EXPECT_EQ(load_shared(settings_for(default_config_path()))->settings.max_grid_span, 5);
}

// --- Order ---------------------------------------------------------------------------------

struct Readout20 {
  std::uint8_t fiber, fen, vmm, channel;
  std::uint16_t adc;
  std::uint64_t tof;
};

// N neutrons over all eight units of the test instrument, 1.5 us apart, each two wires and two
// grids within 40 ns, in time order.
std::vector<Readout20> neutrons(unsigned n) {
  struct Place {
    std::uint8_t ring, fen, wire_vmm, wire_lo, grid_vmm, grid_lo;
  };
  const Place places[] = {{0, 0, 1, 0, 3, 0},   {0, 1, 0, 32, 4, 0}, {0, 2, 1, 20, 3, 30},
                          {0, 3, 1, 40, 2, 58}, {1, 0, 0, 40, 2, 0}, {1, 1, 1, 0, 2, 20},
                          {1, 2, 1, 50, 2, 40}, {1, 3, 0, 50, 2, 48}};
  std::mt19937 rng(11);
  std::vector<Readout20> out;
  for (unsigned i = 0; i < n; ++i) {
    const Place& p = places[rng() % 8];
    const std::uint64_t t = 10'000 + i * 1500ULL;
    const auto wire = static_cast<std::uint8_t>(p.wire_lo + rng() % 10);
    const auto grid = static_cast<std::uint8_t>(p.grid_lo + rng() % 2);
    const auto fiber = static_cast<std::uint8_t>(2 * p.ring + rng() % 2);
    out.push_back(
        {fiber, p.fen, p.wire_vmm, wire, static_cast<std::uint16_t>(100 + rng() % 500), t});
    out.push_back({fiber, p.fen, p.wire_vmm, static_cast<std::uint8_t>(wire + 1), 300, t + 15});
    out.push_back(
        {fiber, p.fen, p.grid_vmm, grid, static_cast<std::uint16_t>(100 + rng() % 500), t + 7});
    out.push_back({fiber, p.fen, p.grid_vmm, static_cast<std::uint8_t>(grid + 1), 300, t + 40});
  }
  return out;
}

std::vector<test::Event> run(const std::vector<std::vector<Readout20>>& packets,
                             CounterRegistry& counters) {
  const TempFile file(test::trex_config());
  RecordingSink sink;
  TrexPipeline pipeline(settings_for(file.path()), counters, sink);
  std::uint32_t sequence = 0;
  for (const auto& p : packets) {
    PacketBuilder b(sequence++);
    for (const Readout20& r : p) b.hit(r.fiber, r.fen, r.vmm, r.channel, r.adc, r.tof);
    const auto bytes = b.build();
    pipeline.process(PacketBatch(std::vector<PacketView>{view(bytes)}));
  }
  pipeline.flush();
  std::sort(sink.events.begin(), sink.events.end());
  return sink.events;
}

TEST(TrexOrder, ShuffledAndDelayedReadoutsGiveTheSameEvents) {
  constexpr unsigned kNeutrons = 2000;
  const std::vector<Readout20> all = neutrons(kNeutrons);
  std::vector<std::vector<Readout20>> ordered;
  for (std::size_t i = 0; i < all.size(); i += 100) {
    ordered.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(i),
                         all.begin() + static_cast<std::ptrdiff_t>(std::min(i + 100, all.size())));
  }
  // Every packet shuffled, and a fifth of the readouts moved one or two packets later.
  std::mt19937 rng(5);
  std::vector<std::vector<Readout20>> shuffled(ordered.size() + 2);
  for (std::size_t p = 0; p < ordered.size(); ++p) {
    for (const Readout20& r : ordered[p])
      shuffled[p + (rng() % 5 == 0 ? 1 + rng() % 2 : 0)].push_back(r);
  }
  for (auto& p : shuffled) std::shuffle(p.begin(), p.end(), rng);

  CounterRegistry in_order;
  CounterRegistry out_of_order;
  const auto a = run(ordered, in_order);
  const auto b = run(shuffled, out_of_order);
  EXPECT_EQ(a.size(), kNeutrons);
  EXPECT_EQ(in_order.value("events.formed"), kNeutrons);
  EXPECT_EQ(out_of_order.value("events.formed"), kNeutrons);
  EXPECT_EQ(out_of_order.value("hits.late"), 0U);
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace efu::trex

namespace efu::trex {
namespace {

// The one-pass sums of a plane equal the SDK's build_clusters() with the largest gap (one
// cluster) in what events use: earliest hit and its pulse, span and centre of mass.
TEST(TrexCluster, OnePassEqualsTheSdksSortedCluster) {
  std::mt19937 rng(3);
  for (unsigned round = 0; round < 2000; ++round) {
    const std::uint32_t n = 1 + rng() % 12;
    std::vector<Hit> hits(n);
    for (Hit& h : hits) {
      h = Hit{1000 + rng() % 8, 100 + rng() % 3, static_cast<std::uint16_t>(rng() % 6),
              static_cast<std::uint16_t>(rng() % 4), 0};  // many ties and zero ADCs on purpose
    }
    PlaneSum one;
    for (const Hit& h : hits) one.add(h);
    vmm3a::Cluster sorted[12];
    ASSERT_EQ(vmm3a::build_clusters(hits.data(), n, 0xFFFF, sorted), 1U);
    EXPECT_EQ(one.time_start, sorted[0].time_start);
    EXPECT_EQ(one.pulse_ns, sorted[0].pulse_ns);
    EXPECT_EQ(one.hits, sorted[0].hits);
    EXPECT_EQ(one.span(), sorted[0].span());
    EXPECT_EQ(one.center(), vmm3a::center_of_mass(sorted[0]));
  }
}

}  // namespace
}  // namespace efu::trex
