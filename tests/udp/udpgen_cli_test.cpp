// efu-udpgen rejects bad input with one line naming the value, and exit code 2.
#include <string>

#include <gtest/gtest.h>

#include "run_command.h"

namespace efu::udp::test {
namespace {

struct BadArgs {
  const char* args;
  const char* must_mention;  // the option or value the message has to name
};

class UdpgenBadArgs : public ::testing::TestWithParam<BadArgs> {};

TEST_P(UdpgenBadArgs, ExitsWithCode2AndAOneLineError) {
  const CommandResult r = run_command(udpgen_path() + " " + GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(GetParam().must_mention), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("efu-udpgen: "), 0U) << r.output;
  // One line: the only newline ends it.
  EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << r.output;
  EXPECT_EQ(r.output.find("sent packets="), std::string::npos) << "nothing may be sent";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, UdpgenBadArgs,
    ::testing::Values(
        BadArgs{"--host no-such-host.invalid --count 1", "no-such-host.invalid"},
        BadArgs{"--size 0 --count 1", "--size"}, BadArgs{"--size 65508 --count 1", "65508"},
        BadArgs{"--size 7 --count 1", "efu64"},
        BadArgs{"--size 3 --udptx-format --count 1", "udptx32"},
        BadArgs{"--rate-gbps 101 --count 1", "--rate-gbps"},
        BadArgs{"--rate-gbps 0 --count 1", "--rate-gbps"},
        BadArgs{"--size 8 --rate-gbps 80 --count 1", "one per ns"},
        BadArgs{"--rate-pps 2e9 --count 1", "--rate-pps"},
        BadArgs{"--rate-pps 1000 --rate-gbps 1 --count 1", "both"}, BadArgs{"--count 0", "--count"},
        BadArgs{"--duration -1", "--duration"}, BadArgs{"--batch 0 --count 1", "--batch"},
        BadArgs{"--batch 5000 --count 1", "--batch"},
        BadArgs{"--skip-every 1 --count 1", "--skip-every"},
        BadArgs{"--port 70000 --count 1", "--port"}, BadArgs{"--cpu 100000 --count 1", "--cpu"},
        BadArgs{"--no-such-option", "--no-such-option"}));

TEST(UdpgenHelp, HelpListsEveryOptionAndExitsZero) {
  const CommandResult r = run_command(udpgen_path() + " --help");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* option : {"--host", "--port", "--size", "--count", "--duration", "--rate-gbps",
                             "--rate-pps", "--batch", "--gso", "--sndbuf", "--cpu", "--skip-every",
                             "--udptx-format", "--stats-interval"}) {
    EXPECT_NE(r.output.find(option), std::string::npos) << option;
  }
}

}  // namespace
}  // namespace efu::udp::test
