#include "udp_pipeline.h"

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
  explicit Fixture(const char* format, const char* verify = "off") {
    options.set(kOptionSeqFormat, format, true);
    options.set(kOptionVerifyPayload, verify, false);
  }
  std::unique_ptr<UdpPipeline> make() {
    return std::make_unique<UdpPipeline>(PipelineContext{options, counters, sink, 0, 1});
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

}  // namespace
}  // namespace efu::udp
