// The SDK's VMM3a event pieces on their own, with a channel map and a handler of the test's own
// (no detector plugin): the readout parser's accounting against byte literals, the hit sorter
// against std::stable_sort, the any-order time grouping, plane clusters and their matching.
#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "efu/counters.h"
#include "efu/ess/readout_header.h"
#include "efu/vmm3a/clusters.h"
#include "efu/vmm3a/data_path.h"
#include "efu/vmm3a/hit_sort.h"
#include "efu/vmm3a/readout_parser.h"
#include "efu/vmm3a/time_groups.h"

namespace efu::vmm3a {
namespace {

// --- readout parser -------------------------------------------------------------------------

// A map of the test's own: fibre 2 or 3 (ring 1), FEN 4, VMM 6 or 7 (hybrid 3) are unit 5;
// channels 0..31 only; coordinate = 100 + channel, plane = vmm & 1, threshold 40.
struct TestMap {
  MapStatus map(std::uint8_t fiber, std::uint8_t fen, std::uint8_t vmm, std::uint8_t channel,
                ChannelMapping& out) const noexcept {
    if (fiber / 2 != 1) return MapStatus::kFiber;
    if (fen != 4) return MapStatus::kFen;
    if (vmm / 2 != 3) return MapStatus::kVmm;
    if (channel > 31) return MapStatus::kChannel;
    out = ChannelMapping{5, static_cast<std::uint16_t>(100 + channel), 40,
                         static_cast<std::uint16_t>(vmm_index(0, vmm)),
                         static_cast<std::uint8_t>(vmm & 1U)};
    return MapStatus::kOk;
  }
};

// The readouts after an ESS header, as 20-byte literals (efu/vmm3a/readout.h): fibre, FEN,
// length 20, TimeHigh, TimeLow, BC, OTADC, GEO, TDC, VMM, channel. The packet's pulse is
// 0x65000000 s + 0x1000 ticks, the previous pulse 0x64FFFFFF s + 0x05000000 ticks.
using Block = std::array<std::uint8_t, 20>;
// fibre 3, FEN 4, 0x65000000 s + 0x1100 ticks, ADC 300 (0x012C), VMM 7, channel 9: accepted.
constexpr Block kGood{0x03, 0x04, 0x14, 0x00, 0x00, 0x00, 0x00, 0x65, 0x00, 0x11,
                      0x00, 0x00, 0x00, 0x00, 0x2C, 0x01, 0x00, 0x00, 0x07, 0x09};

Block with(Block b, unsigned offset, std::uint8_t value) {
  b[offset] = value;
  return b;
}

class Vmm3aReadoutParser : public ::testing::Test {
 protected:
  std::vector<std::pair<std::uint32_t, Hit>> parse(const std::vector<Block>& blocks) {
    std::vector<std::uint8_t> bytes;
    for (const Block& b : blocks) bytes.insert(bytes.end(), b.begin(), b.end());
    ess::PacketHeader header{};
    header.pulse_time_ns = ess::to_ns(0x65000000U, 0x1000U);
    header.prev_pulse_time_ns = ess::to_ns(0x64FFFFFFU, 0x05000000U);
    std::vector<std::pair<std::uint32_t, Hit>> out;
    parser.parse(bytes.data(), static_cast<std::uint32_t>(bytes.size()), header,
                 [&](std::uint32_t unit, const Hit& h) { out.emplace_back(unit, h); });
    return out;
  }
  std::uint64_t errors(const char* name) const {
    return counters.value(std::string("readouts.errors.") + name);
  }

  TestMap map;
  HybridCalibration calibration;  // not enabled: ADC and time as read
  CounterRegistry counters;
  ReadoutParser<TestMap> parser{counters, map, calibration, ReadoutSettings{100'000'000}};
};

TEST_F(Vmm3aReadoutParser, AcceptsALiteralReadout) {
  const auto hits = parse({kGood});
  ASSERT_EQ(hits.size(), 1U);
  EXPECT_EQ(hits[0].first, 5U);
  EXPECT_EQ(hits[0].second.coordinate, 109U);
  EXPECT_EQ(hits[0].second.adc, 300U);
  EXPECT_EQ(hits[0].second.plane, 1U);
  EXPECT_EQ(hits[0].second.time_ns, ess::to_ns(0x65000000U, 0x1100U));
  EXPECT_EQ(hits[0].second.pulse_ns, ess::to_ns(0x65000000U, 0x1000U));
  EXPECT_EQ(counters.value("readouts.accepted"), 1U);
}

TEST_F(Vmm3aReadoutParser, CountsEachRejectionOnceAndKeepsTheRest) {
  const std::vector<Block> blocks{
      with(kGood, 0, 0x05),                   // fibre 5: ring 2
      with(kGood, 1, 0x03),                   // FEN 3
      with(kGood, 18, 0x08),                  // VMM 8: hybrid 4
      with(kGood, 19, 0x20),                  // channel 32
      with(with(kGood, 8, 0x00), 11, 0x06),   // TimeLow 0x06001100 > 88052499
      with(kGood, 14, 0x27),                  // ADC 0x0127 = 295: accepted
      with(with(kGood, 14, 0x27), 15, 0x00),  // ADC 39 < 40
      with(with(kGood, 9, 0x00), 7, 0x64),    // 0x64000000 s: before both pulses
      with(with(kGood, 7, 0x66), 9, 0x11),    // 0x66000000 s: TOF 1 s > 0.1 s
      kGood};
  const auto hits = parse(blocks);
  EXPECT_EQ(errors("fiber"), 1U);
  EXPECT_EQ(errors("fen"), 1U);
  EXPECT_EQ(errors("vmm"), 1U);
  EXPECT_EQ(errors("channel"), 1U);
  EXPECT_EQ(errors("time_fraction"), 1U);
  EXPECT_EQ(errors("adc_below_threshold"), 1U);
  EXPECT_EQ(errors("tof_negative"), 1U);
  EXPECT_EQ(errors("tof_too_large"), 1U);
  EXPECT_EQ(counters.value("readouts.accepted"), 2U);  // the ADC-295 one and the last
  EXPECT_EQ(hits.size(), 2U);
}

TEST_F(Vmm3aReadoutParser, ABadLengthIsTheWalkersAndTheNextBlockIsRead) {
  const auto hits = parse({with(kGood, 2, 0x13), kGood});
  EXPECT_EQ(errors("length"), 1U);
  EXPECT_EQ(hits.size(), 1U);
}

// --- hit sorter -----------------------------------------------------------------------------

std::vector<Hit> hits_at(const std::vector<std::uint64_t>& times) {
  std::vector<Hit> h;
  for (std::size_t i = 0; i < times.size(); ++i) {
    h.push_back(Hit{times[i], 0, static_cast<std::uint16_t>(i), 0, 0});
  }
  return h;
}

// The sorter's result is sorted by time and holds exactly the input's hits (each hit is told
// apart by its coordinate, its index in the input); with `stable`, hits of equal time are in
// their input order.
void expect_sorted_permutation(std::vector<Hit> in, bool stable) {
  HitSorter sorter(static_cast<std::uint32_t>(std::max<std::size_t>(in.size(), 1)));
  std::vector<Hit> out = in;
  sorter.sort(out.data(), static_cast<std::uint32_t>(out.size()));
  ASSERT_EQ(out.size(), in.size());
  for (std::size_t i = 1; i < out.size(); ++i) {
    ASSERT_LE(out[i - 1].time_ns, out[i].time_ns);
    if (stable && out[i - 1].time_ns == out[i].time_ns) {
      ASSERT_LT(out[i - 1].coordinate, out[i].coordinate) << "equal times out of arrival order";
    }
  }
  std::vector<std::uint16_t> seen;
  for (const Hit& h : out) {
    ASSERT_EQ(h.time_ns, in[h.coordinate].time_ns);
    seen.push_back(h.coordinate);
  }
  std::sort(seen.begin(), seen.end());
  for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], i);
}

TEST(Vmm3aHitSorter, EveryMethodSortsEveryShape) {
  std::mt19937_64 rng(7);
  // Sizes on both sides of each method's limit: insertion, ranking (<= 32 hits less than 2^27 ns
  // apart, <= 64 less than 2^26), radix (> 64, or further apart), std::sort (2^32 ns apart or
  // more).
  for (std::uint32_t n : {0U, 1U, 2U, 5U, 8U, 9U, 16U, 31U, 32U, 33U, 63U, 64U, 65U, 200U, 4000U}) {
    const std::uint64_t ranked_span = n <= 32 ? 1ULL << 27 : 1ULL << 26;
    for (int shape = 0; shape < 8; ++shape) {
      std::vector<std::uint64_t> t(n);
      for (std::uint32_t i = 0; i < n; ++i) {
        switch (shape) {
          case 0:
            t[i] = 1'000'000 + i;
            break;  // in order
          case 1:
            t[i] = 1'000'000 + i - (i % 8 == 7 ? 3 : 0);
            break;  // a few descents
          case 2:
            t[i] = 1'000'000 + rng() % 100'000;
            break;  // shuffled, 32-bit range
          case 3:
            t[i] = 1'000'000 + rng() % 7;
            break;  // shuffled, many ties
          case 4:
            t[i] = rng() % (1ULL << 40);
            break;  // beyond 2^32 apart
          case 6:
            // Shuffled, the earliest and latest one less than the widest span ranked apart.
            t[i] = 1'000'000 + (i == 0 ? 0 : i == 1 ? ranked_span - 1 : rng() % ranked_span);
            break;
          case 7:
            // Shuffled with ties, just too far apart to be ranked: sorted by radix however few.
            t[i] = 1'000'000 + (i == 0 ? ranked_span : rng() % 5);
            break;
          default:
            // Shuffled, up to 2^32 − 1 apart: relative times of 2^31 and more, which a signed
            // 32-bit key would have put first.
            t[i] = 1'000'000 + (i == 0 ? 0xFFFF'FFFFULL : rng() % 0x1'0000'0000ULL);
            break;
        }
      }
      SCOPED_TRACE(testing::Message() << "n " << n << " shape " << shape);
      expect_sorted_permutation(hits_at(t), shape != 4);
    }
  }
}

// Random runs with ties, as the time grouping merges them: a long held run, then a packet's
// sorted hits, mostly later than all held and a few late ones. The merge must equal a stable
// sort of the two runs one after the other.
TEST(Vmm3aHitSorter, MergeIsAStableSortOfBothRuns) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 300; ++round) {
    const auto held = static_cast<std::uint32_t>(rng() % 40);
    const auto packet = static_cast<std::uint32_t>(rng() % 20);
    std::vector<std::uint64_t> first(held), second(packet);
    for (auto& t : first) t = 1000 + rng() % 50;
    for (auto& t : second) t = rng() % 4 == 0 ? 1000 + rng() % 50 : 1040 + rng() % 30;
    std::sort(first.begin(), first.end());
    std::sort(second.begin(), second.end());
    std::vector<std::uint64_t> all = first;
    all.insert(all.end(), second.begin(), second.end());
    std::vector<Hit> h = hits_at(all);  // coordinate = place before the merge
    std::vector<Hit> want = h;
    std::stable_sort(want.begin(), want.end(),
                     [](const Hit& x, const Hit& y) { return x.time_ns < y.time_ns; });
    HitSorter sorter(64);
    sorter.merge(h.data(), held, held + packet);
    SCOPED_TRACE(testing::Message()
                 << "round " << round << " held " << held << " packet " << packet);
    for (std::size_t i = 0; i < h.size(); ++i) {
      ASSERT_EQ(h[i].time_ns, want[i].time_ns) << "at " << i;
      ASSERT_EQ(h[i].coordinate, want[i].coordinate) << "at " << i;
    }
  }
}

TEST(Vmm3aHitSorter, MergesTwoSortedRuns) {
  std::vector<Hit> h = hits_at({10, 20, 30, 40, 15, 25, 45});
  HitSorter sorter(16);
  sorter.merge(h.data(), 4, 7);
  std::vector<std::uint64_t> times;
  for (const Hit& x : h) times.push_back(x.time_ns);
  EXPECT_EQ(times, (std::vector<std::uint64_t>{10, 15, 20, 25, 30, 40, 45}));
}

// --- time groups ----------------------------------------------------------------------------

struct Recorder {
  void group(std::uint32_t unit, Hit* hits, std::uint32_t count) noexcept {
    std::vector<std::uint64_t> t;
    for (std::uint32_t i = 0; i < count; ++i) t.push_back(hits[i].time_ns);
    groups.emplace_back(unit, t);
  }
  std::vector<std::pair<std::uint32_t, std::vector<std::uint64_t>>> groups;
};

Hit at(std::uint64_t t) { return Hit{t, 0, 0, 0, 0}; }

TEST(Vmm3aTimeGroups, GroupsByGapWhateverTheOrderInsideThePacket) {
  for (bool reversed : {false, true}) {
    CounterRegistry counters;
    Recorder r;
    TimeGroups<Recorder> g(counters, 2, TimeGroupSettings{100, 1000, 64}, r);
    std::vector<std::uint64_t> times{1000, 1050, 1150, 1300, 1390, 5000};
    if (reversed) std::reverse(times.begin(), times.end());
    g.begin_packet(0);
    for (std::uint64_t t : times) g.add(1, at(t));
    g.end_packet();
    // The horizon is 5000 - 1000 = 4000: the two groups before it close, 5000 stays pending.
    ASSERT_EQ(r.groups.size(), 2U);
    EXPECT_EQ(r.groups[0].second, (std::vector<std::uint64_t>{1000, 1050, 1150}));
    EXPECT_EQ(r.groups[1].second, (std::vector<std::uint64_t>{1300, 1390}));
    EXPECT_EQ(r.groups[1].first, 1U);
    EXPECT_TRUE(g.pending(1));
    g.close_all();
    ASSERT_EQ(r.groups.size(), 3U);
    EXPECT_EQ(r.groups[2].second, (std::vector<std::uint64_t>{5000}));
    EXPECT_FALSE(g.pending(1));
  }
}

TEST(Vmm3aTimeGroups, HitsWithinTheWindowJoinAcrossPacketsAndLaterOnesAreCounted) {
  CounterRegistry counters;
  Recorder r;
  TimeGroups<Recorder> g(counters, 1, TimeGroupSettings{100, 1000, 64}, r);
  g.begin_packet(0);
  g.add(0, at(10'000));
  g.add(0, at(10'500));
  g.end_packet();
  g.begin_packet(0);
  g.add(0, at(10'050));  // 450 ns behind the latest: inside the window, joins 10'000
  g.add(0, at(8'000));   // 2500 ns behind: late, counted, still used
  g.end_packet();
  EXPECT_EQ(counters.value("hits.late"), 1U);
  g.close_all();
  ASSERT_EQ(r.groups.size(), 3U);
  EXPECT_EQ(r.groups[0].second, (std::vector<std::uint64_t>{8'000}));
  EXPECT_EQ(r.groups[1].second, (std::vector<std::uint64_t>{10'000, 10'050}));
  EXPECT_EQ(r.groups[2].second, (std::vector<std::uint64_t>{10'500}));
}

TEST(Vmm3aTimeGroups, EachQueueHasItsOwnHorizon) {
  CounterRegistry counters;
  Recorder r;
  TimeGroups<Recorder> g(counters, 2, TimeGroupSettings{100, 1000, 64}, r);
  g.begin_packet(1);
  g.add(1, at(500));
  g.end_packet();
  g.begin_packet(0);
  g.add(0, at(1'000'000));  // queue 0 runs far ahead: unit 1 (queue 1) must stay open
  g.end_packet();
  EXPECT_TRUE(g.pending(1));
  EXPECT_TRUE(r.groups.empty());
  EXPECT_EQ(counters.value("hits.late"), 0U);
}

TEST(Vmm3aTimeGroups, AFullBufferClosesWhatItHoldsAndCountsIt) {
  CounterRegistry counters;
  Recorder r;
  TimeGroups<Recorder> g(counters, 1, TimeGroupSettings{100, 1'000'000, 64}, r);
  g.begin_packet(0);
  for (std::uint64_t i = 0; i < 65; ++i) g.add(0, at(1000 + i * 10));  // one chained group
  g.end_packet();
  EXPECT_EQ(counters.value("hits.reorder_buffer_full"), 64U);
  g.close_all();
  ASSERT_EQ(r.groups.size(), 2U);  // split at the 64th hit, nothing lost
  EXPECT_EQ(r.groups[0].second.size() + r.groups[1].second.size(), 65U);
}

// The time grouping's rule written out plainly (time_groups.h's header comment), to hold the
// real one to: each unit's pending hits in one vector, sorted when groups are taken; after each
// packet, every unit of the packet's queue hands over its groups in time order while a group's
// latest hit + gap is before the horizon (the queue's latest hit − the window); a unit whose
// pending hits fill the buffer hands them all over, counted, before it takes the next hit.
struct PlainGroups {
  TimeGroupSettings settings;
  Recorder& out;
  std::vector<std::vector<std::uint64_t>> pending;
  std::vector<std::uint8_t> queue_of;
  std::uint64_t latest[12] = {};
  std::uint64_t packet_latest = 0;
  std::uint8_t queue = 0;
  std::uint64_t late = 0, full = 0;
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};

  PlainGroups(std::uint32_t units, const TimeGroupSettings& s, Recorder& r)
      : settings(s), out(r), pending(units), queue_of(units, 0) {}
  void begin_packet(std::uint8_t q) { queue = q; }
  void add(std::uint32_t unit, std::uint64_t t) {
    if (t + settings.reorder_window_ns < latest[queue]) ++late;
    packet_latest = std::max(packet_latest, t);
    if (pending[unit].size() == settings.buffer_hits) {
      full += pending[unit].size();
      close(unit, kNever);
    }
    pending[unit].push_back(t);
    queue_of[unit] = queue;
  }
  void end_packet() {
    latest[queue] = std::max(latest[queue], packet_latest);
    packet_latest = 0;
    const std::uint64_t horizon =
        latest[queue] > settings.reorder_window_ns ? latest[queue] - settings.reorder_window_ns : 0;
    for (std::uint32_t u = 0; u < pending.size(); ++u) {
      if (queue_of[u] == queue) close(u, horizon);
    }
  }
  void close(std::uint32_t unit, std::uint64_t horizon) {
    std::vector<std::uint64_t>& p = pending[unit];
    std::sort(p.begin(), p.end());
    std::size_t begin = 0;
    while (begin != p.size()) {
      std::size_t end = begin + 1;
      while (end != p.size() && p[end] <= p[end - 1] + settings.max_time_gap_ns) ++end;
      if (horizon != kNever && p[end - 1] + settings.max_time_gap_ns >= horizon) break;
      out.groups.emplace_back(unit, std::vector<std::uint64_t>(p.begin() + begin, p.begin() + end));
      begin = end;
    }
    p.erase(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(begin));
  }
};

// Random streams against the plain rule: four units on two queues, packets of up to 40 hits
// whose times run forward with jitter, a fifth of them held back by up to 3 windows (some
// within the window, some late), bursts that fill a 64-hit buffer, and ties. The same groups
// in the same order, the same late and buffer-full counts.
TEST(Vmm3aTimeGroups, EqualThePlainRuleOnRandomStreams) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    const TimeGroupSettings settings{100, 1000, 64};
    CounterRegistry counters;
    Recorder got, want;
    TimeGroups<Recorder> g(counters, 4, settings, got);
    PlainGroups plain(4, settings, want);
    std::uint64_t now[2] = {100'000, 100'000};
    for (int packet = 0; packet < 400; ++packet) {
      const auto q = static_cast<std::uint8_t>(rng() % 2);
      g.begin_packet(q);
      plain.begin_packet(q);
      const std::uint64_t hits = rng() % 10 == 0 ? 60 + rng() % 20 : rng() % 40;
      for (std::uint64_t i = 0; i < hits; ++i) {
        const auto unit = static_cast<std::uint32_t>(q + 2 * (rng() % 2));
        now[q] += rng() % 60;
        std::uint64_t t = now[q] - rng() % 50;
        if (rng() % 5 == 0) t -= rng() % 3000;  // held back: within the window or late
        if (rng() % 8 == 0) t = now[q];         // ties
        g.add(unit, at(t));
        plain.add(unit, t);
      }
      g.end_packet();
      plain.end_packet();
      ASSERT_EQ(got.groups, want.groups) << "seed " << seed << ", packet " << packet;
    }
    g.close_all();
    for (std::uint32_t u = 0; u < 4; ++u) plain.close(u, PlainGroups::kNever);
    ASSERT_EQ(got.groups, want.groups) << "seed " << seed;
    EXPECT_EQ(counters.value("hits.late"), plain.late);
    EXPECT_EQ(counters.value("hits.reorder_buffer_full"), plain.full);
    EXPECT_GT(plain.late, 0U);
    EXPECT_GT(plain.full, 0U);
  }
}

// --- clusters and matching ------------------------------------------------------------------

Hit hit(std::uint16_t coordinate, std::uint16_t adc, std::uint64_t t, std::uint8_t plane = 0) {
  return Hit{t, 100, coordinate, adc, plane};
}

TEST(Vmm3aClusters, CutsAPlaneByTheCoordinateGap) {
  std::vector<Hit> h{hit(7, 10, 1000), hit(3, 20, 1010), hit(4, 30, 990), hit(10, 40, 1020)};
  std::vector<Cluster> c(h.size());
  // max_gap 1: 3,4 together; 7 is two channels (5, 6) beyond 4, so alone; 10 likewise.
  ASSERT_EQ(build_clusters(h.data(), 4, 1, c.data()), 3U);
  EXPECT_EQ(c[0].min_coordinate, 3U);
  EXPECT_EQ(c[0].max_coordinate, 4U);
  EXPECT_EQ(c[0].hits, 2U);
  EXPECT_EQ(c[0].time_start, 990U);
  EXPECT_EQ(c[0].time_end, 1010U);
  EXPECT_EQ(c[0].adc_sum, 50U);
  EXPECT_EQ(c[0].max_adc_coordinate, 4U);
  EXPECT_EQ(c[1].first, 2U);
  // max_gap 2: 3,4,7 together (5 and 6 missing), 10 joins 7 (8, 9 missing).
  ASSERT_EQ(build_clusters(h.data(), 4, 2, c.data()), 1U);
  EXPECT_EQ(c[0].span(), 8U);
  EXPECT_EQ(c[0].missing(), 4);
}

TEST(Vmm3aClusters, CentreOfMassRoundsHalfUp) {
  // (2 * (10*2 + 10*3) + 20) / (2 * 20) = 120 / 40 = 3 (2.5 rounds up)
  std::vector<Hit> h{hit(2, 10, 0), hit(3, 10, 0)};
  Cluster c[2];
  build_clusters(h.data(), 2, 0, c);
  EXPECT_EQ(center_of_mass(c[0]), 3U);
  // 2.25: (2 * (30*2 + 10*3) + 40) / 80 = 220 / 80 = 2
  h = {hit(2, 30, 0), hit(3, 10, 0)};
  build_clusters(h.data(), 2, 0, c);
  EXPECT_EQ(center_of_mass(c[0]), 2U);
  // All ADCs 0: the lowest coordinate.
  h = {hit(9, 0, 0), hit(8, 0, 0)};
  build_clusters(h.data(), 2, 0, c);
  EXPECT_EQ(center_of_mass(c[0]), 8U);
}

TEST(Vmm3aClusters, SplitsAGroupByPlane) {
  const std::vector<Hit> h{hit(1, 1, 0, 0), hit(2, 1, 0, 1), hit(3, 1, 0, 1)};
  Hit p0[3], p1[3];
  const PlaneCounts n = split_planes(h.data(), 3, p0, p1);
  EXPECT_EQ(n.n[0], 1U);
  EXPECT_EQ(n.n[1], 2U);
  EXPECT_EQ(p1[1].coordinate, 3U);
}

TEST(Vmm3aClusters, MatchesTheNearestInTimeAndReportsTheRest) {
  auto cluster_at = [](std::uint64_t t) {
    Cluster c{};
    c.time_start = t;
    return c;
  };
  const Cluster a[3] = {cluster_at(1000), cluster_at(2000), cluster_at(9000)};
  Cluster b[3] = {cluster_at(1900), cluster_at(1100), cluster_at(5000)};
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs;
  std::vector<std::pair<unsigned, std::uint64_t>> alone;
  match_nearest(
      a, 3, b, 3, 500,
      [&](const Cluster& x, const Cluster& y) { pairs.emplace_back(x.time_start, y.time_start); },
      [&](unsigned plane, const Cluster& c) { alone.emplace_back(plane, c.time_start); });
  EXPECT_EQ(pairs,
            (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{1000, 1100}, {2000, 1900}}));
  EXPECT_EQ(alone, (std::vector<std::pair<unsigned, std::uint64_t>>{{0, 9000}, {1, 5000}}));
}

// --- the data path ---------------------------------------------------------------------------

// An ESS v1 header (docs/architecture.md §5.1), type 0x44, queue 0, the pulse and previous pulse
// of the readout parser's tests, total length 32 + 20 * blocks.
std::vector<std::uint8_t> packet_of(const std::vector<Block>& blocks, std::uint8_t sequence) {
  const auto length = static_cast<std::uint8_t>(32 + 20 * blocks.size());
  std::vector<std::uint8_t> p{0x00, 0x01, 'E',      'S',  'S',  0x44, length, 0x00,
                              0x00, 0x00, 0x00,     0x00, 0x00, 0x65, 0x00,   0x10,
                              0x00, 0x00, 0xFF,     0xFF, 0xFF, 0x64, 0x00,   0x00,
                              0x00, 0x05, sequence, 0x00, 0x00, 0x00, 0x00,   0x00};
  for (const Block& b : blocks) p.insert(p.end(), b.begin(), b.end());
  return p;
}

struct RecordingGroups : TimeGroups<Recorder> {
  RecordingGroups(CounterRegistry& c, Recorder& r)
      : TimeGroups<Recorder>(c, 6, TimeGroupSettings{100, 1000, 64}, r) {}
};

TEST(Vmm3aDataPath, HeaderReadoutsGroupsAndTheWallClockTimeout) {
  CounterRegistry counters;
  Recorder recorder;
  RecordingGroups groups(counters, recorder);
  TestMap map;
  HybridCalibration calibration;
  DataPath<TestMap, RecordingGroups> path(counters, ess::HeaderSettings{0x44, 0}, map, calibration,
                                          ReadoutSettings{100'000'000}, groups, 1000);
  const auto good = packet_of({kGood, with(kGood, 1, 0x03)}, 0);  // the second: FEN 3
  std::vector<std::uint8_t> wrong_type = packet_of({kGood}, 1);
  wrong_type[5] = 0x48;
  const PacketView views[] = {{good.data(), static_cast<std::uint32_t>(good.size())},
                              {wrong_type.data(), static_cast<std::uint32_t>(wrong_type.size())}};
  path.process(PacketBatch(views, 2));
  EXPECT_EQ(counters.value("readouts.accepted"), 1U);
  EXPECT_EQ(counters.value("readouts.errors.fen"), 1U);
  EXPECT_EQ(counters.value("parser.essheader.errors.type"), 1U);
  EXPECT_TRUE(groups.pending(5));  // one hit: its group waits for the window
  path.tick(10'000);               // unit 5 had hits since the last tick: stays open
  path.tick(10'999);
  EXPECT_TRUE(groups.pending(5));
  path.tick(11'000);  // 1000 ns of wall time without hits
  EXPECT_FALSE(groups.pending(5));
  ASSERT_EQ(recorder.groups.size(), 1U);
  EXPECT_EQ(recorder.groups[0].first, 5U);
}

}  // namespace
}  // namespace efu::vmm3a
