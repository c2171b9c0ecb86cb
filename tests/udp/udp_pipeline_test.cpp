#include "udp_pipeline.h"

#include <arpa/inet.h>

#include <cstdint>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "efu/errors.h"

namespace efu::udp {
namespace {

class NoEvents : public EventSink {
 public:
  void add(std::uint64_t, std::uint32_t, std::uint32_t) override { ++calls; }
  int calls = 0;
};

struct Fixture {
  explicit Fixture(const char* format, const char* verify = "off", const char* max_flows = "16") {
    options.set(kOptionSeqFormat, format, true);
    options.set(kOptionVerifyPayload, verify, false);
    options.set(kOptionMaxFlows, max_flows, false);
  }
  std::unique_ptr<UdpPipeline> make(unsigned instance = 0, unsigned instances = 1) {
    return std::make_unique<UdpPipeline>(
        PipelineContext{options, counters, sink, instance, instances});
  }
  OptionValues options;
  CounterRegistry counters;
  NoEvents sink;
};

TEST(UdpPipeline, PublishesEveryCounterUnderItsStableName) {
  Fixture f("efu64", "on");
  auto pipeline = f.make();
  std::vector<std::vector<std::uint8_t>> datagrams;
  for (std::uint64_t seq : {0, 1, 3, 3, 2}) {
    std::vector<std::uint8_t> d(64);
    write_seq(SeqFormat::kEfu64, seq, d.data());
    write_filler(SeqFormat::kEfu64, seq, d.data(), d.size());
    datagrams.push_back(d);
  }
  datagrams.push_back({1, 2, 3});                         // runt
  datagrams.push_back(std::vector<std::uint8_t>(64, 0));  // seq 0 again, zero filler
  std::vector<PacketView> views;
  for (const auto& d : datagrams) views.push_back({d.data(), static_cast<std::uint32_t>(d.size())});
  pipeline->process(views);
  std::vector<std::uint8_t> last(64);
  write_seq(SeqFormat::kEfu64, 6, last.data());
  write_filler(SeqFormat::kEfu64, 6, last.data(), last.size());
  const PacketView tail{last.data(), 64};
  pipeline->process(PacketBatch(&tail, 1));
  pipeline->flush();

  const CounterRegistry& c = f.counters;
  EXPECT_EQ(c.value("udp.packets"), 8U);
  EXPECT_EQ(c.value("udp.bytes"), 7U * 64U + 3U);
  EXPECT_EQ(c.value("udp.expected"), 7U);
  EXPECT_EQ(c.value("udp.lost"), 2U);  // 4 and 5
  EXPECT_EQ(c.value("udp.out_of_order"), 1U);
  EXPECT_EQ(c.value("udp.duplicates"), 2U);
  EXPECT_EQ(c.value("udp.restarts"), 0U);
  EXPECT_EQ(c.value("udp.runts"), 1U);
  EXPECT_EQ(c.value("udp.corrupted"), 1U);
  EXPECT_EQ(f.sink.calls, 0);
}

TEST(UdpPipeline, UnknownSequenceFormatIsAConfigErrorNamingIt) {
  Fixture f("udptx64");
  try {
    f.make();
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--seq-format"), std::string::npos) << what;
    EXPECT_NE(what.find("'udptx64'"), std::string::npos) << what;
    EXPECT_NE(what.find("efu64 or udptx32"), std::string::npos) << what;
  }
}

TEST(UdpPipeline, Udptx32FormatIsSelectable) {
  Fixture f("udptx32");
  auto pipeline = f.make();
  std::uint8_t d[4];
  std::vector<PacketView> views;
  std::vector<std::vector<std::uint8_t>> store;
  for (std::uint32_t seq : {1U, 2U, 4U}) {
    write_seq(SeqFormat::kUdptx32, seq, d);
    store.emplace_back(d, d + 4);
  }
  for (const auto& s : store) views.push_back({s.data(), 4});
  pipeline->process(views);
  pipeline->flush();
  EXPECT_EQ(f.counters.value("udp.expected"), 4U);
  EXPECT_EQ(f.counters.value("udp.lost"), 1U);
  EXPECT_EQ(f.counters.value("udp.runts"), 0U);
}

PacketSource ipv4_source(const char* address, std::uint16_t port) {
  PacketSource s{};
  s.v4.sin_family = AF_INET;
  s.v4.sin_port = htons(port);
  inet_pton(AF_INET, address, &s.v4.sin_addr);
  return s;
}

PacketSource ipv6_source(const char* address, std::uint16_t port) {
  PacketSource s{};
  s.v6.sin6_family = AF_INET6;
  s.v6.sin6_port = htons(port);
  inet_pton(AF_INET6, address, &s.v6.sin6_addr);
  return s;
}

/// efu64 datagrams of 16 bytes, each with its sender: the backing store and the views.
struct Datagrams {
  void add(std::uint64_t seq, const PacketSource& source) {
    auto& d = store.emplace_back(16);
    write_seq(SeqFormat::kEfu64, seq, d.data());
    write_filler(SeqFormat::kEfu64, seq, d.data(), d.size());
    sources.push_back(&source);
  }
  std::vector<PacketView> views() const {
    std::vector<PacketView> v;
    for (std::size_t i = 0; i < store.size(); ++i) v.push_back({store[i].data(), 16, sources[i]});
    return v;
  }
  std::vector<std::vector<std::uint8_t>> store;
  std::vector<const PacketSource*> sources;
};

TEST(UdpPipeline, EachSenderIsAccountedOnItsOwnAndTheTotalsAreTheirSums) {
  // Three senders interleaved: each starts at 0, so one flow's numbers are another's duplicates
  // or reordering if they were mixed. Sender a loses 3 and 7 of 0..9, b loses nothing of 0..5
  // but swaps 2 and 3, c (IPv6) loses 1 of 0..4.
  Fixture f("efu64", "on");
  auto pipeline = f.make();
  const PacketSource a = ipv4_source("10.0.0.1", 40000);
  const PacketSource b = ipv4_source("10.0.0.1", 40001);
  const PacketSource c = ipv6_source("fe80::1:2", 5000);
  Datagrams d;
  const std::vector<std::uint64_t> a_seq{0, 1, 2, 4, 5, 6, 8, 9};
  const std::vector<std::uint64_t> b_seq{0, 1, 3, 2, 4, 5};
  const std::vector<std::uint64_t> c_seq{0, 2, 3, 4};
  for (std::size_t i = 0; i < 8; ++i) {
    if (i < a_seq.size()) d.add(a_seq[i], a);
    if (i < b_seq.size()) d.add(b_seq[i], b);
    if (i < c_seq.size()) d.add(c_seq[i], c);
  }
  const std::vector<PacketView> views = d.views();
  // In two batches, so the per-batch publication of some flows is exercised too.
  pipeline->process(PacketBatch(views.data(), 5));
  pipeline->process(PacketBatch(views.data() + 5, views.size() - 5));
  pipeline->flush();

  const CounterRegistry& r = f.counters;
  // Flows are numbered in order of first arrival: a, b, c.
  EXPECT_EQ(r.value("udp.flows"), 3U);
  EXPECT_EQ(r.value("udp.flow.0.packets"), 8U);
  EXPECT_EQ(r.value("udp.flow.0.expected"), 10U);
  EXPECT_EQ(r.value("udp.flow.0.lost"), 2U);
  EXPECT_EQ(r.value("udp.flow.0.out_of_order"), 0U);
  EXPECT_EQ(r.value("udp.flow.1.packets"), 6U);
  EXPECT_EQ(r.value("udp.flow.1.expected"), 6U);
  EXPECT_EQ(r.value("udp.flow.1.lost"), 0U);
  EXPECT_EQ(r.value("udp.flow.1.out_of_order"), 1U);
  EXPECT_EQ(r.value("udp.flow.2.packets"), 4U);
  EXPECT_EQ(r.value("udp.flow.2.expected"), 5U);
  EXPECT_EQ(r.value("udp.flow.2.lost"), 1U);
  for (int flow = 0; flow < 3; ++flow) {
    const std::string p = "udp.flow." + std::to_string(flow) + ".";
    EXPECT_EQ(r.value(p + "duplicates"), 0U) << p;
    EXPECT_EQ(r.value(p + "restarts"), 0U) << p;
    EXPECT_EQ(r.value(p + "corrupted"), 0U) << p;
    EXPECT_EQ(r.value(p + "bytes"), r.value(p + "packets") * 16) << p;
  }
  EXPECT_EQ(r.value("udp.packets"), 18U);
  EXPECT_EQ(r.value("udp.bytes"), 18U * 16U);
  EXPECT_EQ(r.value("udp.expected"), 21U);
  EXPECT_EQ(r.value("udp.lost"), 3U);
  EXPECT_EQ(r.value("udp.out_of_order"), 1U);
  EXPECT_EQ(r.value("udp.duplicates"), 0U);
  EXPECT_EQ(r.value("udp.untracked.packets"), 0U);
  EXPECT_EQ(r.value("udp.flow.3.packets"), 0U);  // registered, unused

  // The senders, as numbers: family, port, and the address as two big-endian 64-bit halves.
  EXPECT_EQ(r.value("udp.flow.0.source.family"), 4U);
  EXPECT_EQ(r.value("udp.flow.0.source.port"), 40000U);
  EXPECT_EQ(r.value("udp.flow.0.source.address_high"), 0U);
  EXPECT_EQ(r.value("udp.flow.0.source.address_low"), 0x0A000001U);
  EXPECT_EQ(r.value("udp.flow.1.source.port"), 40001U);
  EXPECT_EQ(r.value("udp.flow.2.source.family"), 6U);
  EXPECT_EQ(r.value("udp.flow.2.source.port"), 5000U);
  EXPECT_EQ(r.value("udp.flow.2.source.address_high"), 0xFE80000000000000ULL);
  EXPECT_EQ(r.value("udp.flow.2.source.address_low"), 0x0000000000010002ULL);
}

TEST(UdpPipeline, SendersBeyondMaxFlowsAreCountedAsUntrackedNotMixedIn) {
  Fixture f("efu64", "off", "2");
  auto pipeline = f.make();
  const PacketSource a = ipv4_source("127.0.0.1", 1000);
  const PacketSource b = ipv4_source("127.0.0.1", 1001);
  const PacketSource extra = ipv4_source("127.0.0.1", 1002);
  Datagrams d;
  for (std::uint64_t seq = 0; seq < 4; ++seq) {
    d.add(seq, a);
    d.add(seq, b);
    d.add(seq * 2, extra);  // loses every odd number, which must not show anywhere
  }
  const std::vector<PacketView> views = d.views();
  pipeline->process(views);
  pipeline->flush();
  const CounterRegistry& r = f.counters;
  EXPECT_EQ(r.value("udp.flows"), 2U);
  EXPECT_EQ(r.value("udp.untracked.packets"), 4U);
  EXPECT_EQ(r.value("udp.packets"), 12U);  // every datagram, untracked ones included
  EXPECT_EQ(r.value("udp.bytes"), 12U * 16U);
  EXPECT_EQ(r.value("udp.expected"), 8U);  // sequence accounting of the tracked flows only
  EXPECT_EQ(r.value("udp.lost"), 0U);
  EXPECT_EQ(r.value("udp.duplicates"), 0U);
  EXPECT_EQ(r.value("udp.flow.0.packets") + r.value("udp.flow.1.packets"), 8U);
}

TEST(UdpPipeline, ADatagramWithoutAKnownSenderIsOneFlow) {
  Fixture f("efu64");
  auto pipeline = f.make();
  Datagrams d;
  for (std::uint64_t seq : {0, 1, 3}) d.add(seq, kUnknownSource);
  pipeline->process(d.views());
  pipeline->flush();
  EXPECT_EQ(f.counters.value("udp.flows"), 1U);
  EXPECT_EQ(f.counters.value("udp.flow.0.source.family"), 0U);
  EXPECT_EQ(f.counters.value("udp.flow.0.lost"), 1U);
  EXPECT_EQ(f.counters.value("udp.lost"), 1U);
}

TEST(UdpPipeline, FlowNamesOfSeveralProcessingThreadsDoNotCollide) {
  // With 2 processing threads, instance 0 names its slots 0, 2, 4, … and instance 1 1, 3, 5, …
  Fixture f("efu64");
  auto first = f.make(0, 2);
  auto second = f.make(1, 2);
  const PacketSource a = ipv4_source("127.0.0.1", 2000);
  const PacketSource b = ipv4_source("127.0.0.1", 2001);
  Datagrams da;
  Datagrams db;
  for (std::uint64_t seq : {0, 1, 2}) da.add(seq, a);
  for (std::uint64_t seq : {0, 2}) db.add(seq, b);
  first->process(da.views());
  second->process(db.views());
  first->flush();
  second->flush();
  const CounterRegistry& r = f.counters;
  EXPECT_EQ(r.value("udp.flow.0.packets"), 3U);
  EXPECT_EQ(r.value("udp.flow.0.source.port"), 2000U);
  EXPECT_EQ(r.value("udp.flow.1.packets"), 2U);
  EXPECT_EQ(r.value("udp.flow.1.lost"), 1U);
  EXPECT_EQ(r.value("udp.flow.1.source.port"), 2001U);
  EXPECT_EQ(r.value("udp.flows"), 2U);  // a gauge per thread, summed
  EXPECT_EQ(r.value("udp.packets"), 5U);
  EXPECT_EQ(r.value("udp.lost"), 1U);
}

TEST(UdpPipeline, MaxFlowsOutOfRangeIsAConfigErrorNamingIt) {
  for (const char* bad : {"0", "1025"}) {
    Fixture f("efu64", "off", bad);
    try {
      f.make();
      FAIL() << "expected ConfigError for " << bad;
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("max-flows"), std::string::npos) << what;
      EXPECT_NE(what.find(bad), std::string::npos) << what;
    }
  }
}

TEST(UdpPipeline, RoutesBySenderSoAFlowStaysOnOneThread) {
  const PacketSource a = ipv4_source("127.0.0.1", 3000);
  const PacketSource b = ipv4_source("127.0.0.1", 3000);
  const std::uint8_t data[8] = {};
  EXPECT_EQ(route_by_flow(PacketView{data, 8, &a}), route_by_flow(PacketView{data, 8, &b}));
  EXPECT_EQ(route_by_flow(PacketView{data, 8, &a}), a.flow_hash());
}

TEST(FlowKey, PrintsTheSenderAsAnOperatorWritesIt) {
  EXPECT_EQ(FlowKey::of(ipv4_source("192.168.1.20", 9000)).to_string(), "192.168.1.20:9000");
  EXPECT_EQ(FlowKey::of(ipv6_source("2001:db8::5", 17)).to_string(), "[2001:db8::5]:17");
  PacketSource scoped = ipv6_source("fe80::1", 1);
  scoped.v6.sin6_scope_id = 3;
  EXPECT_EQ(FlowKey::of(scoped).to_string(), "[fe80::1%3]:1");
  EXPECT_EQ(FlowKey::of(kUnknownSource).to_string(), "unknown");
  // The same address on another interface is another flow.
  EXPECT_FALSE(FlowKey::of(scoped) == FlowKey::of(ipv6_source("fe80::1", 1)));
}

TEST(FlowTable, GivesSlotsInOrderOfArrivalAndRefusesNewKeysWhenFull) {
  FlowTable table(3);
  std::vector<FlowKey> keys;
  for (std::uint16_t port = 1; port <= 4; ++port) {
    keys.push_back(FlowKey::of(ipv4_source("127.0.0.1", port)));
  }
  // A constant hash: every key collides, so probing is exercised.
  EXPECT_EQ(table.find_or_add(keys[0], 7), 0U);
  EXPECT_EQ(table.find_or_add(keys[1], 7), 1U);
  EXPECT_EQ(table.find_or_add(keys[0], 7), 0U);
  EXPECT_EQ(table.find_or_add(keys[2], 7), 2U);
  EXPECT_EQ(table.find_or_add(keys[3], 7), FlowTable::kFull);
  EXPECT_EQ(table.find_or_add(keys[1], 7), 1U);
  EXPECT_EQ(table.size(), 3U);
  EXPECT_TRUE(table.key(2) == keys[2]);
}

}  // namespace
}  // namespace efu::udp
