// The parts every ESS detector generator shares (common/include/efu/gen/): --fault-kinds parsing,
// header faults, the shared options, the pulse loop and data/fault sending of EssStream, the
// summary and ground-truth files, and the readout reordering (--shuffle, --delay-fraction).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include "config_error_of.h"
#include "efu/errors.h"
#include "efu/ess/ess_time.h"
#include "efu/ess/packet_assembler.h"
#include "efu/gen/ess_stream.h"
#include "efu/gen/faults.h"
#include "efu/gen/generator_options.h"
#include "efu/gen/random.h"
#include "efu/gen/result_files.h"
#include "udp_receiver.h"

namespace efu::gen {
namespace {

using test::config_error_of;

constexpr Fault kAll[] = {Fault::kCookie, Fault::kTruncated, Fault::kVersion, Fault::kType,
                          Fault::kCorrupt};
constexpr Fault kNoType[] = {Fault::kCookie, Fault::kTruncated, Fault::kVersion, Fault::kCorrupt};

// An ESS V1 header (docs/architecture.md §5.1) and one 4-byte block: 36 bytes, type 0x34, queue 2,
// pulse 100 s + 7 ticks, previous pulse 99 s + 5 ticks, sequence 9.
const std::vector<std::uint8_t> kPacket = {
    0x00, 0x01, 'E',  'S',  'S',  0x34, 0x24, 0x00,  // padding, version, cookie, type, length 36
    0x02, 0x00,                                      // output queue, time source
    0x64, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00,  // pulse high, low
    0x63, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00,  // previous pulse high, low
    0x09, 0x00, 0x00, 0x00, 0x00, 0x00,              // sequence, padding (V1)
    0xA1, 0xA2, 0xA3, 0xA4};                         // a block

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string temp_path(const char* name) {
  return ::testing::TempDir() + "/generator_parts_" + name;
}

TEST(FaultKinds, ParsesTheAcceptedNamesKeepingRepeatsAndOrder) {
  EXPECT_EQ(parse_fault_kinds("cookie,type,cookie,corrupt", kAll, 0.5),
            (std::vector<Fault>{Fault::kCookie, Fault::kType, Fault::kCookie, Fault::kCorrupt}));
  EXPECT_EQ(parse_fault_kinds("truncated,version", kNoType, 0.5),
            (std::vector<Fault>{Fault::kTruncated, Fault::kVersion}));
  EXPECT_EQ(fault_list(kAll), "cookie,truncated,version,type,corrupt");
  EXPECT_EQ(fault_list(kNoType), "cookie,truncated,version,corrupt");
}

TEST(FaultKinds, ANameTheGeneratorDoesNotMakeIsAOneLineError) {
  EXPECT_EQ(config_error_of([] { parse_fault_kinds("cookie,type", kNoType, 0.1); }),
            "--fault-kinds: 'type' is not valid; expected cookie, truncated, version or corrupt");
  EXPECT_EQ(config_error_of([] { parse_fault_kinds("bogus", kAll, 0); }),
            "--fault-kinds: 'bogus' is not valid; expected cookie, truncated, version, type or "
            "corrupt");
  EXPECT_EQ(config_error_of([] { parse_fault_kinds(",cookie", kAll, 0.1); }),
            "--fault-kinds: '' is not valid; expected cookie, truncated, version, type or corrupt");
}

TEST(FaultKinds, AnEmptyListIsAnErrorOnlyWhenFaultsAreAskedFor) {
  EXPECT_TRUE(parse_fault_kinds("", kAll, 0).empty());
  EXPECT_EQ(config_error_of([] { parse_fault_kinds("", kAll, 0.1); }),
            "--fault-kinds: empty; expected at least one kind when --fault-fraction > 0");
}

TEST(FaultInjector, WithoutAFractionItNeverDrawsNorConsumesRandomness) {
  FaultInjector faults({Fault::kCookie}, 0, 0);
  Random rng(5), same(5);
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(faults.draw(rng).has_value());
  EXPECT_EQ(rng.below(1'000'000'000), same.below(1'000'000'000));
}

TEST(FaultInjector, AtFractionOneEveryPacketGetsAKindFromTheList) {
  FaultInjector faults({Fault::kVersion, Fault::kType}, 1, 0);
  Random rng(1);
  int version = 0, type = 0;
  for (int i = 0; i < 200; ++i) {
    const auto kind = faults.draw(rng);
    ASSERT_TRUE(kind.has_value());
    ASSERT_TRUE(*kind == Fault::kVersion || *kind == Fault::kType);
    (*kind == Fault::kVersion ? version : type) += 1;
  }
  EXPECT_GT(version, 0);
  EXPECT_GT(type, 0);
  EXPECT_TRUE(faults.counts().empty());  // drawing is not sending: nothing counted yet
}

TEST(FaultInjector, HeaderFaultsDamageOneKnownByteOfACopy) {
  FaultInjector faults({}, 0, 0x48);
  Random rng(3);
  const std::vector<std::uint8_t> good = kPacket;
  struct Case {
    Fault kind;
    std::size_t offset;
    std::uint8_t value;
  };
  for (const Case c :
       {Case{Fault::kCookie, 3, 'X'}, Case{Fault::kVersion, 1, 5}, Case{Fault::kType, 5, 0x48}}) {
    const auto junk = faults.damage(c.kind, good, rng);
    std::vector<std::uint8_t> expected = kPacket;
    expected[c.offset] = c.value;
    EXPECT_EQ(std::vector<std::uint8_t>(junk.begin(), junk.end()), expected) << fault_name(c.kind);
  }
  EXPECT_EQ(good, kPacket);  // the good packet is untouched
  EXPECT_EQ(faults.counts(),
            (std::map<std::string, std::uint64_t>{{"cookie", 1}, {"type", 1}, {"version", 1}}));
}

TEST(FaultInjector, ATruncatedPacketIsAShorterPrefix) {
  FaultInjector faults({}, 0, 0);
  Random rng(11);
  for (int i = 0; i < 50; ++i) {
    const auto junk = faults.damage(Fault::kTruncated, kPacket, rng);
    ASSERT_GE(junk.size(), 1U);
    ASSERT_LT(junk.size(), kPacket.size());
    EXPECT_TRUE(std::equal(junk.begin(), junk.end(), kPacket.begin()));
  }
  EXPECT_EQ(faults.counts().at("truncated"), 50U);
}

TEST(FaultInjector, EmptyAndOversizeAreTheHostsToReject) {
  FaultInjector faults({}, 0, 0);
  Random rng(5);
  EXPECT_TRUE(faults.damage(Fault::kEmpty, kPacket, rng).empty());
  const auto big = faults.damage(Fault::kOversize, kPacket, rng);
  ASSERT_EQ(big.size(), 65507U);  // 65535 less the IPv4 (20) and UDP (8) headers
  EXPECT_TRUE(std::equal(kPacket.begin(), kPacket.end(), big.begin()));
  EXPECT_EQ(faults.counts(), (std::map<std::string, std::uint64_t>{{"empty", 1}, {"oversize", 1}}));
  EXPECT_EQ(parse_fault_kinds("empty,oversize", std::vector<Fault>{Fault::kEmpty, Fault::kOversize}, 1),
            (std::vector<Fault>{Fault::kEmpty, Fault::kOversize}));
  EXPECT_TRUE(names_oversize("cookie,oversize"));
  EXPECT_FALSE(names_oversize("cookie,empty"));
}

TEST(GeneratorOptions, RegistersTheSharedOptionsWithTheirDefaults) {
  GeneratorOptions o;
  CLI::App app;
  add_destination_options(app, o);
  add_pulse_options(app, o, 56);
  add_stream_options(app, o, "queues", "truth", kNoType);
  EXPECT_EQ(o.fault_kinds, "cookie,truncated,version,corrupt");
  EXPECT_EQ(app.get_option("--fault-kinds")->get_description(),
            "Comma list: cookie,truncated,version,corrupt");
  EXPECT_FALSE(o.gso);
  EXPECT_NO_THROW(app.parse("--host ::1 --port 9100 --pulses 7", false));
  EXPECT_EQ(o.host, "::1");
  EXPECT_EQ(o.port, 9100);
  EXPECT_EQ(o.pulses, 7U);
  EXPECT_EQ(o.size, 8972U);
  EXPECT_EQ(o.neutrons_per_pulse, 1000U);
  EXPECT_THROW(app.parse("--size 40", false), CLI::ValidationError);

  GeneratorOptions g;
  CLI::App with_gso;
  add_pulse_options(with_gso, g, 52);
  with_gso.parse("--size 52 --gso", false);
  EXPECT_TRUE(g.gso);
  EXPECT_EQ(g.size, 52U);
  EXPECT_TRUE(sender_settings(g, "efu-x").gso);
  EXPECT_EQ(sender_settings(g, "efu-x").max_size, 52U);
}

TEST(GeneratorOptions, BatchGoesToTheSenderFromOneToTheSendmmsgLimit) {
  GeneratorOptions o;
  CLI::App app;
  add_pulse_options(app, o, 52);
  EXPECT_EQ(o.batch, 64U);
  EXPECT_EQ(sender_settings(o, "efu-x").batch, 64U);
  app.parse("--batch 1", false);
  EXPECT_EQ(sender_settings(o, "efu-x").batch, 1U);
  EXPECT_THROW(app.parse("--batch 0", false), CLI::ValidationError);
  EXPECT_THROW(app.parse("--batch 1025", false), CLI::ValidationError);
}

TEST(GeneratorOptions, ARunNeedsALimitAndAtMostOneNoiseHitPerNeutron) {
  GeneratorOptions o;
  EXPECT_EQ(config_error_of([&] { check_options(o); }),
            "--pulses/--count/--duration: none given; expected at least one limit");
  o.duration_s = 0.5;
  EXPECT_EQ(config_error_of([&] { check_options(o); }), "");
  o.neutrons_per_pulse = 3;
  o.noise_per_pulse = 4;
  EXPECT_EQ(config_error_of([&] { check_options(o); }),
            "--noise-per-pulse: '4' is more than --neutrons-per-pulse; expected at most one per "
            "neutron");
  o.rate_pps = 10;
  o.rate_gbps = 2;
  EXPECT_EQ(rate_of(o).pps, 10);
  EXPECT_EQ(rate_of(o).gbps, 0);  // --rate-pps wins
}

TEST(RunMain, ExitCodesAreTwoForConfigErrorsAndOneForOthers) {
  EXPECT_EQ(run_main("efu-x", [] {}), 0);
  EXPECT_EQ(run_main("efu-x", [] { throw ConfigError("--x: bad"); }), kExitConfigError);
  EXPECT_EQ(run_main("efu-x", [] { throw std::runtime_error("send failed"); }), 1);
}

TEST(SummaryJson, OneObjectOnOneLineInTheOrderAdded) {
  const std::string path = temp_path("summary.json");
  SummaryJson()
      .text("instrument", "loki")
      .number("packets", 12)
      .flag("exact_truth", false)
      .counts("faults", {{"version", 2}, {"cookie", 1}})
      .counts("none", {})
      .write(path);
  EXPECT_EQ(read_file(path),
            "{\"instrument\": \"loki\", \"packets\": 12, \"exact_truth\": false, \"faults\": "
            "{\"cookie\": 1, \"version\": 2}, \"none\": {}}\n");
  std::remove(path.c_str());
  SummaryJson().number("packets", 1).write("");  // no --summary: nothing written, no error
}

TEST(GroundTruth, OpensWithItsHeaderLineOrFailsInOneLine) {
  const std::string path = temp_path("truth.txt");
  {
    std::ofstream truth = open_ground_truth(path, "# pulse_time_ns tof_ns pixel");
    truth << "1 2 3\n";
  }
  EXPECT_EQ(read_file(path), "# pulse_time_ns tof_ns pixel\n1 2 3\n");
  std::remove(path.c_str());
  EXPECT_FALSE(open_ground_truth("", "# x").is_open());
  EXPECT_EQ(config_error_of([] { open_ground_truth("/nonexistent-dir/truth", "# x"); }),
            "--ground-truth: '/nonexistent-dir/truth' cannot be written");
}

using Receiver = test::UdpReceiver;

/// One pulse to `port` in packets of at most 100 bytes on two queues; every packet followed by a
/// fault of `fault_kinds` if given.
GeneratorOptions stream_options(int port, const char* fault_kinds = "") {
  GeneratorOptions o;
  o.port = port;
  o.size = 100;
  o.queues = 2;
  o.pulses = 1;
  o.fault_kinds = fault_kinds;
  o.fault_fraction = o.fault_kinds.empty() ? 0 : 1;
  return o;
}

std::span<const std::uint8_t> packet_with_block(EssStream& stream, unsigned queue,
                                                std::uint8_t fill) {
  std::uint8_t* block = stream.packets().append(queue, 4);
  std::fill(block, block + 4, fill);
  return stream.packets().finish(queue, ess::to_ess(2'000'000'000), ess::to_ess(1'000'000'000));
}

TEST(EssStream, AHeaderFaultFollowsItsGoodPacketAsAnExtraPacket) {
  Receiver rx;
  EssStream stream(stream_options(rx.port(), "version"), "efu-test-gen", 0x34, kAll);
  Random rng(1);
  int corrupt_calls = 0;
  stream.send_data(1, packet_with_block(stream, 1, 0xAB), 2'000'000'000, 1'000'000'000, rng,
                   [&](unsigned) { ++corrupt_calls; });
  stream.run_pulses([](std::uint64_t, std::uint64_t, std::uint64_t) {});  // flushes
  const auto good = rx.next();
  const auto bad = rx.next();
  ASSERT_EQ(good.size(), 36U);  // a V1 header and the block
  EXPECT_EQ(good[1], 1);
  EXPECT_EQ(good[5], 0x34);
  EXPECT_EQ(good[8], 1);  // output queue
  EXPECT_EQ(good[35], 0xAB);
  std::vector<std::uint8_t> expected = good;
  expected[1] = 5;
  EXPECT_EQ(bad, expected);
  EXPECT_EQ(corrupt_calls, 0);
  EXPECT_EQ(stream.sent_packets(), 2U);
  EXPECT_EQ(stream.data_packets(), 1U);
  EXPECT_EQ(stream.faults().counts(), (std::map<std::string, std::uint64_t>{{"version", 1}}));
}

TEST(EssStream, ACorruptFaultIsTheDetectorsPacketNextInTheQueuesSequence) {
  Receiver rx;
  EssStream stream(stream_options(rx.port(), "corrupt"), "efu-test-gen", 0x34, kAll);
  Random rng(1);
  stream.send_data(0, packet_with_block(stream, 0, 0x11), 2'000'000'000, 1'000'000'000, rng,
                   [&](unsigned queue) {
                     std::uint8_t* block = stream.packets().append(queue, 4);
                     std::fill(block, block + 4, 0xEE);
                     stream.faults().count("readout_broken");
                   });
  stream.run_pulses([](std::uint64_t, std::uint64_t, std::uint64_t) {});
  const auto good = rx.next();
  const auto corrupt = rx.next();
  ASSERT_EQ(good.size(), 36U);
  ASSERT_EQ(corrupt.size(), 36U);
  EXPECT_EQ(good[26], 0);  // sequence numbers of queue 0: 0, then 1
  EXPECT_EQ(corrupt[26], 1);
  EXPECT_EQ(corrupt[35], 0xEE);
  EXPECT_EQ(stream.sent_packets(), 2U);
  EXPECT_EQ(stream.data_packets(), 1U);
  EXPECT_EQ(stream.faults().counts(),
            (std::map<std::string, std::uint64_t>{{"corrupt", 1}, {"readout_broken", 1}}));
}

TEST(EssStream, PulsesSitOnEssTicksOnePeriodApartUntilThePulseLimit) {
  Receiver rx;
  GeneratorOptions o = stream_options(rx.port());
  o.pulses = 3;
  o.start_time_ns = 1'700'000'000'000'000'000;
  EssStream stream(o, "efu-test-gen", 0x34, kAll);
  std::vector<std::array<std::uint64_t, 3>> calls;
  stream.run_pulses([&](std::uint64_t pulse, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    calls.push_back({pulse, pulse_ns, prev_ns});
  });
  ASSERT_EQ(calls.size(), 3U);
  EXPECT_EQ(calls[0][2], o.start_time_ns - kPulsePeriodNs);
  for (std::uint64_t i = 0; i < calls.size(); ++i) {
    const auto [pulse, pulse_ns, prev_ns] = calls[i];
    EXPECT_EQ(pulse, i);
    const ess::EssTime t = ess::to_ess(pulse_ns);
    EXPECT_EQ(ess::to_ns(t.high, t.low), pulse_ns);  // on a tick
    const std::uint64_t nominal = o.start_time_ns + i * kPulsePeriodNs;
    EXPECT_LE(pulse_ns > nominal ? pulse_ns - nominal : nominal - pulse_ns, 6U);
    if (i > 0) {
      EXPECT_EQ(prev_ns, calls[i - 1][1]);
    }
  }
}

TEST(EssStream, ThePacketLimitEndsTheRunAtTheFirstPulseEndAfterIt) {
  Receiver rx;
  GeneratorOptions o = stream_options(rx.port());
  o.pulses = 0;
  o.count = 3;
  EssStream stream(o, "efu-test-gen", 0x34, kAll);
  Random rng(1);
  std::uint64_t pulses = 0;
  stream.run_pulses([&](std::uint64_t, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    ++pulses;
    for (unsigned q = 0; q < 2; ++q) {
      stream.send_data(q, packet_with_block(stream, q, 0x22), pulse_ns, prev_ns, rng,
                       [](unsigned) {});
    }
  });
  EXPECT_EQ(pulses, 2U);  // 2 packets after the first pulse, 4 after the second
  EXPECT_EQ(stream.sent_packets(), 4U);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(rx.next().size(), 36U) << i;
}

TEST(EssStream, ReplayResendsTheFirstPulsesDatagramsByteForByte) {
  // Two generated pulses (pulse 0: data and its version fault; pulse 1: two data packets), then
  // pulses 2..4 replay pulses 0, 1, 0. on_pulse runs for the generated pulses only.
  Receiver rx;
  GeneratorOptions o = stream_options(rx.port(), "version");
  o.fault_fraction = 0;  // faults by hand below, so that only pulse 0 has one
  o.pulses = 5;
  o.replay_pulses = 2;
  EssStream stream(o, "efu-test-gen", 0x34, kAll);
  Random rng(1);
  std::uint64_t calls = 0;
  stream.run_pulses([&](std::uint64_t pulse, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
    ++calls;
    if (pulse == 0) {
      stream.send_data(0, packet_with_block(stream, 0, 0x10), pulse_ns, prev_ns, rng,
                       [](unsigned) {});
      std::vector<std::uint8_t> fault(36, 0xFF);
      stream.send(fault);
      return;
    }
    for (unsigned q = 0; q < 2; ++q) {
      stream.send_data(q, packet_with_block(stream, q, static_cast<std::uint8_t>(0x20 + q)),
                       pulse_ns, prev_ns, rng, [](unsigned) {});
    }
  });
  EXPECT_EQ(calls, 2U);
  std::vector<std::vector<std::uint8_t>> got;
  for (int i = 0; i < 10; ++i) got.push_back(rx.next());
  // Generated: pulse 0 = got[0..1], pulse 1 = got[2..3]; replays: 0, 1, 0.
  EXPECT_EQ(got[0][35], 0x10);
  EXPECT_EQ(got[1], std::vector<std::uint8_t>(36, 0xFF));
  EXPECT_EQ(got[2][35], 0x20);
  EXPECT_EQ(got[3][35], 0x21);
  EXPECT_EQ((std::vector{got[4], got[5]}), (std::vector{got[0], got[1]}));
  EXPECT_EQ((std::vector{got[6], got[7]}), (std::vector{got[2], got[3]}));
  EXPECT_EQ((std::vector{got[8], got[9]}), (std::vector{got[0], got[1]}));
  EXPECT_EQ(stream.sent_packets(), 10U);
  EXPECT_EQ(stream.data_packets(), 7U);  // 3 generated, 4 replayed; the fault twice, not data
}

TEST(GeneratorOptions, ReplayWithGroundTruthIsRefused) {
  GeneratorOptions o;
  o.pulses = 10;
  o.replay_pulses = 2;
  EXPECT_NO_THROW(check_options(o));
  o.ground_truth = "/tmp/truth.txt";
  try {
    check_options(o);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "--replay-pulses: '2' with --ground-truth; expected one of them (a replay sends "
                 "neutrons again that the ground truth lists once)");
  }
}

TEST(EssStream, WithBatchOneEveryPacketIsASendCallOfItsOwn) {
  // As a detector's electronics send: one datagram per send call. The default batch sends the
  // same packets in one call; the receiver sees the same datagrams either way.
  for (const unsigned batch : {1U, 64U}) {
    Receiver rx;
    GeneratorOptions o = stream_options(rx.port());
    o.batch = batch;
    EssStream stream(o, "efu-test-gen", 0x34, kAll);
    Random rng(1);
    constexpr std::uint64_t kPackets = 10;
    stream.run_pulses([&](std::uint64_t, std::uint64_t pulse_ns, std::uint64_t prev_ns) {
      for (std::uint64_t i = 0; i < kPackets; ++i) {
        const unsigned q = static_cast<unsigned>(i % 2);
        stream.send_data(q, packet_with_block(stream, q, static_cast<std::uint8_t>(i)), pulse_ns,
                         prev_ns, rng, [](unsigned) {});
      }
    });
    EXPECT_EQ(stream.sent_packets(), kPackets) << batch;
    EXPECT_EQ(stream.send_calls(), batch == 1 ? kPackets : 1U) << batch;
    for (std::uint64_t i = 0; i < kPackets; ++i) {
      const auto d = rx.next();
      ASSERT_EQ(d.size(), 36U) << batch << " " << i;
      EXPECT_EQ(d[35], i) << batch;
    }
  }
}

TEST(ReorderOptions, RegistersShuffleAndDelayWithTheirDefaultsAndRange) {
  ReorderOptions o;
  CLI::App app;
  add_reorder_options(app, o);
  EXPECT_FALSE(o.shuffle);
  EXPECT_EQ(o.delay_fraction, 0);
  EXPECT_EQ(o.max_delay_ns, 200'000U);
  app.parse("--shuffle --delay-fraction 0.25 --max-delay-ns 7", false);
  EXPECT_TRUE(o.shuffle);
  EXPECT_EQ(o.delay_fraction, 0.25);
  EXPECT_EQ(o.max_delay_ns, 7U);
  EXPECT_THROW(app.parse("--delay-fraction 1.5", false), CLI::ValidationError);
}

TEST(ShuffleReadouts, PermutesTheWholeBlocksAfterTheHeaderWithNMinusOneDraws) {
  // A 3-byte header, 6 blocks of 2 bytes (block k holds k, k + 100), 1 trailing byte.
  std::vector<std::uint8_t> packet = {0xE0, 0xE1, 0xE2};
  for (std::uint8_t k = 0; k < 6; ++k) {
    packet.push_back(k);
    packet.push_back(static_cast<std::uint8_t>(k + 100));
  }
  packet.push_back(0xFF);
  Random rng(5), twin(5);
  std::vector<std::uint8_t> scratch;
  const auto out = shuffle_readouts(packet, 3, 2, rng, scratch);
  ASSERT_EQ(out.size(), packet.size());
  EXPECT_EQ(out.data(), scratch.data());
  EXPECT_TRUE(std::equal(out.begin(), out.begin() + 3, packet.begin()));
  EXPECT_EQ(out.back(), 0xFF);
  std::vector<int> seen(6, 0);
  for (std::size_t k = 0; k < 6; ++k) {
    const std::uint8_t first = out[3 + 2 * k];
    ASSERT_LT(first, 6);
    EXPECT_EQ(out[4 + 2 * k], first + 100);  // blocks move whole
    ++seen[first];
  }
  EXPECT_EQ(seen, std::vector<int>(6, 1));
  // Fisher-Yates draws below(i) for i = 6..2 and nothing else: the twin is now in step.
  for (std::uint64_t i = 6; i > 1; --i) twin.below(i);
  EXPECT_EQ(rng.below(1'000'000), twin.below(1'000'000));
}

TEST(ShuffleReadouts, APacketOfOneReadoutIsCopiedAndDrawsNothing) {
  const std::vector<std::uint8_t> packet = {1, 2, 3, 4, 5};
  Random rng(9), twin(9);
  std::vector<std::uint8_t> scratch;
  const auto out = shuffle_readouts(packet, 3, 2, rng, scratch);
  EXPECT_EQ(std::vector<std::uint8_t>(out.begin(), out.end()), packet);
  EXPECT_EQ(rng.below(1'000'000), twin.below(1'000'000));
}

TEST(FinishPacket, FinishesTheQueuesPacketAndShufflesItsReadoutsOnlyWithShuffle) {
  auto fill = [](ess::PacketAssembler& packets) {
    for (std::uint8_t k = 0; k < 8; ++k) {
      std::uint8_t* block = packets.append(1, 4);
      std::fill(block, block + 4, k);
    }
  };
  ess::PacketAssembler plain(0x34, 1, 8972, 2), shuffled(0x34, 1, 8972, 2);
  fill(plain);
  fill(shuffled);
  ReorderOptions o;
  Random rng(2), twin(2);
  std::vector<std::uint8_t> scratch;
  const auto p = finish_packet(plain, 1, 5'000'000'000, 4'000'000'000, o, 4, rng, scratch);
  const std::vector<std::uint8_t> in_order(p.begin(), p.end());
  EXPECT_TRUE(scratch.empty());  // no shuffle: the assembler's own bytes, nothing drawn
  EXPECT_EQ(rng.below(1'000'000), twin.below(1'000'000));
  const std::size_t header = ess::header_size(1);
  ASSERT_EQ(in_order.size(), header + 8 * 4);
  EXPECT_EQ(in_order[5], 0x34);  // the type byte of the header

  o.shuffle = true;
  const auto q = finish_packet(shuffled, 1, 5'000'000'000, 4'000'000'000, o, 4, rng, scratch);
  std::vector<std::uint8_t> expected_scratch;
  const auto expected = shuffle_readouts(in_order, header, 4, twin, expected_scratch);
  EXPECT_TRUE(std::equal(q.begin(), q.end(), expected.begin(), expected.end()));
  EXPECT_NE(std::vector<std::uint8_t>(q.begin(), q.end()), in_order);  // seed 2 moves blocks
}

TEST(DrawDelay, FractionZeroNeverHoldsNorDraws) {
  ReorderOptions o;
  Random rng(3), twin(3);
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(draw_delay_ns(rng, o).has_value());
  EXPECT_EQ(rng.below(1'000'000), twin.below(1'000'000));
}

TEST(DrawDelay, FractionOneHoldsEveryReadoutUpToTheMaximumDelay) {
  ReorderOptions o;
  o.delay_fraction = 1;
  o.max_delay_ns = 10;
  Random rng(4), twin(4);
  std::uint64_t longest = 0;
  for (int i = 0; i < 200; ++i) {
    const auto delay = draw_delay_ns(rng, o);
    ASSERT_TRUE(delay.has_value());
    EXPECT_LE(*delay, 10U);
    longest = std::max(longest, *delay);
    // The draws: uniform(0, 1) for the decision, then below(max + 1) for the delay.
    twin.uniform(0, 1);
    EXPECT_EQ(*delay, twin.below(11));
  }
  EXPECT_EQ(longest, 10U);  // 200 draws of 0..10 reach the maximum
}

TEST(HeldReadouts, ReleasesTheDueOnesInHoldOrderAndKeepsTheRestInOrder) {
  HeldReadouts<int> held;
  EXPECT_TRUE(held.empty());
  held.hold(0, 30, 1);
  held.hold(1, 10, 2);
  held.hold(2, 40, 3);
  held.hold(1, 20, 4);
  EXPECT_EQ(held.held(), 4U);
  std::vector<std::pair<unsigned, int>> sent;
  auto send = [&](unsigned queue, int item) { sent.emplace_back(queue, item); };
  held.release(20, send);
  EXPECT_EQ(sent, (std::vector<std::pair<unsigned, int>>{{1, 2}, {1, 4}}));
  EXPECT_FALSE(held.empty());
  sent.clear();
  held.release(std::numeric_limits<std::uint64_t>::max(), send);
  EXPECT_EQ(sent, (std::vector<std::pair<unsigned, int>>{{0, 1}, {2, 3}}));
  EXPECT_TRUE(held.empty());
  EXPECT_EQ(held.held(), 4U);  // counts every readout ever held
}

TEST(HeldReadouts, DrawAndHoldHoldsWithTheDrawnDelayInTheCallersUnit) {
  ReorderOptions o;
  HeldReadouts<int> held;
  Random rng(6), twin(6);
  EXPECT_FALSE(held.draw_and_hold(rng, o, 0, 100, 1));  // fraction 0: goes out now
  EXPECT_TRUE(held.empty());
  o.delay_fraction = 1;
  o.max_delay_ns = 1000;
  ASSERT_TRUE(held.draw_and_hold(rng, o, 2, 100, 7, [](std::uint64_t ns) { return ns / 10; }));
  const std::uint64_t delay_ns = *draw_delay_ns(twin, o);
  std::vector<int> sent;
  auto send = [&](unsigned queue, int item) {
    EXPECT_EQ(queue, 2U);
    sent.push_back(item);
  };
  if (delay_ns / 10 > 0) {
    held.release(100 + delay_ns / 10 - 1, send);  // not due yet
    EXPECT_TRUE(sent.empty());
  }
  held.release(100 + delay_ns / 10, send);
  EXPECT_EQ(sent, std::vector<int>{7});
  EXPECT_EQ(held.held(), 1U);
}

TEST(NeutronSpacing, TooCloseNeutronsAreAOneLineErrorNamingTheLimit) {
  EXPECT_EQ(config_error_of([] { check_neutron_spacing(10, 2000, 2000, " (x)"); }), "");
  EXPECT_EQ(
      config_error_of([] { check_neutron_spacing(10, 1999, 2000, " (--min-spacing-ns 2000)"); }),
      "--neutrons-per-pulse: '10' spaces neutrons 1999 ns apart; expected at most " +
          std::to_string(kNeutronWindowNs / 2000) + " (--min-spacing-ns 2000)");
  EXPECT_EQ(config_error_of([] { check_neutron_spacing(7, 5, 6, ""); }),
            "--neutrons-per-pulse: '7' spaces neutrons 5 ns apart; expected at most " +
                std::to_string(kNeutronWindowNs / 6));
}

}  // namespace
}  // namespace efu::gen
