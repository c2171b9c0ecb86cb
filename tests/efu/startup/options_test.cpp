#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "efu/errors.h"
#include "startup/host_options.h"
#include "startup/threads.h"

namespace efu {
namespace {

constexpr OptionSpec kPluginOptions[] = {
    {"threshold", OptionType::kInt, "10", "ADC threshold"},
    {"verify", OptionType::kBool, "off", "Verify"},
};
constexpr PluginDescriptor kPlugin{kPluginAbiVersion, "fake", "1",     "",
                                   kPluginOptions,    2,      nullptr, nullptr};

class Args {
 public:
  Args(std::initializer_list<std::string> args) : storage_(args) {
    storage_.insert(storage_.begin(), "efu");
    for (const std::string& s : storage_) ptrs_.push_back(s.c_str());
  }
  int argc() const { return static_cast<int>(ptrs_.size()); }
  const char* const* argv() const { return ptrs_.data(); }

 private:
  std::vector<std::string> storage_;
  std::vector<const char*> ptrs_;
};

std::string write_temp(const std::string& text) {
  char name[] = "/tmp/efu-options-XXXXXX";
  const int fd = mkstemp(name);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(name) << text;
  return name;
}

std::string error_of(const Args& a, const std::string& config = "") {
  try {
    parse_options(a.argc(), a.argv(), &kPlugin, config);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(HostOptions, DefaultsWhenNothingIsGiven) {
  const Args a{"--module", "fake"};
  const OptionValues v = parse_options(a.argc(), a.argv(), &kPlugin, "");
  EXPECT_EQ(v.get_int("port"), 9000);
  EXPECT_EQ(v.get_int("batch-size"), 64);
  EXPECT_EQ(v.get_int("threshold"), 10);
  EXPECT_FALSE(v.get_bool("verify"));
  EXPECT_FALSE(v.is_set("port"));
}

TEST(HostOptions, CommandLineWinsOverConfig) {
  const std::string cfg = write_temp(R"({"port": 9100, "threshold": 5, "broker": "none"})");
  const Args a{"--module", "fake", "--port", "9200"};
  const OptionValues v = parse_options(a.argc(), a.argv(), &kPlugin, cfg);
  EXPECT_EQ(v.get_int("port"), 9200);
  EXPECT_EQ(v.get_int("threshold"), 5);
  EXPECT_EQ(v.get_string("broker"), "none");
  EXPECT_TRUE(v.is_set("threshold"));
  std::remove(cfg.c_str());
}

TEST(HostOptions, UnknownCommandLineOptionNamesIt) {
  const std::string err = error_of(Args{"--module", "fake", "--frobnicate", "3"});
  EXPECT_NE(err.find("--frobnicate"), std::string::npos) << err;
}

TEST(HostOptions, BadIntegerNamesOptionAndExpectation) {
  const std::string err = error_of(Args{"--module", "fake", "--port", "ninety"});
  EXPECT_NE(err.find("--port"), std::string::npos) << err;
  EXPECT_NE(err.find("'ninety'"), std::string::npos) << err;
  EXPECT_NE(err.find("expected an integer"), std::string::npos) << err;
}

TEST(HostOptions, ConfigUnknownKeyIsNamed) {
  const std::string cfg = write_temp(R"({"prot": 9100})");
  const std::string err = error_of(Args{"--module", "fake"}, cfg);
  EXPECT_NE(err.find("unknown key 'prot'"), std::string::npos) << err;
  std::remove(cfg.c_str());
}

TEST(HostOptions, ConfigWrongTypeIsNamed) {
  const std::string cfg = write_temp(R"({"port": "9100"})");
  const std::string err = error_of(Args{"--module", "fake"}, cfg);
  EXPECT_NE(err.find("key 'port' is a string; expected an integer"), std::string::npos) << err;
  std::remove(cfg.c_str());
}

TEST(HostOptions, MalformedJsonIsReported) {
  const std::string cfg = write_temp(R"({"port": 9100,)");
  const std::string err = error_of(Args{"--module", "fake"}, cfg);
  EXPECT_NE(err.find("is not valid JSON"), std::string::npos) << err;
  std::remove(cfg.c_str());
}

TEST(HostOptions, ConfigMustBeAnObject) {
  const std::string cfg = write_temp(R"([1, 2])");
  const std::string err = error_of(Args{"--module", "fake"}, cfg);
  EXPECT_NE(err.find("expected a JSON object"), std::string::npos) << err;
  std::remove(cfg.c_str());
}

TEST(HostOptions, PluginOptionThatClashesWithHostIsRefused) {
  constexpr OptionSpec clash[] = {{"port", OptionType::kInt, "1", ""}};
  const PluginDescriptor bad{kPluginAbiVersion, "clash", "1", "", clash, 1, nullptr, nullptr};
  const Args a{"--module", "clash"};
  EXPECT_THROW(parse_options(a.argc(), a.argv(), &bad, ""), ConfigError);
}

TEST(HostOptions, ScanFindsModuleInConfig) {
  const std::string cfg = write_temp(R"({"module": "udp"})");
  const Args a{"--config", cfg};
  EXPECT_EQ(scan_command_line(a.argc(), a.argv()).module, "udp");
  std::remove(cfg.c_str());
}

TEST(HostOptions, HelpListsHostAndPluginOptions) {
  const std::string help = help_text(&kPlugin);
  EXPECT_NE(help.find("--stats-json"), std::string::npos);
  EXPECT_NE(help.find("--threshold"), std::string::npos);
  EXPECT_NE(help.find("Options of plugin 'fake'"), std::string::npos);
}

TEST(CpuPlan, ParsesRolesAndCoreLists) {
  const CpuPlan p = parse_cpu_plan("rx=0,proc=0,1");
  EXPECT_EQ(p.rx, (std::vector<int>{0}));
  EXPECT_EQ(p.proc, (std::vector<int>{0, 1}));
  const CpuPlan two = parse_cpu_plan("rx=1,0,proc=0");  // one core per receive thread
  EXPECT_EQ(two.rx, (std::vector<int>{1, 0}));
  EXPECT_EQ(two.proc, (std::vector<int>{0}));
}

TEST(CpuPlan, RejectsCoreThatDoesNotExist) {
  try {
    parse_cpu_plan("rx=4095");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("core 4095 is not available"), std::string::npos)
        << e.what();
  }
}

TEST(CpuPlan, RejectsUnknownRoleAndGarbage) {
  EXPECT_THROW(parse_cpu_plan("tx=0"), ConfigError);
  EXPECT_THROW(parse_cpu_plan("rx=a"), ConfigError);
  EXPECT_THROW(parse_cpu_plan("rx=0,proc"), ConfigError);
}

}  // namespace
}  // namespace efu
