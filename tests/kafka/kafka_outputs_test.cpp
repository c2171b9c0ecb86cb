// make_kafka_outputs against the test suite's real broker: what is produced is what a consumer
// reads, decoded by our generated readers, by the facility's Python package and by efu-monitor.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <tuple>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "efu/errors.h"
#include "efu/outputs.h"
#include "efu/schemas/ar51_readout_data_generated.h"
#include "efu/schemas/da00_dataarray_generated.h"
#include "efu/schemas/ev44_events_generated.h"
#include "efu/schemas/x5f2_status_generated.h"
#include "test_consumer.h"

namespace efu {
namespace {

using Event = std::tuple<std::int64_t, std::int32_t, std::int32_t>;
using kafka::testing::consume;
using kafka::testing::unique_topic;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

/// Runs a shell command; returns its exit status and stdout.
std::pair<int, std::string> run(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return {-1, out};
  char buf[4096];
  std::size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

class KafkaOutputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bootstrap_ = env("EFU_TEST_KAFKA_BOOTSTRAP");
    ASSERT_FALSE(bootstrap_.empty()) << "EFU_TEST_KAFKA_BOOTSTRAP is not set";
    settings_.broker = bootstrap_;
    settings_.events_topic = unique_topic("detector");
    settings_.samples_topic = unique_topic("samples");
    settings_.status_topic = unique_topic("status");
    settings_.source_name = "efutest";
    settings_.service_id = "efutest-1";
    settings_.ev44_max_bytes = 8000;  // ~990 events a message: several messages per thread
    settings_.ev44_max_latency = std::chrono::milliseconds(100);
    settings_.raw_sample_every = 1;
    settings_.threads = 2;
  }

  /// Polls like the publisher thread until every produced message is reported; bounded.
  void wait_for_reports(Outputs& outputs) {
    for (int i = 0; i < 600; ++i) {
      outputs.poll();
      if (counters_.value("kafka.delivery.ok") + counters_.value("kafka.delivery.failed") ==
          counters_.value("kafka.produce.messages")) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  std::string bootstrap_;
  OutputSettings settings_;
  CounterRegistry counters_;
};

TEST_F(KafkaOutputsTest, EverythingProducedIsConsumedAndDecodes) {
  auto outputs = make_kafka_outputs(settings_, counters_);
  ASSERT_NE(outputs->status(), nullptr);
  ASSERT_NE(outputs->raw(0), nullptr);
  counters_.freeze();

  // Two processing threads share one source: their message_ids interleave but stay consecutive.
  // Thread 0 gives its events one by one (add), thread 1 a pulse's run at a time (add_pulse, as
  // a pipeline's EventBuffer does), so both paths reach the broker.
  constexpr int kEventsPerThread[2] = {3000, 2500};
  std::vector<Event> sent[2];
  std::vector<std::uint8_t> raw_payload(1000);
  for (std::size_t i = 0; i < raw_payload.size(); ++i)
    raw_payload[i] = static_cast<std::uint8_t>(i);
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      EventOutput& out = outputs->events(t);
      std::vector<std::uint32_t> run_tof;
      std::vector<std::uint32_t> run_pixel;
      for (int i = 0; i < kEventsPerThread[t]; ++i) {
        const std::uint64_t pulse = 1'700'000'000'000'000'000ULL + (i / 100) * 71'428'571ULL;
        const auto tof = static_cast<std::uint32_t>(i * 13 + t);
        const auto pixel = static_cast<std::uint32_t>((i * 7 + t * 1000) % 4096);
        sent[t].emplace_back(pulse, tof, pixel);
        if (t == 0) {
          out.add(pulse, tof, pixel);
          continue;
        }
        run_tof.push_back(tof);
        run_pixel.push_back(pixel);
        if (i % 100 == 99 || i + 1 == kEventsPerThread[t]) {
          out.add_pulse(pulse, run_tof.data(), run_pixel.data(), run_tof.size());
          run_tof.clear();
          run_pixel.clear();
        }
      }
      out.flush();
      for (int i = 0; i < 5; ++i) {
        outputs->raw(t)->sample(raw_payload.data(), static_cast<std::uint32_t>(raw_payload.size()));
      }
    });
  }
  for (auto& th : threads) th.join();
  StatsSnapshot snap{};
  snap.interval_s = 1;
  snap.counters = {{"receive.packets", CounterKind::kCounter, 77, 7.5}};
  outputs->status()->publish(snap);
  wait_for_reports(*outputs);
  EXPECT_EQ(outputs->flush(std::chrono::seconds(10)), 0U);

  const std::uint64_t ev44_messages = counters_.value("ev44.messages");
  EXPECT_GE(ev44_messages, 6U);
  EXPECT_EQ(counters_.value("ev44.events"), 5500U);
  EXPECT_EQ(counters_.value("ev44.events.dropped"), 0U);
  EXPECT_EQ(counters_.value("ar51.messages"), 10U);
  EXPECT_EQ(counters_.value("x5f2.messages"), 1U);
  EXPECT_EQ(counters_.value("kafka.produce.messages"), ev44_messages + 10 + 1);
  EXPECT_EQ(counters_.value("kafka.delivery.ok"), ev44_messages + 10 + 1);
  EXPECT_EQ(counters_.value("kafka.delivery.failed"), 0U);

  // ev44: consecutive ids, exact events, each thread's events in order.
  const auto ev44 =
      consume(bootstrap_, settings_.events_topic, ev44_messages, std::chrono::seconds(30));
  ASSERT_EQ(ev44.size(), ev44_messages);
  std::vector<std::int64_t> ids;
  std::vector<Event> received;
  for (const std::string& bytes : ev44) {
    flatbuffers::Verifier v(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    ASSERT_TRUE(VerifyEvent44MessageBuffer(v));
    const Event44Message* m = GetEvent44Message(bytes.data());
    EXPECT_EQ(m->source_name()->str(), "efutest");
    EXPECT_LE(bytes.size(), settings_.ev44_max_bytes);
    ids.push_back(m->message_id());
    const auto& refs = *m->reference_time();
    const auto& index = *m->reference_time_index();
    for (flatbuffers::uoffset_t r = 0; r < refs.size(); ++r) {
      const std::uint32_t end =
          r + 1 < refs.size() ? static_cast<std::uint32_t>(index[r + 1]) : m->pixel_id()->size();
      for (auto e = static_cast<std::uint32_t>(index[r]); e < end; ++e) {
        received.emplace_back(refs[r], m->time_of_flight()->Get(e), m->pixel_id()->Get(e));
      }
    }
  }
  std::sort(ids.begin(), ids.end());
  for (std::size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(ids[i], static_cast<std::int64_t>(i));
  std::vector<Event> expected;
  for (const auto& s : sent) {
    for (const auto& [p, t, x] : s) {
      expected.emplace_back(static_cast<std::int64_t>(p), static_cast<std::int32_t>(t),
                            static_cast<std::int32_t>(x));
    }
  }
  std::sort(expected.begin(), expected.end());
  std::sort(received.begin(), received.end());
  EXPECT_EQ(received, expected);

  // ar51: ten samples with consecutive ids and the payload intact.
  const auto ar51 = consume(bootstrap_, settings_.samples_topic, 10, std::chrono::seconds(30));
  ASSERT_EQ(ar51.size(), 10U);
  std::set<std::int64_t> raw_ids;
  for (const std::string& bytes : ar51) {
    const RawReadoutMessage* m = GetRawReadoutMessage(bytes.data());
    raw_ids.insert(m->message_id());
    EXPECT_EQ(std::vector<std::uint8_t>(m->raw_data()->begin(), m->raw_data()->end()), raw_payload);
  }
  EXPECT_EQ(raw_ids, (std::set<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));

  // x5f2: one status message carrying the counters.
  const auto x5f2 = consume(bootstrap_, settings_.status_topic, 1, std::chrono::seconds(30));
  ASSERT_EQ(x5f2.size(), 1U);
  const Status* status = GetStatus(x5f2[0].data());
  EXPECT_EQ(status->service_id()->str(), "efutest-1");
  const auto doc = nlohmann::json::parse(status->status_json()->str());
  EXPECT_EQ(doc["counters"]["receive.packets"], 77);

  // The same messages decode with the facility's Python package (ess-streaming-data-types).
  const std::string python = env("EFU_PYTHON");
  const std::string source = env("EFU_SOURCE_DIR");
  ASSERT_FALSE(python.empty());
  const auto [rc, out] =
      run(python + " " + source + "/tests/kafka/decode_check.py --broker " + bootstrap_ +
          " --events-topic " + settings_.events_topic + " --samples-topic " +
          settings_.samples_topic + " --status-topic " + settings_.status_topic +
          " --expect-ev44 " + std::to_string(ev44_messages) +
          " --expect-events 5500 --expect-ar51 10 --expect-x5f2 1 2>&1");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("decode_check: ok"), std::string::npos) << out;

  // efu-monitor in bounded mode: the right event count, a PNG and one JSON line per message.
  const std::string dir = ::testing::TempDir();
  const std::string png = dir + "efu_monitor_" + settings_.events_topic + ".png";
  const std::string jsonl = dir + "efu_monitor_" + settings_.events_topic + ".jsonl";
  const auto [mrc, mout] =
      run(source + "/scripts/efu-monitor --broker " + bootstrap_ + " --events-topic " +
          settings_.events_topic + " --status-topic " + settings_.status_topic +
          " --from-beginning --max-messages " + std::to_string(ev44_messages) +
          " --duration 60 --dump-json " + jsonl + " --image " + png +
          " --image-seconds 3600 --width 64 --height 64 --quiet 2>&1");
  EXPECT_EQ(mrc, 0) << mout;
  EXPECT_NE(mout.find("events=5500 "), std::string::npos) << mout;
  EXPECT_NE(mout.find("gaps=0 "), std::string::npos) << mout;
  std::ifstream png_in(png, std::ios::binary);
  char magic[8] = {};
  png_in.read(magic, 8);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  std::ifstream json_in(jsonl);
  std::string line;
  std::size_t lines = 0;
  std::size_t events = 0;
  while (std::getline(json_in, line)) {
    const auto m = nlohmann::json::parse(line);
    ++lines;
    events += m["pixel_id"].size();
    EXPECT_EQ(m["source_name"], "efutest");
  }
  EXPECT_EQ(lines, ev44_messages);
  EXPECT_EQ(events, 5500U);
}

TEST_F(KafkaOutputsTest, LatencyFlushSendsAMessageFromTick) {
  settings_.raw_sample_every = 0;
  settings_.threads = 1;
  settings_.ev44_max_bytes = 1'000'000;
  auto outputs = make_kafka_outputs(settings_, counters_);
  EXPECT_EQ(outputs->raw(0), nullptr);
  EventOutput& out = outputs->events(0);
  const std::uint64_t t0 = 1'000'000'000'000ULL;
  out.tick(t0);
  out.add(5, 1, 2);
  out.tick(t0 + 50'000'000);  // 50 ms: younger than the 100 ms limit
  EXPECT_EQ(counters_.value("ev44.messages"), 0U);
  out.tick(t0 + 100'000'000);
  EXPECT_EQ(counters_.value("ev44.messages"), 1U);
  out.tick(t0 + 300'000'000);  // nothing buffered: nothing sent
  EXPECT_EQ(counters_.value("ev44.messages"), 1U);
  wait_for_reports(*outputs);
  EXPECT_EQ(outputs->flush(std::chrono::seconds(10)), 0U);
  EXPECT_EQ(counters_.value("kafka.delivery.ok"), 1U);
  const auto msgs = consume(bootstrap_, settings_.events_topic, 1, std::chrono::seconds(30));
  ASSERT_EQ(msgs.size(), 1U);
  EXPECT_EQ(GetEvent44Message(msgs[0].data())->pixel_id()->Get(0), 2);
}

// Every thread of a source sends many small messages at once. A consumer reading the topic in
// order must see message_ids 0, 1, 2, ... with no step back and no gap (docs/architecture.md
// §6.2), for any thread count (several processing threads once put ids on the partition out of
// order).
class KafkaMessageIdOrderTest : public KafkaOutputsTest,
                                public ::testing::WithParamInterface<unsigned> {};

TEST_P(KafkaMessageIdOrderTest, IdsAreConsecutiveInTheOrderTheyAreConsumed) {
  const unsigned threads = GetParam();
  settings_.threads = threads;
  settings_.raw_sample_every = 0;
  settings_.ev44_max_bytes = 300;  // ~16 events a message: hundreds of messages per thread
  auto outputs = make_kafka_outputs(settings_, counters_);
  counters_.freeze();
  constexpr int kEventsPerThread = 6000;
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      EventOutput& out = outputs->events(t);
      for (int i = 0; i < kEventsPerThread; ++i) {
        out.add(1'700'000'000'000'000'000ULL, static_cast<std::uint32_t>(i), t + 1);
      }
      out.flush();
    });
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(outputs->flush(std::chrono::seconds(30)), 0U);

  const std::uint64_t messages = counters_.value("ev44.messages");
  EXPECT_GE(messages, threads * 300U);
  EXPECT_EQ(counters_.value("ev44.events.dropped"), 0U);
  EXPECT_EQ(counters_.value("kafka.delivery.ok"), messages);
  const auto consumed =
      consume(bootstrap_, settings_.events_topic, messages, std::chrono::seconds(60));
  ASSERT_EQ(consumed.size(), messages);
  std::uint64_t events = 0;
  std::int64_t out_of_order = 0;
  for (std::size_t i = 0; i < consumed.size(); ++i) {
    const auto* m = GetEvent44Message(consumed[i].data());
    if (m->message_id() != static_cast<std::int64_t>(i)) ++out_of_order;
    events += m->pixel_id()->size();
  }
  EXPECT_EQ(out_of_order, 0) << "message_ids not consecutive as consumed";
  EXPECT_EQ(events, std::uint64_t{threads} * kEventsPerThread);
}

INSTANTIATE_TEST_SUITE_P(Threads, KafkaMessageIdOrderTest, ::testing::Values(2U, 4U));

// A tiny local queue against a healthy broker: the producing thread finds the queue full again
// and again. Nobody but the producer itself serves delivery reports here (as in efu, where the
// stats thread no longer polls), and no message may be dropped while the broker acknowledges.
// The wait for a delivery report is 5 s, not the default 500 ms: a JVM pause of the test's broker
// on a loaded machine is not the stalled broker this test is not about.
TEST_F(KafkaOutputsTest, AFullQueueDropsNothingWhileTheBrokerKeepsUp) {
  const std::string path = ::testing::TempDir() + "tiny_queue_kafka_config.json";
  std::ofstream(path) << R"({"queue.buffering.max.messages": 4, "linger.ms": 0,
                            "efu.queue.full.wait.ms": 5000})";
  settings_.kafka_config_file = path;
  settings_.threads = 1;
  settings_.raw_sample_every = 0;
  settings_.ev44_max_bytes = 300;
  auto outputs = make_kafka_outputs(settings_, counters_);
  counters_.freeze();
  EventOutput& out = outputs->events(0);
  // First the broker must be there and the topic exist (creating it takes a while, during
  // which nothing is acknowledged): one message, delivered, served by the producer itself.
  out.add(5, 0, 1);
  out.flush();
  for (int i = 0; i < 300 && counters_.value("kafka.delivery.ok") == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(counters_.value("kafka.delivery.ok"), 1U) << "the broker acknowledged nothing in 30 s";
  for (int i = 0; i < 16 * 400; ++i) out.add(5, static_cast<std::uint32_t>(i), 1);
  out.flush();
  const std::uint64_t messages = counters_.value("ev44.messages");
  EXPECT_EQ(outputs->flush(std::chrono::seconds(30)), 0U);
  EXPECT_GE(messages, 350U);
  EXPECT_EQ(counters_.value("kafka.produce.failed.queue_full"), 0U);
  EXPECT_EQ(counters_.value("ev44.events.dropped"), 0U);
  EXPECT_EQ(counters_.value("kafka.delivery.ok"), messages);
  EXPECT_EQ(consume(bootstrap_, settings_.events_topic, messages, std::chrono::seconds(60)).size(),
            messages);
}

// A plugin's named sources (PipelineContext::sources): each name is one ev44 stream whatever the
// thread, with its own message ids, consecutive as consumed; da00 arrays go out under their
// source's name; and with live histograms on, every ev44 source's events are in the histograms
// of the live topic.
TEST_F(KafkaOutputsTest, NamedSourcesHaveTheirOwnIdsAndLiveHistogramsCountEveryEvent) {
  settings_.threads = 2;
  settings_.raw_sample_every = 0;
  settings_.ev44_max_bytes = 300;  // ~16 events a message
  settings_.histograms.topic = unique_topic("live");
  settings_.histograms.pulses = 3;
  settings_.histograms.tof_bins = 10;
  settings_.histograms.tof_max_ns = 1000;
  settings_.histograms.pixels = 64;
  auto outputs = make_kafka_outputs(settings_, counters_);
  // As the host does: each thread's pipeline asks for its sources in create(), on this thread.
  struct Sinks {
    EventSink* own;
    EventSink* a;
    EventSink* b;
    HistogramSink* monitor;
  };
  Sinks sinks[2];
  for (unsigned t = 0; t < 2; ++t) {
    SourceOutputs* sources = outputs->events(t).sources();
    ASSERT_NE(sources, nullptr);
    sinks[t] = {&outputs->events(t).sink(), &sources->events("arc=0;triplet=1"),
                &sources->events("arc=4;triplet=14"), &sources->histograms("monitor_1")};
    EXPECT_EQ(&sources->events("arc=0;triplet=1"), sinks[t].a) << "a name asked twice";
  }
  counters_.freeze();

  // Per source and thread: events over 9 pulses; the expected histograms over all of them.
  constexpr int kEvents[3] = {400, 900, 650};  // own, a, b (per thread)
  std::vector<std::uint64_t> tof_expected(10), pixel_expected(64);
  std::uint64_t events_sent = 0;
  const std::int32_t monitor_edges[3] = {0, 500, 1000};
  const std::uint64_t monitor_counts[2] = {7, 11};
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < 2; ++t) {
    for (int s = 0; s < 3; ++s) {
      for (int i = 0; i < kEvents[s]; ++i) {
        const auto tof = static_cast<std::uint32_t>((i * 37 + s * 5 + t) % 1100);  // some beyond
        const auto pixel = static_cast<std::uint32_t>(1 + (i * 3 + s + t) % 70);   // some above
        if (tof < 1000) ++tof_expected[tof / 100];
        if (pixel <= 64) ++pixel_expected[pixel - 1];
        ++events_sent;
      }
    }
  }
  for (unsigned t = 0; t < 2; ++t) {
    workers.emplace_back([&, t] {
      EventSink* targets[3] = {sinks[t].own, sinks[t].a, sinks[t].b};
      for (int s = 0; s < 3; ++s) {
        for (int i = 0; i < kEvents[s]; ++i) {
          const std::uint64_t pulse =
              1'700'000'000'000'000'000ULL + (i * 9 / kEvents[s]) * 71'428'571ULL;
          targets[s]->add(pulse, static_cast<std::uint32_t>((i * 37 + s * 5 + t) % 1100),
                          static_cast<std::uint32_t>(1 + (i * 3 + s + t) % 70));
        }
      }
      static constexpr std::array<const char*, 1> kAxis{"frame_time"};
      const std::array<std::int64_t, 1> edge_shape{3}, count_shape{2};
      const std::array<Da00Variable, 2> vars{{
          {"frame_time", "ns", kAxis, edge_shape, Da00Type::int32, monitor_edges,
           sizeof monitor_edges},
          {"signal", "counts", kAxis, count_shape, Da00Type::uint64, monitor_counts,
           sizeof monitor_counts},
      }};
      sinks[t].monitor->publish(DataArrayView{1'700'000'000'000'000'000ULL + t, vars});
      outputs->events(t).flush();
    });
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(outputs->flush(std::chrono::seconds(30)), 0U);
  EXPECT_EQ(counters_.value("ev44.events"), events_sent);
  EXPECT_EQ(counters_.value("ev44.events.dropped"), 0U);
  EXPECT_EQ(counters_.value("da00.messages.dropped"), 0U);

  // The events topic: ev44 per source with consecutive ids as consumed, and the two arrays.
  const std::uint64_t ev44_messages = counters_.value("ev44.messages");
  const auto consumed =
      consume(bootstrap_, settings_.events_topic, ev44_messages + 2, std::chrono::seconds(60));
  ASSERT_EQ(consumed.size(), ev44_messages + 2);
  std::map<std::string, std::int64_t> next_id;
  std::map<std::string, std::uint64_t> events_of;
  std::vector<std::uint64_t> monitor_timestamps;
  for (const std::string& m : consumed) {
    ASSERT_GE(m.size(), 8U);
    if (std::memcmp(m.data() + 4, "da00", 4) == 0) {
      const auto* array = Getda00_DataArray(m.data());
      EXPECT_EQ(array->source_name()->str(), "monitor_1");
      monitor_timestamps.push_back(array->timestamp());
      ASSERT_EQ(array->data()->size(), 2U);
      const auto* signal = array->data()->Get(1);
      EXPECT_EQ(signal->name()->str(), "signal");
      EXPECT_EQ(signal->data_type(), da00_dtype::uint64);
      ASSERT_EQ(signal->data()->size(), sizeof monitor_counts);
      EXPECT_EQ(std::memcmp(signal->data()->data(), monitor_counts, sizeof monitor_counts), 0);
      continue;
    }
    const auto* ev = GetEvent44Message(m.data());
    const std::string source = ev->source_name()->str();
    EXPECT_EQ(ev->message_id(), next_id[source]) << "source " << source;
    next_id[source] = ev->message_id() + 1;
    events_of[source] += ev->pixel_id()->size();
  }
  EXPECT_EQ(events_of["efutest"], 2U * kEvents[0]);
  EXPECT_EQ(events_of["arc=0;triplet=1"], 2U * kEvents[1]);
  EXPECT_EQ(events_of["arc=4;triplet=14"], 2U * kEvents[2]);
  EXPECT_EQ(events_of.size(), 3U);
  std::sort(monitor_timestamps.begin(), monitor_timestamps.end());
  EXPECT_EQ(monitor_timestamps, (std::vector<std::uint64_t>{1'700'000'000'000'000'000ULL,
                                                            1'700'000'000'000'000'001ULL}));

  // The live topic: the sum of every window's histograms is the histogram of every event sent;
  // what is outside the ranges is in the counters.
  const std::uint64_t live_messages = 2 * counters_.value("histograms.published");
  ASSERT_GE(live_messages, 4U);
  const auto live =
      consume(bootstrap_, settings_.histograms.topic, live_messages, std::chrono::seconds(60));
  ASSERT_EQ(live.size(), live_messages);
  std::vector<std::uint64_t> tof_got(10), pixel_got(64);
  for (const std::string& m : live) {
    const auto* array = Getda00_DataArray(m.data());
    const std::string source = array->source_name()->str();
    const auto* signal = array->data()->Get(1);
    ASSERT_EQ(signal->data_type(), da00_dtype::uint32);
    std::vector<std::uint32_t> counts(signal->data()->size() / 4);
    std::memcpy(counts.data(), signal->data()->data(), counts.size() * 4);
    std::vector<std::uint64_t>& got = source == "efutest_tof" ? tof_got : pixel_got;
    ASSERT_TRUE(source == "efutest_tof" || source == "efutest_pixels") << source;
    ASSERT_EQ(counts.size(), got.size()) << source;
    for (std::size_t i = 0; i < counts.size(); ++i) got[i] += counts[i];
  }
  EXPECT_EQ(tof_got, tof_expected);
  EXPECT_EQ(pixel_got, pixel_expected);
  std::uint64_t in_tof = 0, in_pixels = 0;
  for (auto c : tof_expected) in_tof += c;
  for (auto c : pixel_expected) in_pixels += c;
  EXPECT_EQ(in_tof + counters_.value("histograms.tof.beyond_range"), events_sent);
  EXPECT_EQ(in_pixels + counters_.value("histograms.pixels.out_of_range"), events_sent);
}

TEST_F(KafkaOutputsTest, BadKafkaConfigFileIsAConfigError) {
  const std::string path = ::testing::TempDir() + "bad_kafka_config.json";
  std::ofstream(path) << R"({"linger.ms": "soon"})";
  settings_.kafka_config_file = path;
  try {
    make_kafka_outputs(settings_, counters_);
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("linger.ms"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace efu
