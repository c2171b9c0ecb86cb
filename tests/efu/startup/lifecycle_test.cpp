// efu as a subprocess: signals, --stop-after, the data path end to end, and bad configuration.
#include <cstdio>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "subprocess.h"

namespace efu::test {
namespace {

using namespace std::chrono_literals;

const std::string kEfu = EFU_BIN;
const std::string kPlugins = EFU_TEST_PLUGIN_DIR;

std::vector<std::string> efu_args(int port, std::vector<std::string> extra) {
  std::vector<std::string> args{
      kEfu,        "--module", kPlugins + "/efu_counting.so", "--broker",         "none", "--bind",
      "127.0.0.1", "--port",   std::to_string(port),          "--stats-interval", "0.2"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::string temp_path(const std::string& stem) {
  return ::testing::TempDir() + stem + "-" + std::to_string(getpid()) + "-" +
         std::to_string(free_udp_port());
}

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(read_text(path)); }

TEST(Lifecycle, SigtermStopsAndPrintsFinalCounters) {
  const int port = free_udp_port();
  Child efu(efu_args(port, {}));
  ASSERT_TRUE(efu.wait_for_stderr("running", 10s)) << efu.err();
  send_sequence(port, 0, 1000, 200);
  std::this_thread::sleep_for(200ms);
  efu.signal(SIGTERM);
  // A bound on the wait, not a timing assertion: a stopped efu exits, however loaded the box.
  const auto code = efu.wait(20s);
  ASSERT_TRUE(code.has_value()) << "still running 20 s after SIGTERM\n" << efu.err();
  EXPECT_EQ(*code, 0) << efu.err();
  const std::string out = efu.out();
  EXPECT_NE(out.find("efu: final counters"), std::string::npos) << out;
  EXPECT_NE(out.find("counting.packets"), std::string::npos) << out;
  // "packets received R, processed P, lost L": every datagram sent was processed or lost.
  unsigned long received = 0, processed = 0, lost = 0;
  const std::size_t at = out.find("efu: summary: packets received");
  ASSERT_NE(at, std::string::npos) << out;
  ASSERT_EQ(std::sscanf(out.c_str() + at, "efu: summary: packets received %lu, processed %lu, lost %lu",
                        &received, &processed, &lost),
            3)
      << out.substr(at, 120);
  EXPECT_EQ(processed + lost, 1000u) << out.substr(at, 120);
  EXPECT_LE(processed, received);
  EXPECT_NE(efu.err().find("stopping (signal SIGTERM)"), std::string::npos) << efu.err();
}

TEST(Lifecycle, StopAfterIsHonoured) {
  const int port = free_udp_port();
  Child efu(efu_args(port, {"--stop-after", "1"}));
  const auto code = efu.wait(10s);
  ASSERT_TRUE(code.has_value()) << efu.err();
  EXPECT_EQ(*code, 0) << efu.err();
  EXPECT_NE(efu.err().find("--stop-after reached"), std::string::npos) << efu.err();
  // Stats were logged at least once per interval while it ran.
  EXPECT_NE(efu.err().find("stats: "), std::string::npos) << efu.err();
}

// Everything sent is received, processed, reaches the plugin in order, and is drained at stop;
// or, on a loaded machine, counted where it was lost. Accounting, not a zero-loss assertion.
void check_data_path(const std::string& plugin, const std::string& threads, int flushes) {
  const int port = free_udp_port();
  const std::string stats = temp_path("stats") + ".json";
  auto args = efu_args(port, {"--stats-json", stats, "--processing-threads", threads});
  args[2] = kPlugins + "/" + plugin;
  Child efu(args);
  ASSERT_TRUE(efu.wait_for_stderr("running", 10s)) << efu.err();
  constexpr std::uint64_t kCount = 20000;
  send_sequence(port, 0, kCount, 300);
  std::this_thread::sleep_for(300ms);
  efu.signal(SIGINT);
  const auto code = efu.wait(30s);
  ASSERT_TRUE(code.has_value()) << efu.err();
  ASSERT_EQ(*code, 0) << efu.err();
  const nlohmann::json j = read_json(stats);
  const std::uint64_t received = j.at("receive.packets");
  const std::uint64_t before_ring = j.at("receive.dropped.kernel").get<std::uint64_t>() +
                                    j.at("receive.dropped.at_stop").get<std::uint64_t>();
  const std::uint64_t ring_full = j.at("receive.dropped.ring_full");
  EXPECT_EQ(received + before_ring, kCount);
  EXPECT_EQ(j.at("receive.bytes"), received * 300);
  EXPECT_EQ(j.at("process.packets"), received - ring_full);
  EXPECT_EQ(j.at("counting.packets"), received - ring_full);
  EXPECT_EQ(j.at("events.discarded"), received - ring_full);
  EXPECT_EQ(j.at("counting.flushes"), flushes);
  std::remove(stats.c_str());
}

TEST(Lifecycle, OneProcessingThreadSeesEverythingInOrder) {
  check_data_path("efu_counting.so", "1", 1);
}

TEST(Lifecycle, TwoRoutedProcessingThreadsShareTheLoad) {
  check_data_path("efu_counting_routed.so", "2", 2);
}

TEST(Lifecycle, ListModulesFindsPluginsOnEfuPluginPath) {
  Child efu({kEfu, "--list-modules"}, {"EFU_PLUGIN_PATH=" + kPlugins});
  ASSERT_EQ(efu.wait(10s), 0);
  EXPECT_NE(efu.out().find("counting"), std::string::npos) << efu.out();
  EXPECT_NE(efu.out().find("not loadable"), std::string::npos) << efu.out();
}

TEST(Lifecycle, ModuleHelpShowsPluginAndHostOptions) {
  Child efu({kEfu, "--module", "counting", "--help"}, {"EFU_PLUGIN_PATH=" + kPlugins});
  ASSERT_EQ(efu.wait(10s), 0) << efu.err();
  EXPECT_NE(efu.out().find("--counting-emit"), std::string::npos) << efu.out();
  EXPECT_NE(efu.out().find("--stats-json"), std::string::npos) << efu.out();
}

struct BadCase {
  const char* name;
  std::vector<std::string> args;  // appended to a valid command line
  std::string config;             // JSON text for --config, if not empty
  std::string expected;           // in the one-line error
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class BadConfig : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadConfig, ExitsTwoWithOneLineNamingTheProblem) {
  const BadCase& c = GetParam();
  const int port = free_udp_port();
  std::vector<std::string> args = efu_args(port, c.args);
  std::string cfg;
  if (!c.config.empty()) {
    cfg = temp_path("cfg") + ".json";
    std::ofstream(cfg) << c.config;
    args.push_back("--config");
    args.push_back(cfg);
  }
  Child efu(args);
  const auto code = efu.wait(10s);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 2) << efu.err();
  const std::string err = efu.err();
  const auto line_start = err.find("efu: error: ");
  ASSERT_NE(line_start, std::string::npos) << err;
  const std::string line = err.substr(line_start, err.find('\n', line_start) - line_start);
  EXPECT_NE(line.find(c.expected), std::string::npos) << line;
  if (!cfg.empty()) std::remove(cfg.c_str());
}

INSTANTIATE_TEST_SUITE_P(
    Lifecycle, BadConfig,
    ::testing::Values(
        BadCase{"unknown_option", {"--no-such-option", "1"}, "", "--no-such-option"},
        BadCase{"bad_port", {"--port", "70000"}, "", "--port: 70000 is out of range"},
        BadCase{"bad_int", {"--batch-size", "many"}, "", "--batch-size: 'many' is not valid"},
        BadCase{"negative_batch_bytes", {"--batch-bytes", "-1"}, "",
                "--batch-bytes: -1 is out of range"},
        BadCase{"bad_core", {"--cpu", "rx=999"}, "", "--cpu: core 999 is not available"},
        BadCase{"bad_level", {"--log-level", "loud"}, "", "--log-level: 'loud'"},
        BadCase{"plugin_refuses", {"--counting-fail", "1"}, "", "--counting-fail: 1"},
        BadCase{"json_malformed", {}, "{\"port\": ", "is not valid JSON"},
        BadCase{"json_number_overflow", {}, "{\"port\": 4444444444444444e4444}",
                "is not usable JSON"},
        BadCase{"json_unknown_key", {}, "{\"bacth-size\": 3}", "unknown key 'bacth-size'"},
        BadCase{"json_wrong_type",
                {},
                "{\"stop-after\": \"soon\"}",
                "key 'stop-after' is a string; expected a number"},
        BadCase{"json_plugin_type",
                {},
                "{\"counting-emit\": 3}",
                "key 'counting-emit' is an integer; expected true or false"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(Lifecycle, AbiMismatchExitsTwoNamingBothVersions) {
  Child efu({kEfu, "--module", kPlugins + "/efu_badabi.so", "--broker", "none"});
  ASSERT_EQ(efu.wait(10s), 2);
  EXPECT_NE(efu.err().find("was built for plugin ABI"), std::string::npos) << efu.err();
}

TEST(Lifecycle, MissingPluginExitsTwo) {
  Child efu({kEfu, "--module", "no_such_plugin", "--broker", "none"});
  ASSERT_EQ(efu.wait(10s), 2);
  EXPECT_NE(efu.err().find("no plugin 'no_such_plugin'"), std::string::npos) << efu.err();
}

TEST(Lifecycle, PortInUseExitsTwo) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  Child efu(efu_args(ntohs(a.sin_port), {}));
  ASSERT_EQ(efu.wait(10s), 2);
  EXPECT_NE(efu.err().find("Address already in use"), std::string::npos) << efu.err();
  close(fd);
}

TEST(Lifecycle, RuntDatagramsNeverCrashTheHost) {
  const int port = free_udp_port();
  const std::string stats = temp_path("runt") + ".json";
  Child efu(efu_args(port, {"--stats-json", stats, "--max-datagram", "1000"}));
  ASSERT_TRUE(efu.wait_for_stderr("running", 10s)) << efu.err();
  for (std::size_t size : {0, 1, 2, 7, 8, 999, 1000, 1001, 9000}) send_sequence(port, 0, 3, size);
  std::this_thread::sleep_for(200ms);
  efu.signal(SIGTERM);
  ASSERT_EQ(efu.wait(30s), 0) << efu.err();
  const nlohmann::json j = read_json(stats);
  EXPECT_EQ(j.at("receive.dropped.empty"), 3u);
  EXPECT_EQ(j.at("receive.truncated"), 6u);
  EXPECT_EQ(j.at("counting.packets"), 18u);
  std::remove(stats.c_str());
}

}  // namespace
}  // namespace efu::test
