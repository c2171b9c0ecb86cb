// The fast paths of the caen plugin against the formulas written plainly: the calibration's
// bucket table for "which unit holds this ratio" against testing every interval in unit order,
// and LoKI's batched readout parser (checks, two divisions, straw, cubic, pixel, done a batch
// at a time) against the facility's formula applied one readout at a time (docs/caen.md), over
// random readouts that hit every rejection, in packets that end inside and on batch boundaries;
// BIFROST's parser (its formula as a value held over the packet) the same way; MIRACLES' rounding
// without libm against std::round; and every instrument's eight-lane parser (readout_lanes.h)
// and scalar walk against the formula readout by readout.
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "caen_readout.h"
#include "calibration.h"
#include "config.h"
#include "efu/ess/ess_time.h"
#include "efu/ess/readout_header.h"
#include "pixel_map.h"
#include "readout_parser.h"
#include "test_support.h"

namespace efu::caen {
namespace {

// --- Unit look-up ---------------------------------------------------------------------------

/// The first unit of `group` whose interval [min, max] holds `pos`, or -1: the rule, plainly.
int first_unit_holding(const Calibration& c, std::uint32_t group, double pos) {
  for (std::uint32_t u = 0; u < c.group_size(); ++u) {
    const UnitCalibration& unit = c.unit(group, u);
    if (pos >= unit.min && pos <= unit.max) return static_cast<int>(u);
  }
  return -1;
}

/// Every position worth trying for `c`: each interval end and bucket boundary (k/64) with its
/// neighbouring doubles, the ends of [0, 1] and outside it, and random positions.
std::vector<double> positions(const Calibration& c, std::mt19937_64& rng) {
  std::vector<double> out{0.0,
                          -0.0,
                          1.0,
                          -1e-300,
                          1.0000000000000002,
                          -0.5,
                          2.0,
                          std::numeric_limits<double>::quiet_NaN(),
                          std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity()};
  auto around = [&out](double x) {
    out.push_back(x);
    out.push_back(std::nextafter(x, -1.0));
    out.push_back(std::nextafter(x, 2.0));
  };
  for (int k = 0; k <= 64; ++k) around(k / 64.0);
  for (std::uint32_t g = 0; g < c.groups(); ++g) {
    for (std::uint32_t u = 0; u < c.group_size(); ++u) {
      around(c.unit(g, u).min);
      around(c.unit(g, u).max);
    }
  }
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (int i = 0; i < 20000; ++i) out.push_back(uniform(rng));
  return out;
}

void expect_table_agrees(const std::string& instrument, int size, const std::string& intervals) {
  const Calibration c = Calibration::from_text(
      test::calibration_text(instrument, 2, size, intervals), "cal.json", instrument);
  std::mt19937_64 rng(5);
  int held = 0;
  for (const double pos : positions(c, rng)) {
    for (std::uint32_t g = 0; g < c.groups(); ++g) {
      const int want = first_unit_holding(c, g, pos);
      ASSERT_EQ(c.unit_of(g, pos), want) << instrument << " " << intervals << " pos " << pos;
      ASSERT_EQ(c.scan_units(g, pos), want) << intervals << " pos " << pos;
      // BIFROST's look-up skips the range check for ratios it knows are in [0, 1].
      if (pos >= 0.0 && pos <= 1.0) {
        ASSERT_EQ(c.lookup().unit_of_inside(g, pos), want) << intervals << " pos " << pos;
      }
      held += want >= 0;
    }
  }
  EXPECT_GT(held, 0);  // the positions did reach the intervals
}

TEST(UnitLookup, TableAgreesWithTestingEveryIntervalInOrder) {
  expect_table_agrees("loki", 7, test::kLokiIntervals);
  expect_table_agrees("bifrost", 3, test::kBifrostIntervals);
  // Reversed intervals, as BIFROST writes some.
  expect_table_agrees("bifrost", 3, "[[0.25, 0.0], [0.625, 0.375], [1.0, 0.75]]");
  // Ends exactly on bucket boundaries (k/64) and single points.
  expect_table_agrees("loki", 4,
                      "[[0.0, 0.015625], [0.03125, 0.03125], [0.5, 0.515625], "
                      "[0.984375, 1.0]]");
  // Units out of order, and more than two intervals in one bucket (the scan fallback).
  expect_table_agrees("loki", 7,
                      "[[0.9, 1.0], [0.001, 0.002], [0.003, 0.004], [0.005, 0.006], "
                      "[0.5, 0.6], [0.007, 0.0155], [0.2, 0.3]]");
  // One unit; and the widest group the file allows (64 units of 1/64 less a gap).
  expect_table_agrees("bifrost", 1, "[[0.1, 0.9]]");
  std::string wide = "[";
  for (int u = 0; u < 64; ++u) {
    wide += std::string(u ? ", " : "") + "[" + std::to_string(u / 64.0 + 0.0001) + ", " +
            std::to_string((u + 1) / 64.0 - 0.0001) + "]";
  }
  expect_table_agrees("loki", 64, wide + "]");
}

// --- LoKI, batched ---------------------------------------------------------------------------

constexpr std::uint64_t kPulseNs = 1'700'000'000'000'000'000ULL;
constexpr std::uint64_t kPrevPulseNs = kPulseNs - 71'428'571;
constexpr std::uint64_t kMaxTofNs = 1'000'000'000;  // test::kLokiConfig's MaxTOFNS

/// A LoKI calibration for test::kLokiConfig's 48 groups whose polynomials differ per group and
/// unit and push some positions past both ends (clamps of either kind).
/// `intervals`: every group's; `groups` below 48 leaves the last groups uncalibrated.
std::string varied_calibration(const char* intervals = test::kLokiIntervals, int groups = 48) {
  std::string s = R"({"Calibration": {"instrument": "loki", "groups": )" + std::to_string(groups) +
                  R"(, "groupsize": 7, "Parameters": [)";
  for (int g = 0; g < groups; ++g) {
    s += std::string(g ? ", " : "") + R"({"groupindex": )" + std::to_string(g) +
         R"(, "intervals": )" + intervals + R"(, "polynomials": [)";
    for (int u = 0; u < 7; ++u) {
      const double a = 0.01 * ((g + u) % 7 - 3);  // −0.03 .. 0.03
      const double b = 0.02 * ((g * 3 + u) % 5 - 2);
      const double c = 0.005 * (u % 3);
      const double d = -0.002 * (g % 4);
      s += std::string(u ? ", " : "") + "[" + std::to_string(a) + ", " + std::to_string(b) + ", " +
           std::to_string(c) + ", " + std::to_string(d) + "]";
    }
    s += "]}";
  }
  return s + "]}}";
}

struct Outcome {
  bool event = false;
  std::string rejected;  // readouts.errors.<name> when not an event
  std::uint64_t pulse_ns = 0;
  std::uint32_t tof_ns = 0;
  std::uint32_t pixel = 0;
  int clamp = 0;  // 1 low, 2 high
};

/// The checks every CAEN instrument makes first (fibre, FEN, time fraction, time of flight
/// against kPulseNs and kPrevPulseNs), plainly: false with `rejected` set, or the readout's
/// reference pulse and TOF.
bool timed_by_the_formula(const CaenReadout& r, std::uint64_t max_tof_ns, std::string& rejected,
                          std::uint64_t& reference, std::uint32_t& tof_ns) {
  if (r.fiber > kMaxFiber) return rejected = "fiber", false;
  if (r.fen > kMaxFen) return rejected = "fen", false;
  if (r.time_low > ess::kMaxTimeLow) return rejected = "time_fraction", false;
  const std::uint64_t t = ess::to_ns(r.time_high, r.time_low);
  reference = kPulseNs;
  if (t < kPulseNs) {
    if (t < kPrevPulseNs) return rejected = "tof_negative", false;
    reference = kPrevPulseNs;
  }
  if (t - reference > max_tof_ns) return rejected = "tof_too_large", false;
  tof_ns = static_cast<std::uint32_t>(t - reference);
  return true;
}

/// One readout through docs/caen.md's LoKI formula, written out with nothing precomputed.
Outcome loki_by_the_formula(const CaenConfig& config, const Calibration& cal,
                            std::int64_t threshold, const CaenReadout& r) {
  Outcome o;
  std::uint64_t reference = 0;
  std::uint32_t tof_ns = 0;
  if (!timed_by_the_formula(r, kMaxTofNs, o.rejected, reference, tof_ns)) return o;
  const LokiRing& ring = config.rings[r.fiber / 2];
  if (!ring.configured) return o.rejected = "ring", o;
  if (r.fen >= ring.fens) return o.rejected = "fen", o;
  if (r.group >= 8) return o.rejected = "group", o;
  const std::int64_t a = static_cast<std::int16_t>(r.a), b = static_cast<std::int16_t>(r.b),
                     c = static_cast<std::int16_t>(r.c), d = static_cast<std::int16_t>(r.d);
  const std::int64_t sum = a + b + c + d;
  if (sum == 0) return o.rejected = "amplitude_zero", o;
  if (sum < threshold) return o.rejected = "amplitude_low", o;
  const double pos = static_cast<double>(a + b) / static_cast<double>(sum);
  if (pos < 0.0 || pos > 1.0) return o.rejected = "position", o;
  const LokiBank& bank = config.banks[ring.bank];
  const std::uint32_t layer = r.group % 4, half = r.group / 4;
  const std::uint32_t group =
      bank.y_offset / 7 + layer * bank.groups_n + (ring.fen_offset + r.fen) * 2 + half;
  if (group >= cal.groups()) return o.rejected = "calibration_group", o;
  const double straw = static_cast<double>(b + d) / static_cast<double>(sum);
  const int unit = first_unit_holding(cal, group, straw);
  if (unit < 0) return o.rejected = "outside_interval", o;
  const UnitCalibration& u = cal.unit(group, static_cast<std::uint32_t>(unit));
  double corrected = pos - (u.a + pos * (u.b + pos * (u.c + pos * u.d)));
  if (corrected < 0.0) corrected = 0.0, o.clamp = 1;
  if (corrected > 1.0) corrected = 1.0, o.clamp = 2;
  const auto x = static_cast<std::uint32_t>(std::round(corrected * (config.resolution - 1)));
  const std::uint32_t y = bank.y_offset + layer * bank.groups_n * 7 +
                          (ring.fen_offset + r.fen) * 14 + half * 7 +
                          static_cast<std::uint32_t>(unit);
  if (x >= config.resolution || y >= config.total_groups * 7) return o.rejected = "pixel", o;
  o.event = true;
  o.pulse_ns = reference;
  o.tof_ns = tof_ns;
  o.pixel = 1 + x + config.resolution * y;
  return o;
}

/// A random readout that lands in every branch of the formula now and then: mostly good ones
/// on the configured rings, and bad fibres, FENs, groups, times and amplitudes.
CaenReadout random_readout(std::mt19937_64& rng) {
  CaenReadout r;
  const auto pick = [&rng](std::uint64_t n) { return rng() % n; };
  r.fiber = static_cast<std::uint8_t>(pick(20) == 0 ? pick(256) : pick(8));  // rings 0..3
  r.fen = static_cast<std::uint8_t>(pick(20) == 0 ? pick(30) : pick(2));
  r.group = static_cast<std::uint8_t>(pick(20) == 0 ? pick(12) : pick(8));
  std::uint64_t t = kPulseNs + pick(100'000'000);
  if (pick(10) == 0) t = kPrevPulseNs + pick(kPulseNs - kPrevPulseNs);  // the previous pulse's
  if (pick(40) == 0) t = kPrevPulseNs - 1 - pick(1000);                 // before both pulses
  if (pick(50) == 0) t = kPulseNs + kMaxTofNs - 500 + pick(1000);
  const ess::EssTime e = ess::to_ess(t);
  r.time_high = e.high;
  r.time_low = pick(100) == 0 ? ess::kMaxTimeLow + 1 + static_cast<std::uint32_t>(pick(5)) : e.low;
  auto amplitude = [&]() -> std::uint16_t {
    switch (pick(8)) {
      case 0:
        return static_cast<std::uint16_t>(rng());  // any 16 bits: negatives too
      case 1:
        return static_cast<std::uint16_t>(pick(3));  // 0, 1, 2: zero and tiny sums
      default:
        return static_cast<std::uint16_t>(pick(8000));
    }
  };
  r.a = amplitude();
  r.b = amplitude();
  r.c = amplitude();
  r.d = amplitude();
  if (pick(40) == 0)
    r.c = static_cast<std::uint16_t>(-(static_cast<std::int16_t>(r.a) +
                                       static_cast<std::int16_t>(r.b) +
                                       static_cast<std::int16_t>(r.d)));
  return r;
}

std::vector<std::uint8_t> packet_of(const std::vector<CaenReadout>& readouts) {
  std::vector<std::uint8_t> p(ess::kHeaderSizeV1 + readouts.size() * kReadoutSize);
  for (std::size_t i = 0; i < readouts.size(); ++i) {
    write_readout(p.data() + ess::kHeaderSizeV1 + i * kReadoutSize, readouts[i]);
  }
  return p;
}

/// The header every test packet has: pulse kPulseNs, previous pulse kPrevPulseNs.
ess::PacketHeader packet_header() {
  ess::PacketHeader header{};
  header.pulse_time_ns = kPulseNs;
  header.prev_pulse_time_ns = kPrevPulseNs;
  return header;
}

/// A parser of `pixels` with or without the lanes (ReadoutSettings::lanes); with AVX2 it must
/// take them when asked to (else a test would compare the scalar walk twice).
ReadoutParser parser_with(CounterRegistry& counters, const PixelMap& pixels,
                          std::uint64_t max_tof_ns, bool lanes) {
  ReadoutParser parser(counters, pixels, ReadoutSettings{max_tof_ns, 0, lanes});
  EXPECT_EQ(parser.uses_lanes(), lanes && lanes::available());
  return parser;
}

/// The events `parser` forms from one packet of `readouts` with packet_header()'s pulses.
std::vector<test::Event> parse_events(ReadoutParser& parser,
                                      const std::vector<CaenReadout>& readouts) {
  const std::vector<std::uint8_t> p = packet_of(readouts);
  std::vector<test::Event> got;
  parser.parse(p.data() + ess::kHeaderSizeV1,
               static_cast<std::uint32_t>(p.size() - ess::kHeaderSizeV1), packet_header(),
               [&](std::uint64_t pulse, std::uint32_t tof, std::uint32_t pixel) {
                 got.push_back({pulse, tof, pixel});
               });
  return got;
}

/// The events `parser` forms from `readouts` cut into packets of 372 (the last shorter).
std::vector<test::Event> parse_in_packets(ReadoutParser& parser,
                                          const std::vector<CaenReadout>& readouts) {
  std::vector<test::Event> got;
  for (std::size_t i = 0; i < readouts.size(); i += 372) {
    const std::size_t n = std::min<std::size_t>(372, readouts.size() - i);
    const std::vector<CaenReadout> packet(readouts.begin() + static_cast<std::ptrdiff_t>(i),
                                          readouts.begin() + static_cast<std::ptrdiff_t>(i + n));
    const std::vector<test::Event> part = parse_events(parser, packet);
    got.insert(got.end(), part.begin(), part.end());
  }
  return got;
}

/// `got` is the events of `want`, in order; `where` names the packet in a failure.
void expect_events(const std::vector<test::Event>& got, const std::vector<Outcome>& want,
                   const std::string& where) {
  ASSERT_EQ(got.size(), want.size()) << where;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i], (test::Event{want[i].pulse_ns, want[i].tof_ns, want[i].pixel}))
        << "event " << i << " of " << where;
  }
}

/// After a parser's run: events.formed, readouts.received and every readouts.errors.<name>
/// equal what the formula said, each readout counted once, and the random readouts did reach
/// every rejection in `reached` (and amplitude_low when there is a threshold). `bad_length` of
/// the readouts were blocks with a wrong data_length (readouts.errors.length, no readout error).
void expect_accounting(const CounterRegistry& counters,
                       std::map<std::string, std::uint64_t>& want_rejected,
                       std::uint64_t want_events, std::uint64_t readouts, std::int64_t threshold,
                       std::initializer_list<const char*> reached, std::uint64_t bad_length = 0) {
  EXPECT_EQ(counters.value("events.formed"), want_events);
  EXPECT_EQ(counters.value("readouts.received"), readouts);
  EXPECT_EQ(counters.value("readouts.errors.length"), bad_length);
  std::uint64_t rejected = bad_length;
  for (const char* name : kReadoutErrorNames) {
    const std::uint64_t want_n = want_rejected[name];
    EXPECT_EQ(counters.value(std::string("readouts.errors.") + name), want_n) << name;
    rejected += want_n;
  }
  EXPECT_EQ(want_events + rejected, readouts);  // every readout accounted for once
  EXPECT_GT(want_events, 0U);
  for (const char* name : reached) EXPECT_GT(want_rejected[name], 0U) << name;
  if (threshold > 0) {
    EXPECT_GT(want_rejected["amplitude_low"], 0U);
  }
}

/// What the formula said of the readouts so far: the current packet's events, and over the run
/// the events, clamps and rejections (a block's wrong data_length as "length").
struct Expected {
  std::vector<Outcome> packet;
  std::map<std::string, std::uint64_t> rejected;
  std::uint64_t events = 0, low = 0, high = 0, readouts = 0;

  void add(const Outcome& o) {
    ++readouts;
    if (!o.event) {
      ++rejected[o.rejected];
      return;
    }
    packet.push_back(o);
    ++events;
    low += o.clamp == 1;
    high += o.clamp == 2;
  }
  /// The packet's events from `parser` are the formula's; then the next packet.
  void expect_packet(ReadoutParser& parser, const std::vector<CaenReadout>& readouts_in,
                     const std::string& where) {
    expect_events(parse_events(parser, readouts_in), packet, where);
    packet.clear();
  }
  /// expect_accounting() with the wrong data_lengths (some expected) apart.
  void expect_counts(const CounterRegistry& counters, std::int64_t threshold,
                     std::initializer_list<const char*> reached) {
    const std::uint64_t bad_length = rejected["length"];
    rejected.erase("length");
    EXPECT_GT(bad_length, 0U);
    expect_accounting(counters, rejected, events, readouts, threshold, reached, bad_length);
  }
};

// Four units within the first of the 64 buckets: its straws need scan_units(), the rest the
// table (Calibration::Lookup).
constexpr const char* kCrowdedLokiIntervals =
    "[[0.0, 0.003], [0.004, 0.007], [0.008, 0.011], [0.012, 0.3], [0.31, 0.6], [0.61, 0.9], "
    "[0.91, 1.0]]";

// LoKI's batched scalar parser and its eight lanes (readout_lanes.h), each against the formula
// one readout at a time, with the calibration's intervals as usual, crowded into one bucket, and
// with groups left uncalibrated; blocks with a wrong data_length among the readouts. With AVX2 the
// lanes must be taken when asked for (else this would test the scalar parser twice).
TEST(LokiBatch, EventsAndCountsEqualTheFormulaReadoutByReadout) {
  const CaenConfig config = CaenConfig::from_text(test::kLokiConfig, "loki.json");
  struct Variant {
    const char* intervals;
    int groups;
  };
  for (const Variant v : {Variant{test::kLokiIntervals, 48}, Variant{kCrowdedLokiIntervals, 48},
                          Variant{test::kLokiIntervals, 40}}) {
    const Calibration cal =
        Calibration::from_text(varied_calibration(v.intervals, v.groups), "cal.json", "loki");
    for (const bool lanes : {true, false}) {
      for (const std::int64_t threshold : {std::int64_t{0}, std::int64_t{3000}}) {
        const PixelMap pixels(config, cal, threshold);
        CounterRegistry counters;
        ReadoutParser parser = parser_with(counters, pixels, config.max_tof_ns, lanes);
        std::mt19937_64 rng(static_cast<std::uint64_t>(threshold) + 17);
        Expected want;
        // Packet sizes around the batch size (64) and the lanes (8): empty, inside one batch,
        // exactly one or two batches, one past, and a full 8972-byte packet's 372.
        for (const std::size_t n :
             {0, 1, 7, 8, 9, 63, 64, 65, 127, 128, 129, 200, 372, 372, 372, 372, 372}) {
          std::vector<CaenReadout> readouts_in(n);
          for (CaenReadout& r : readouts_in) {
            r = random_readout(rng);
            if (rng() % 50 == 0) r.data_length = static_cast<std::uint16_t>(rng() % 48);
            Outcome o;
            if (r.data_length != kReadoutSize) {
              o.rejected = "length";  // the block walker's
            } else {
              o = loki_by_the_formula(config, cal, threshold, r);
            }
            want.add(o);
          }
          want.expect_packet(parser, readouts_in,
                             "a packet of " + std::to_string(n) + (lanes ? ", lanes" : ""));
          if (HasFatalFailure()) return;
        }
        EXPECT_EQ(counters.value("calibration.clamp_low"), want.low);
        EXPECT_EQ(counters.value("calibration.clamp_high"), want.high);
        EXPECT_GT(want.low, 0U);  // the random readouts did reach both clamps
        EXPECT_GT(want.high, 0U);
        want.expect_counts(counters, threshold,
                           {"fiber", "fen", "time_fraction", "tof_negative", "tof_too_large",
                            "ring", "group", "amplitude_zero", "position", "outside_interval"});
        if (v.groups < 48) {
          EXPECT_GT(want.rejected["calibration_group"], 0U);
        }
      }
    }
  }
}

// --- BIFROST's parser ----------------------------------------------------------------------------

struct BifrostOutcome {
  std::string rejected;  // empty: an event
  test::Event event{};
  std::uint32_t source = 0;
};

/// One readout through docs/caen.md's BIFROST formula, written out plainly.
BifrostOutcome bifrost_by_the_formula(const CaenConfig& config, const Calibration& cal,
                                      std::int64_t threshold, const CaenReadout& r) {
  BifrostOutcome o;
  std::uint64_t reference = 0;
  std::uint32_t tof_ns = 0;
  if (!timed_by_the_formula(r, config.max_tof_ns, o.rejected, reference, tof_ns)) return o;
  const std::uint32_t ring = r.fiber / 2;
  if (ring > config.max_ring) return o.rejected = "ring", o;
  if (r.fen > config.max_fen) return o.rejected = "fen", o;
  if (r.group > config.max_group) return o.rejected = "group", o;
  const std::int64_t a = r.a, b = r.b;
  const std::int64_t sum = a + b;
  if (sum == 0) return o.rejected = "amplitude_zero", o;
  if (sum > config.max_amplitude) return o.rejected = "amplitude_high", o;
  if (sum < threshold) return o.rejected = "amplitude_low", o;
  const double ratio = static_cast<double>(a) / static_cast<double>(sum);
  if (ratio < 0.0 || ratio > 1.0) return o.rejected = "position", o;
  const std::uint32_t group = ring * 15 + r.group;
  if (group >= cal.groups()) return o.rejected = "calibration_group", o;
  const int unit = first_unit_holding(cal, group, ratio);
  if (unit < 0) return o.rejected = "outside_interval", o;
  const UnitCalibration& u = cal.unit(group, static_cast<std::uint32_t>(unit));
  const double width = u.hi - u.lo;
  const double along = width == 0.0 ? 0.0 : (ratio - u.lo) / width;
  const std::uint32_t x =
      ring * config.resolution + (r.group % 3) * 100 + static_cast<std::uint32_t>(along * 99);
  const std::uint32_t y = (r.group / 3) * 3 + static_cast<std::uint32_t>(unit);
  if (x >= 900 || y >= 15) return o.rejected = "pixel", o;
  o.event = test::Event{reference, tof_ns, 1 + x + 900 * y};
  o.source = group;
  return o;
}

// BIFROST's scalar walk and its eight lanes, each against the formula one readout at a time
// (sources too), with blocks of a wrong data_length among the readouts.
TEST(BifrostParse, EventsAndCountsEqualTheFormulaReadoutByReadout) {
  // test::kBifrostConfig with the MaxTOFNS that random_readout()'s late readouts straddle.
  const CaenConfig config = CaenConfig::from_text(
      R"({"Detector": "bifrost", "MaxRing": 2, "Resolution": 300, "MaxGroup": 14,
          "MaxAmpl": 32767, "MaxTOFNS": 1000000000})",
      "bifrost.json");
  // 40 of the 45 triplets calibrated (ring 2's last five are not: calibration_group); the
  // intervals as written, reversed (lo above hi), with gaps between them (outside_interval), and
  // crowded into the first bucket (scan_units).
  for (const char* intervals :
       {test::kBifrostIntervals, "[[0.25, 0.0], [0.625, 0.375], [1.0, 0.75]]",
        "[[0.0, 0.003], [0.004, 0.007], [0.008, 0.5]]"}) {
    const Calibration cal = Calibration::from_text(
        test::calibration_text("bifrost", 40, 3, intervals), "cal.json", "bifrost");
    for (const bool lanes : {true, false}) {
      for (const std::int64_t threshold : {std::int64_t{0}, std::int64_t{3000}}) {
        const PixelMap pixels(config, cal, threshold);
        CounterRegistry counters;
        ReadoutParser parser = parser_with(counters, pixels, config.max_tof_ns, lanes);
        const ess::PacketHeader header = packet_header();
        std::mt19937_64 rng(static_cast<std::uint64_t>(threshold) + 29);
        std::map<std::string, std::uint64_t> want_rejected;
        std::uint64_t want_events = 0, readouts = 0;
        for (const std::size_t n :
             {0, 1, 7, 8, 9, 63, 64, 65, 127, 128, 129, 200, 372, 372, 372, 372}) {
          std::vector<CaenReadout> readouts_in(n);
          std::vector<BifrostOutcome> want;
          for (CaenReadout& r : readouts_in) {
            r = random_readout(rng);
            r.group = static_cast<std::uint8_t>(rng() % 17);  // every triplet, and past MaxGroup
            if (rng() % 50 == 0) r.data_length = static_cast<std::uint16_t>(rng() % 48);
            BifrostOutcome o;
            if (r.data_length != kReadoutSize) {
              o.rejected = "length";  // the block walker's
            } else {
              o = bifrost_by_the_formula(config, cal, threshold, r);
            }
            if (o.rejected.empty()) {
              want.push_back(o);
              ++want_events;
            } else {
              ++want_rejected[o.rejected];
            }
          }
          readouts += n;
          const std::vector<std::uint8_t> p = packet_of(readouts_in);
          std::vector<BifrostOutcome> got;
          parser.parse(p.data() + ess::kHeaderSizeV1,
                       static_cast<std::uint32_t>(p.size() - ess::kHeaderSizeV1), header,
                       [&](std::uint64_t pulse, std::uint32_t tof, std::uint32_t pixel,
                           std::uint32_t source) {
                         got.push_back({"", test::Event{pulse, tof, pixel}, source});
                       });
          const std::string where =
              "a packet of " + std::to_string(n) + (lanes ? ", lanes" : "") + ", " + intervals;
          ASSERT_EQ(got.size(), want.size()) << where;
          for (std::size_t i = 0; i < got.size(); ++i) {
            ASSERT_EQ(got[i].event, want[i].event) << "event " << i << " of " << where;
            ASSERT_EQ(got[i].source, want[i].source) << "event " << i << " of " << where;
          }
        }
        const std::uint64_t bad_length = want_rejected["length"];
        want_rejected.erase("length");
        EXPECT_GT(bad_length, 0U);
        expect_accounting(
            counters, want_rejected, want_events, readouts, threshold,
            {"fiber", "fen", "time_fraction", "tof_negative", "tof_too_large", "ring", "group",
             "amplitude_zero", "amplitude_high", "calibration_group", "outside_interval"},
            bad_length);
      }
    }
  }
}

// --- LoKI's slot table and MIRACLES' rounding -------------------------------------------------

TEST(LokiMap, FibresAndFensPastTheTableAreRejectedByMap) {
  // The readout parser checks fibre and FEN (<= 23) before loki_prepare() looks up its slot;
  // PixelMap::map() may be handed any readout, and rejects them itself.
  const CaenConfig config = CaenConfig::from_text(test::kLokiConfig, "loki.json");
  const Calibration cal = Calibration::from_text(varied_calibration(), "cal.json", "loki");
  const PixelMap pixels(config, cal, 0);
  CaenReadout r;
  r.a = r.b = r.c = r.d = 100;
  ASSERT_EQ(pixels.map(r).status, MapStatus::kOk);  // ring 0, FEN 0, group 0 map
  for (unsigned v = kMaxFiber + 1; v < 256; ++v) {
    r.fiber = static_cast<std::uint8_t>(v);
    r.fen = 0;
    EXPECT_EQ(pixels.map(r).status, MapStatus::kRing) << "fibre " << v;
    r.fiber = 0;
    r.fen = static_cast<std::uint8_t>(v);
    EXPECT_EQ(pixels.map(r).status, MapStatus::kFen) << "FEN " << v;
  }
}

/// MIRACLES' pixel for amplitudes A, B on `ring`, `group`, as docs/caen.md writes it (std::round
/// for tube A), or 0 when there is none.
std::uint32_t miracles_by_the_formula(std::uint32_t resolution, std::uint32_t ring, std::int64_t a,
                                      std::int64_t b, std::uint32_t group = 3) {
  const std::int64_t sum = a + b;
  if (sum == 0) return 0;
  const bool tube_b = a < b;
  const std::uint32_t x = 2 * group + ((ring == 1 || ring == 3) ? 24 : 0) + (tube_b ? 1 : 0);
  const auto p = static_cast<float>(1.0 * static_cast<double>(a) / static_cast<double>(sum));
  const int h = static_cast<int>(resolution / 2) - 1;
  const int along =
      tube_b ? static_cast<int>(p * 2 * h) : static_cast<int>(std::round(h - (p - 0.5) * 2 * h));
  const int y = ((ring == 2 || ring == 3) ? static_cast<int>(resolution / 2) : 0) + along;
  if (y < 0 || x >= 48 || y >= 128) return 0;
  return 1 + x + 48 * static_cast<std::uint32_t>(y);
}

TEST(MiraclesMap, RoundingEqualsStdRoundOnEveryAmplitudePair) {
  // Resolution 128 (h = 63) as shipped; 1 (h = −1: the std::round fallback), 2 (h = 0), 3 and
  // 255 (odd: h from the truncated half).
  int reached = 0;
  for (const std::uint32_t resolution : {128U, 1U, 2U, 3U, 255U}) {
    const CaenConfig config =
        CaenConfig::from_text(R"({"Detector": "miracles", "MaxRing": 3, "Resolution": )" +
                                  std::to_string(resolution) + R"(, "MaxTOFNS": 1000000000})",
                              "miracles.json");
    const Calibration cal = Calibration::from_text(
        test::calibration_text("miracles", 48, 2, "[[0.0, 0.5], [0.501, 1.0]]"), "cal.json",
        "miracles");
    const PixelMap pixels(config, cal, 0);
    for (std::uint32_t ring = 0; ring < 4; ++ring) {
      for (std::uint16_t a = 0; a <= 300; ++a) {
        for (std::uint16_t b = 0; b <= 300; ++b) {
          CaenReadout r;
          r.fiber = static_cast<std::uint8_t>(2 * ring);
          r.group = 3;
          r.a = a;
          r.b = b;
          const std::uint32_t want = miracles_by_the_formula(resolution, ring, a, b);
          const MapResult got = pixels.map(r);
          ASSERT_EQ(got.status == MapStatus::kOk ? got.pixel : 0U, want)
              << "Resolution " << resolution << " ring " << ring << " A " << a << " B " << b;
          reached += want != 0;
        }
      }
    }
  }
  EXPECT_GT(reached, 0);
}

}  // namespace
}  // namespace efu::caen

namespace efu::caen {
namespace {

// --- MIRACLES' lanes ---------------------------------------------------------------------------

/// The MIRACLES instrument of the lanes' tests: rings 0..2, Resolution 128, MaxAmpl 20000, and
/// a calibration of two intervals per group.
CaenConfig miracles_config() {
  return CaenConfig::from_text(
      R"({"Detector": "miracles", "MaxRing": 2, "Resolution": 128, "MaxAmpl": 20000,
          "MaxTOFNS": 1000000000})",
      "miracles.json");
}
Calibration miracles_calibration() {
  return Calibration::from_text(
      test::calibration_text("miracles", 48, 2, "[[0.0, 0.5], [0.501, 1.0]]"), "cal.json",
      "miracles");
}

/// One readout through docs/caen.md's MIRACLES formula and the checks before it, plainly.
Outcome miracles_outcome(const CaenConfig& config, std::int64_t threshold, const CaenReadout& r) {
  Outcome o;
  if (r.data_length != kReadoutSize) return o.rejected = "length", o;  // the block walker's
  if (!timed_by_the_formula(r, config.max_tof_ns, o.rejected, o.pulse_ns, o.tof_ns)) return o;
  const std::uint32_t ring = r.fiber / 2;
  if (ring > config.max_ring) return o.rejected = "ring", o;
  const std::int64_t sum = std::int64_t{r.a} + r.b;
  if (sum == 0) return o.rejected = "amplitude_zero", o;
  if (sum > config.max_amplitude) return o.rejected = "amplitude_high", o;
  if (sum < threshold) return o.rejected = "amplitude_low", o;
  o.pixel = miracles_by_the_formula(config.resolution, ring, r.a, r.b, r.group);
  if (o.pixel == 0) return o.rejected = "pixel", o;
  o.event = true;
  return o;
}

/// The eight-lane parser (readout_lanes.h) and the scalar walk of `config`'s instrument, each
/// against `outcome_of(threshold, readout)`, the formula written plainly, one readout at a time:
/// random readouts changed by `tweak(readout, rng)`, blocks with a wrong data_length among them,
/// packets whose sizes end on and between eights, at thresholds 0 and 3000; every rejection in
/// `reached` must be reached. With AVX2 the first parser must take the lanes (else this would
/// compare the scalar walk twice).
template <typename Tweak, typename OutcomeOf>
void lanes_against_the_formula(const CaenConfig& config, const Calibration& cal, std::uint64_t seed,
                               Tweak tweak, OutcomeOf outcome_of,
                               std::initializer_list<const char*> reached) {
  for (const bool lanes : {true, false}) {
    for (const std::int64_t threshold : {std::int64_t{0}, std::int64_t{3000}}) {
      const PixelMap pixels(config, cal, threshold);
      CounterRegistry counters;
      ReadoutParser parser = parser_with(counters, pixels, config.max_tof_ns, lanes);
      std::mt19937_64 rng(static_cast<std::uint64_t>(threshold) + seed);
      Expected want;
      for (const std::size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 200, 372, 372, 372}) {
        std::vector<CaenReadout> readouts_in(n);
        for (CaenReadout& r : readouts_in) {
          r = random_readout(rng);
          tweak(r, rng);
          if (rng() % 50 == 0) r.data_length = static_cast<std::uint16_t>(rng() % 48);
          want.add(outcome_of(threshold, r));
        }
        want.expect_packet(parser, readouts_in,
                           "a packet of " + std::to_string(n) + (lanes ? ", lanes" : ""));
        if (::testing::Test::HasFatalFailure()) return;
      }
      want.expect_counts(counters, threshold, reached);
    }
  }
}

TEST(MiraclesLanes, EventsAndCountsEqualTheFormulaReadoutByReadout) {
  const CaenConfig config = miracles_config();
  const Calibration cal = miracles_calibration();
  lanes_against_the_formula(
      config, cal, 41,
      [](CaenReadout& r, std::mt19937_64& rng) {
        r.group = static_cast<std::uint8_t>(rng() % 30 == 0 ? rng() % 256 : rng() % 12);
        if (rng() % 3 == 0) r.a = static_cast<std::uint16_t>(r.b + rng() % 3);  // near ties
      },
      [&config](std::int64_t threshold, const CaenReadout& r) {
        return miracles_outcome(config, threshold, r);
      },
      {"fiber", "fen", "time_fraction", "tof_negative", "tof_too_large", "ring", "amplitude_zero",
       "amplitude_high", "pixel"});
}

// The lanes' rounding and tube choice on every amplitude pair up to 300 on every ring, as the
// scalar map's RoundingEqualsStdRoundOnEveryAmplitudePair checks it (Resolution 1 has no lanes).
TEST(MiraclesLanes, PixelsEqualTheFormulaOnEveryAmplitudePair) {
  if (!lanes::available()) GTEST_SKIP() << "no AVX2 on this CPU: no lanes to test";
  const Calibration cal = Calibration::from_text(
      test::calibration_text("miracles", 48, 2, "[[0.0, 0.5], [0.501, 1.0]]"), "cal.json",
      "miracles");
  const ess::EssTime t = ess::to_ess(kPulseNs + 5000);
  const auto tof_ns = static_cast<std::uint32_t>(ess::to_ns(t.high, t.low) - kPulseNs);
  for (const std::uint32_t resolution : {128U, 2U, 3U, 255U}) {
    const CaenConfig config =
        CaenConfig::from_text(R"({"Detector": "miracles", "MaxRing": 3, "Resolution": )" +
                                  std::to_string(resolution) + R"(, "MaxTOFNS": 1000000000})",
                              "miracles.json");
    const PixelMap pixels(config, cal, 0);
    CounterRegistry counters;
    ReadoutParser parser(counters, pixels, ReadoutSettings{config.max_tof_ns, 0});
    ASSERT_TRUE(parser.uses_lanes());
    std::vector<CaenReadout> readouts;
    std::vector<Outcome> want;
    for (std::uint32_t ring = 0; ring < 4; ++ring) {
      for (std::uint16_t a = 0; a <= 300; ++a) {
        for (std::uint16_t b = 0; b <= 300; ++b) {
          CaenReadout r;
          r.fiber = static_cast<std::uint8_t>(2 * ring + (a & 1U));
          r.group = static_cast<std::uint8_t>(b % 24);
          r.time_high = t.high;
          r.time_low = t.low;
          r.a = a;
          r.b = b;
          readouts.push_back(r);
          const std::uint32_t pixel = miracles_by_the_formula(resolution, ring, a, b, r.group);
          if (pixel != 0) want.push_back(Outcome{true, "", kPulseNs, tof_ns, pixel, 0});
        }
      }
    }
    expect_events(parse_in_packets(parser, readouts), want,
                  "Resolution " + std::to_string(resolution));
    if (HasFatalFailure()) return;
    const std::uint64_t events = want.size();
    EXPECT_EQ(counters.value("events.formed"), events) << "Resolution " << resolution;
    EXPECT_GT(events, 0U);
  }
}

// --- CSPEC's lanes ----------------------------------------------------------------------------

/// CSPEC's pixel for ring, group and amplitudes A, B, as docs/caen.md writes it (an integer
/// division for y, in 64 bits), or 0 off the 900 × 180 grid.
std::uint32_t cspec_by_the_formula(std::uint32_t resolution, std::uint32_t ring,
                                   std::uint32_t group, std::int64_t a, std::int64_t b) {
  const std::uint64_t x = std::uint64_t{ring} * resolution + (group % 24) * (resolution / 24);
  const std::int64_t y = (std::int64_t{resolution} - 1) * a / (a + b);
  if (x >= 900 || y >= 180) return 0;
  return static_cast<std::uint32_t>(1 + x + 900 * static_cast<std::uint64_t>(y));
}

/// One readout through the checks before CSPEC's formula and the formula, plainly.
Outcome cspec_outcome(const CaenConfig& config, std::int64_t threshold, const CaenReadout& r) {
  Outcome o;
  if (r.data_length != kReadoutSize) return o.rejected = "length", o;  // the block walker's
  if (!timed_by_the_formula(r, config.max_tof_ns, o.rejected, o.pulse_ns, o.tof_ns)) return o;
  const std::uint32_t ring = r.fiber / 2;
  if (ring > config.max_ring) return o.rejected = "ring", o;
  if (r.fen > config.max_fen) return o.rejected = "fen", o;
  if (r.group > config.max_group) return o.rejected = "group", o;
  const std::int64_t sum = std::int64_t{r.a} + r.b;
  if (sum == 0) return o.rejected = "amplitude_zero", o;
  if (sum < threshold) return o.rejected = "amplitude_low", o;  // CSPEC has no MaxAmpl check
  o.pixel = cspec_by_the_formula(config.resolution, ring, r.group, r.a, r.b);
  if (o.pixel == 0) return o.rejected = "pixel", o;
  o.event = true;
  return o;
}

// CSPEC's lanes and scalar walk against the formula readout by readout; MaxFEN 1 and MaxGroup 20 so
// that the random readouts reach the FEN and group checks, and Resolution 400 so that ring 2's x
// and any y above 179 fall off the grid (pixel).
TEST(CspecLanes, EventsAndCountsEqualTheFormulaReadoutByReadout) {
  const CaenConfig config = CaenConfig::from_text(
      R"({"Detector": "cspec", "MaxRing": 2, "MaxFEN": 1, "Resolution": 400, "MaxGroup": 20,
          "MaxAmpl": 100, "MaxTOFNS": 1000000000})",
      "cspec.json");
  const Calibration cal = Calibration::from_text(
      test::calibration_text("cspec", 120, 1, "[[0.0, 1.0]]"), "cal.json", "cspec");
  // MaxAmpl 100 is below most sums, but CSPEC does not check it: no amplitude_high is expected
  // (cspec_outcome), and the counter must stay 0.
  lanes_against_the_formula(
      config, cal, 53,
      [](CaenReadout& r, std::mt19937_64& rng) {
        r.group = static_cast<std::uint8_t>(rng() % 30 == 0 ? rng() % 256 : rng() % 24);
      },
      [&config](std::int64_t threshold, const CaenReadout& r) {
        return cspec_outcome(config, threshold, r);
      },
      {"fiber", "fen", "time_fraction", "tof_negative", "tof_too_large", "ring", "group",
       "amplitude_zero", "pixel"});
}

// The lanes' integer division by way of doubles on every amplitude pair up to 300 (and pairs
// near 65535), at Resolutions whose (Resolution − 1)·A spans 8 to 32 bits, every group of a
// ring: the same pixels as the 64-bit integer formula.
TEST(CspecLanes, PixelsEqualTheIntegerFormulaOnEveryAmplitudePair) {
  if (!lanes::available()) GTEST_SKIP() << "no AVX2 on this CPU: no lanes to test";
  const Calibration cal = Calibration::from_text(
      test::calibration_text("cspec", 120, 1, "[[0.0, 1.0]]"), "cal.json", "cspec");
  const ess::EssTime t = ess::to_ess(kPulseNs + 5000);
  const auto tof_ns = static_cast<std::uint32_t>(ess::to_ns(t.high, t.low) - kPulseNs);
  std::vector<std::pair<std::uint16_t, std::uint16_t>> pairs;
  for (std::uint16_t a = 0; a <= 300; ++a) {
    for (std::uint16_t b = 0; b <= 300; ++b) pairs.emplace_back(a, b);
  }
  for (std::uint32_t d = 0; d < 200; ++d) {
    for (std::uint32_t e = 0; e < 200; e += 7) {
      pairs.emplace_back(static_cast<std::uint16_t>(65535 - d), static_cast<std::uint16_t>(e));
      pairs.emplace_back(static_cast<std::uint16_t>(e), static_cast<std::uint16_t>(65535 - d));
      pairs.emplace_back(static_cast<std::uint16_t>(65535 - d),
                         static_cast<std::uint16_t>(65535 - e));
    }
  }
  for (const std::uint32_t resolution : {180U, 181U, 900U, 4099U, 65536U}) {
    const CaenConfig config =
        CaenConfig::from_text(R"({"Detector": "cspec", "MaxRing": 3, "MaxGroup": 255, )"
                              R"("MaxTOFNS": 1000000000, "Resolution": )" +
                                  std::to_string(resolution) + "}",
                              "cspec.json");
    const PixelMap pixels(config, cal, 0);
    CounterRegistry counters;
    ReadoutParser parser(counters, pixels, ReadoutSettings{config.max_tof_ns, 0});
    ASSERT_TRUE(parser.uses_lanes());
    std::vector<CaenReadout> readouts;
    std::vector<Outcome> want;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      CaenReadout r;
      r.fiber = static_cast<std::uint8_t>(i % 2);  // ring 0: x below 900 for Resolution 900
      r.group = static_cast<std::uint8_t>(i % 256);
      r.time_high = t.high;
      r.time_low = t.low;
      r.a = pairs[i].first;
      r.b = pairs[i].second;
      readouts.push_back(r);
      if (r.a + r.b == 0) continue;  // amplitude_zero
      const std::uint32_t pixel = cspec_by_the_formula(resolution, 0, r.group, r.a, r.b);
      if (pixel != 0) {
        want.push_back(Outcome{true, "", kPulseNs, tof_ns, pixel, 0});
      }
    }
    expect_events(parse_in_packets(parser, readouts), want,
                  "Resolution " + std::to_string(resolution));
    if (HasFatalFailure()) return;
    EXPECT_EQ(counters.value("events.formed"), want.size()) << "Resolution " << resolution;
    EXPECT_GT(want.size(), 0U);
  }
}

// --- the hand-off of eight lanes ----------------------------------------------------------

/// A sink that takes the lanes' runs of eight as well as single events (kTakesRuns), as the
/// pipeline's buffer does, and counts which way the events came.
struct RunRecorder {
  std::vector<test::Event> events;
  std::size_t runs = 0, singles = 0;
  void operator()(std::uint64_t pulse, std::uint32_t tof, std::uint32_t pixel) {
    events.push_back({pulse, tof, pixel});
    ++singles;
  }
  void operator()(std::uint64_t pulse, const std::uint32_t (&tof)[lanes::kLanes],
                  const std::uint32_t (&pixel)[lanes::kLanes]) {
    for (std::uint32_t i = 0; i < lanes::kLanes; ++i) events.push_back({pulse, tof[i], pixel[i]});
    ++runs;
  }
};
static_assert(kTakesRuns<RunRecorder>);

/// Readouts that are mostly events (random_readout() and `tweak` drawn again until the formula
/// makes an event of it, except one time in 32), about a tenth of them of the previous pulse
/// (random_readout()'s), through the lanes to a sink that takes runs. The events equal the
/// formula's in order; exactly the whole eights whose readouts are all events of the packet's
/// pulse come as runs; every readout is counted once.
template <typename Tweak, typename OutcomeOf>
void runs_against_the_formula(const CaenConfig& config, const Calibration& cal, std::uint64_t seed,
                              Tweak tweak, OutcomeOf outcome_of) {
  const PixelMap pixels(config, cal, 0);
  CounterRegistry counters;
  ReadoutParser parser = parser_with(counters, pixels, config.max_tof_ns, true);
  std::mt19937_64 rng(seed);
  Expected want;
  std::size_t want_runs = 0;
  RunRecorder got;
  for (const std::size_t n : {8, 9, 16, 100, 372, 372, 372, 372}) {
    std::vector<CaenReadout> readouts_in(n);
    std::vector<Outcome> outcomes;
    for (CaenReadout& r : readouts_in) {
      const bool any = rng() % 32 == 0;
      for (int draw = 0; draw < 1000; ++draw) {
        r = random_readout(rng);
        tweak(r, rng);
        if (any || outcome_of(r).event) break;
      }
      outcomes.push_back(outcome_of(r));
      want.add(outcomes.back());
    }
    for (std::size_t first = 0; first + lanes::kLanes <= n; first += lanes::kLanes) {
      want_runs +=
          std::all_of(outcomes.begin() + static_cast<std::ptrdiff_t>(first),
                      outcomes.begin() + static_cast<std::ptrdiff_t>(first + lanes::kLanes),
                      [](const Outcome& o) { return o.event && o.pulse_ns == kPulseNs; });
    }
    const std::vector<std::uint8_t> p = packet_of(readouts_in);
    got.events.clear();
    parser.parse(p.data() + ess::kHeaderSizeV1,
                 static_cast<std::uint32_t>(p.size() - ess::kHeaderSizeV1), packet_header(), got);
    expect_events(got.events, want.packet, "a packet of " + std::to_string(n));
    if (::testing::Test::HasFatalFailure()) return;
    want.packet.clear();
  }
  EXPECT_EQ(got.runs, want_runs);
  EXPECT_GT(want_runs, 20U);     // a good part of the 200 whole eights are runs
  EXPECT_GT(got.singles, 100U);  // and events came one at a time too (tails, previous pulse)
  EXPECT_GT(want.readouts, want.events);  // and some readouts were rejected among them
  expect_accounting(counters, want.rejected, want.events, want.readouts, 0, {});
  // The clamps (LoKI's), counted apart for a run of eight events.
  EXPECT_EQ(counters.value("calibration.clamp_low"), want.low);
  EXPECT_EQ(counters.value("calibration.clamp_high"), want.high);
  if (config.instrument == Instrument::kLoki) {
    EXPECT_GT(want.low + want.high, 0U);
  }
}

// The hand-off of the lanes' outcomes (ReadoutParser::emit_lanes) to a sink that takes runs, for
// the three one-source instruments: a whole eight of events of the packet's pulse in one call,
// any other eight (a rejection, a readout of the previous pulse) event by event.
TEST(CaenLanes, EightEventsOfThePulseReachARunSinkInOneCall) {
  if (!lanes::available()) GTEST_SKIP() << "no AVX2 on this CPU: no lanes to test";
  const CaenConfig cspec = CaenConfig::from_text(
      R"({"Detector": "cspec", "MaxRing": 2, "Resolution": 400, "MaxTOFNS": 1000000000})",
      "cspec.json");
  const Calibration cspec_cal = Calibration::from_text(
      test::calibration_text("cspec", 120, 1, "[[0.0, 1.0]]"), "cal.json", "cspec");
  runs_against_the_formula(
      cspec, cspec_cal, 61,
      [](CaenReadout& r, std::mt19937_64& rng) { r.group = static_cast<std::uint8_t>(rng() % 24); },
      [&cspec](const CaenReadout& r) { return cspec_outcome(cspec, 0, r); });

  const CaenConfig miracles = miracles_config();
  const Calibration miracles_cal = miracles_calibration();
  runs_against_the_formula(
      miracles, miracles_cal, 67,
      [](CaenReadout& r, std::mt19937_64& rng) { r.group = static_cast<std::uint8_t>(rng() % 12); },
      [&miracles](const CaenReadout& r) { return miracles_outcome(miracles, 0, r); });

  const CaenConfig loki = CaenConfig::from_text(test::kLokiConfig, "loki.json");
  const Calibration loki_cal = Calibration::from_text(varied_calibration(), "cal.json", "loki");
  runs_against_the_formula(
      loki, loki_cal, 71, [](CaenReadout&, std::mt19937_64&) {},
      [&](const CaenReadout& r) { return loki_by_the_formula(loki, loki_cal, 0, r); });
}

}  // namespace
}  // namespace efu::caen
