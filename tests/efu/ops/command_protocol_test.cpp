// The command port protocol as a pure function: every reply byte for byte (docs/operations.md).
#include "ops/command_protocol.h"

#include <gtest/gtest.h>

namespace efu {
namespace {

StatsSnapshot snapshot_of(std::vector<RateSample> counters) {
  StatsSnapshot s{};
  s.counters = std::move(counters);
  return s;
}

BuildIdentity build() { return {"1.2.3", "2026-01-02", "03:04:05", "h:u", "6.1.0-x", "abc1234"}; }

class Protocol : public ::testing::Test {
 protected:
  Protocol() : protocol_(stats_, "efu.freia.0.", "multiblade", build()) {
    stats_.publish(snapshot_of({{"main.uptime", CounterKind::kGauge, 12, 0},
                                {"process.packets", CounterKind::kCounter, 41, 0},
                                {"receive.packets", CounterKind::kCounter, 42, 5.0}}));
  }
  std::string reply(std::string_view request) { return protocol_.handle(request).text; }
  RequestOutcome outcome(std::string_view request) { return protocol_.handle(request).outcome; }

  LatestStats stats_;
  CommandProtocol protocol_;
};

TEST_F(Protocol, StatCommands) {
  EXPECT_EQ(reply("STAT_GET_COUNT\n"), "STAT_GET_COUNT 3");
  EXPECT_EQ(reply("STAT_GET 1\n"), "STAT_GET efu.freia.0.main.uptime 12");
  EXPECT_EQ(reply("STAT_GET 3\n"), "STAT_GET efu.freia.0.receive.packets 42");
  EXPECT_EQ(reply("STAT_GET_NAME receive.packets\n"), "STAT_GET_NAME receive.packets 42");
  EXPECT_EQ(reply("STAT_GET_NAME efu.freia.0.receive.packets"),
            "STAT_GET_NAME efu.freia.0.receive.packets 42");
  EXPECT_EQ(reply("STAT_GET_NAME main.uptime"), "STAT_GET_NAME main.uptime 12");
}

TEST_F(Protocol, OutOfRangeAndUnknownAreTheReferenceReplies) {
  for (const char* r : {"STAT_GET 0", "STAT_GET 4", "STAT_GET -1", "STAT_GET +99",
                        "STAT_GET 99999999999999999999999"}) {
    EXPECT_EQ(reply(r), "STAT_GET  -1") << r;
    EXPECT_EQ(outcome(r), RequestOutcome::kOk) << r;
  }
  EXPECT_EQ(reply("STAT_GET_NAME no.such"), "STAT_GET_NAME no.such -1");
  EXPECT_EQ(reply("STAT_GET_NAME efu.freia.0."), "STAT_GET_NAME efu.freia.0. -1");
}

TEST_F(Protocol, IdentityAndCommandList) {
  EXPECT_EQ(reply("VERSION_GET"), "VERSION_GET 1.2.3 2026-01-02 03:04:05 [h:u] [6.1.0-x] abc1234");
  EXPECT_EQ(reply("DETECTOR_INFO_GET"), "DETECTOR_INFO_GET multiblade");
  EXPECT_EQ(reply("CMD_GET_COUNT"), "CMD_GET_COUNT 11");
  const char* expected[] = {"CALIB_MODE_GET",    "CALIB_MODE_SET", "CMD_GET",      "CMD_GET_COUNT",
                            "DETECTOR_INFO_GET", "EXIT",           "RUNTIMESTATS", "STAT_GET",
                            "STAT_GET_COUNT",    "STAT_GET_NAME",  "VERSION_GET"};
  for (int i = 1; i <= 11; ++i) {
    EXPECT_EQ(reply("CMD_GET " + std::to_string(i)), std::string("CMD_GET ") + expected[i - 1]);
  }
  EXPECT_EQ(reply("CALIB_MODE_GET"), "CALIB_MODE_GET 0");
  EXPECT_EQ(reply("CALIB_MODE_SET 0"), "<OK>");
}

TEST_F(Protocol, VersionWordsAreNeverEmptyOrSplit) {
  LatestStats stats;
  CommandProtocol p(stats, "x.", "my det", {"", "", "", "a b", "", ""});
  EXPECT_EQ(p.handle("VERSION_GET").text,
            "VERSION_GET unknown unknown unknown [a_b] [unknown] unknown");
  EXPECT_EQ(p.handle("DETECTOR_INFO_GET").text, "DETECTOR_INFO_GET my_det");
}

TEST_F(Protocol, RuntimeStatsMaskFollowsRates) {
  EXPECT_EQ(reply("RUNTIMESTATS"), "RUNTIMESTATS 1");  // receive.packets grew, process did not
  stats_.publish(snapshot_of({{"ev44.events", CounterKind::kCounter, 5, 1.0},
                              {"process.packets", CounterKind::kCounter, 41, 2.0},
                              {"receive.packets", CounterKind::kCounter, 42, 5.0}}));
  EXPECT_EQ(reply("RUNTIMESTATS"), "RUNTIMESTATS 7");
  stats_.publish(snapshot_of({{"receive.packets", CounterKind::kCounter, 42, 0}}));
  EXPECT_EQ(reply("RUNTIMESTATS"), "RUNTIMESTATS 0");
}

TEST_F(Protocol, ExitRepliesOkAndAsksToStop) {
  EXPECT_EQ(reply("EXIT\n"), "<OK>");
  EXPECT_EQ(outcome("EXIT\n"), RequestOutcome::kExit);
  EXPECT_EQ(outcome("EXIT now"), RequestOutcome::kBadArgs);
}

TEST_F(Protocol, MalformedRequests) {
  for (const char* r : {"STAT_GET", "STAT_GET x", "STAT_GET 1 2", "STAT_GET 1x", "STAT_GET_COUNT 1",
                        "CMD_GET 0", "CMD_GET 12", "CMD_GET", "CALIB_MODE_SET 1", "CALIB_MODE_SET",
                        "VERSION_GET now", "STAT_GET_NAME"}) {
    EXPECT_EQ(reply(r), "Error: <BADARGS>") << r;
    EXPECT_EQ(outcome(r), RequestOutcome::kBadArgs) << r;
  }
  for (std::string_view r :
       {std::string_view("stat_get_count"), std::string_view("FOO 1"), std::string_view(""),
        std::string_view(" \n\r\t"), std::string_view("\0\0", 2)}) {
    EXPECT_EQ(reply(r), "Error: <BADCMD>") << r;
    EXPECT_EQ(outcome(r), RequestOutcome::kBadCommand) << r;
  }
}

TEST_F(Protocol, SeparatorsAreSpacesTabsCrLfAndNul) {
  EXPECT_EQ(reply("STAT_GET\t2\r\n"), "STAT_GET efu.freia.0.process.packets 41");
  EXPECT_EQ(reply("  STAT_GET  \n 2 \n"), "STAT_GET efu.freia.0.process.packets 41");
  EXPECT_EQ(reply(std::string_view("STAT_GET_COUNT\0", 15)), "STAT_GET_COUNT 3");
}

TEST_F(Protocol, RequestSizeLimit) {
  std::string at_limit(CommandProtocol::kMaxRequestBytes, ' ');
  at_limit.replace(0, 14, "STAT_GET_COUNT");
  EXPECT_EQ(reply(at_limit), "STAT_GET_COUNT 3");
  at_limit += ' ';
  EXPECT_EQ(reply(at_limit), "Error: <BADSIZE>");
  EXPECT_EQ(outcome(at_limit), RequestOutcome::kTooLong);
}

TEST_F(Protocol, UnknownCommandsDoNotJoinTheCommandList) {
  EXPECT_EQ(reply("MADE_UP"), "Error: <BADCMD>");
  EXPECT_EQ(reply("CMD_GET_COUNT"), "CMD_GET_COUNT 11");  // the reference would now say 12
}

TEST_F(Protocol, RepliesFitTheScriptsReceiveBuffer) {
  // SocketDriver.py reads a reply with recv(2048).
  const std::string longest_name(CommandProtocol::kMaxRequestBytes - 14, 'a');
  EXPECT_LE(reply("STAT_GET_NAME " + longest_name).size(), 2048u);
}

TEST(ProtocolSeed, SeedServesUntilTheFirstPublish) {
  LatestStats stats;
  CommandProtocol p(stats, "e.", "d", build());
  EXPECT_EQ(p.handle("STAT_GET_COUNT").text, "STAT_GET_COUNT 0");
  stats.seed(snapshot_of({{"a", CounterKind::kCounter, 1, 0}}));
  EXPECT_EQ(p.handle("STAT_GET 1").text, "STAT_GET e.a 1");
  stats.publish(snapshot_of({{"a", CounterKind::kCounter, 2, 0}}));
  stats.seed(snapshot_of({{"a", CounterKind::kCounter, 1, 0}}));  // too late: ignored
  EXPECT_EQ(p.handle("STAT_GET 1").text, "STAT_GET e.a 2");
}

}  // namespace
}  // namespace efu
