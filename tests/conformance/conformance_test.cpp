// Plugin conformance: every plugin efu ships (udp, multiblade, caen, cdt, nmx, trex, cbm) and the
// SDK's example plugin (tests/sdk/example_plugin, built here in tree) against the contract of
// docs/plugins.md:
// - the descriptor: this efu's ABI, its name, a version and a summary, options with unique,
//   well-formed names that the host does not have, valid defaults and help, init and release
//   both or neither;
// - `efu --module X --help` lists every option of the plugin;
// - a bad option value stops efu with exit code 2 and one line naming the option and the value;
// - every counter the plugin registers is documented (docs/<plugin>.md, plugins.md or
//   operations.md);
// - a plugin with init() reads its files once, however many processing threads there are.
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "efu/errors.h"
#include "startup/host_options.h"
#include "startup/plugin_loader.h"
#include "subprocess.h"

namespace efu {
namespace {

namespace fs = std::filesystem;

const std::string kSource = EFU_SOURCE_DIR;
const std::string kPlugins = EFU_PLUGIN_BUILD_DIR;  // udp, multiblade, caen, cdt, nmx, trex, cbm
const std::string kExample = EFU_TEST_PLUGIN_DIR;   // the SDK example, built in tree
const std::string kEfu = EFU_BIN;

struct Case {
  std::string name;
  std::string dir;
  std::vector<std::string> docs;  // where its own counters are documented
  std::vector<std::string> bad;   // a bad option value ...
  std::string bad_line;           // ... and the line efu must stop with
  // Files the plugin reads at start (option, the repository's copy): with init() each is read
  // once, whatever the thread count.
  std::vector<std::pair<std::string, std::string>> files;
};

std::string print_case(const ::testing::TestParamInfo<Case>& info) { return info.param.name; }
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

const std::vector<Case>& cases() {
  static const std::vector<Case> all{
      {"udp",
       kPlugins,
       {"docs/udp-link-test.md"},
       {"--max-flows", "0"},
       "--max-flows: 0 is out of range; expected 1..1024",
       {}},
      {"multiblade",
       kPlugins,
       {"docs/multiblade.md"},
       {"--max-wire-span", "33"},
       "--max-wire-span: 33 is out of range; expected 1..32",
       {{"geometry", "modules/multiblade/configs/estia.json"}}},
      {"caen",
       kPlugins,
       {"docs/caen.md"},
       {"--calibration", "off"},
       "--calibration: 'off' leaves caen without a calibration",
       {{"geometry", "modules/caen/configs/bifrost.json"},
        {"calibration", "modules/caen/configs/bifrost_calibration.json"}}},
      {"cdt",
       kPlugins,
       {"docs/cdt.md"},
       {"--max-tof-ns", "0"},
       "--max-tof-ns: 0 is out of range; expected 1..2147483647",
       {{"geometry", "modules/cdt/configs/MagicInst.json"}}},
      {"nmx",
       kPlugins,
       {"docs/nmx.md"},
       {"--max-tof-ns", "0"},
       "--max-tof-ns: 0 is out of range; expected 1..2147483647",
       {{"geometry", "modules/nmx/configs/nmx.json"}}},
      {"trex",
       kPlugins,
       {"docs/trex.md"},
       {"--max-grid-span", "0"},
       "--max-grid-span: 0 is out of range; expected 1..65535",
       {{"geometry", "modules/trex/configs/let.json"}}},
      {"cbm",
       kPlugins,
       {"docs/cbm.md"},
       {"--geometry", "/nonexistent/cbm.json"},
       "cbm config '/nonexistent/cbm.json': cannot be read; expected a readable JSON file",
       {{"geometry", "modules/cbm/configs/cbm.json"}}},
      {"example",
       kExample,
       {"docs/plugins.md"},
       {"--example-config", "/nonexistent/x.json"},
       "example config '/nonexistent/x.json'",
       {}},
  };
  return all;
}

std::string path_of(const Case& c) { return c.dir + "/efu_" + c.name + ".so"; }

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class NullSink final : public EventSink {
 public:
  void add(std::uint64_t, std::uint32_t, std::uint32_t) override {}
};

// The options efu would parse from `args` (after the program name) for this plugin.
OptionValues parse(const PluginDescriptor& d, std::vector<std::string> args) {
  args.insert(args.begin(), "efu");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  return parse_options(static_cast<int>(argv.size()), argv.data(), &d, "");
}

class Conformance : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { plugin_ = load_plugin(path_of(GetParam())); }
  const PluginDescriptor& d() const { return *plugin_.descriptor; }
  LoadedPlugin plugin_;
};

TEST_P(Conformance, Descriptor) {
  EXPECT_EQ(d().abi_version, kPluginAbiVersion);
  EXPECT_EQ(std::string(d().name), GetParam().name);
  EXPECT_NE(std::string(d().version), "");
  ASSERT_NE(d().summary, nullptr);
  EXPECT_NE(std::string(d().summary), "");
  EXPECT_EQ(d().init == nullptr, d().release == nullptr);
  std::set<std::string> host;
  for (const OptionSpec& s : host_options()) host.insert(s.name);
  std::set<std::string> seen;
  const std::regex well_formed("[a-z][a-z0-9]*(-[a-z0-9]+)*");
  for (std::size_t i = 0; i < d().option_count; ++i) {
    const OptionSpec& o = d().options[i];
    EXPECT_TRUE(std::regex_match(o.name, well_formed)) << o.name;
    EXPECT_TRUE(seen.insert(o.name).second) << o.name << " declared twice";
    EXPECT_EQ(host.count(o.name), 0U) << o.name << " is a host option";
    EXPECT_EQ(check_option_value(o.type, o.default_value), "") << o.name << " default";
    EXPECT_NE(std::string(o.help), "") << o.name;
  }
}

TEST_P(Conformance, HelpListsEveryOption) {
  test::Child efu({kEfu, "--module", path_of(GetParam()), "--help"});
  ASSERT_EQ(efu.wait(std::chrono::seconds(30)), 0) << efu.err();
  const std::string help = efu.out();
  for (std::size_t i = 0; i < d().option_count; ++i) {
    const std::string option = std::string("\n  --") + d().options[i].name + " ";
    EXPECT_NE(help.find(option), std::string::npos) << option << " not in:\n" << help;
  }
}

TEST_P(Conformance, ABadValueStopsEfuWithOneLineAndExitCode2) {
  std::vector<std::string> args{kEfu,        "--module", path_of(GetParam()),
                                "--broker",  "none",     "--bind",
                                "127.0.0.1", "--port",   "0"};
  args.insert(args.end(), GetParam().bad.begin(), GetParam().bad.end());
  test::Child efu(args);
  ASSERT_EQ(efu.wait(std::chrono::seconds(30)), 2) << efu.err();
  std::vector<std::string> errors;
  std::istringstream lines(efu.err());
  for (std::string line; std::getline(lines, line);) {
    if (line.find("error") != std::string::npos) errors.push_back(line);
  }
  ASSERT_EQ(errors.size(), 1U) << efu.err();
  EXPECT_NE(errors[0].find(GetParam().bad_line), std::string::npos) << errors[0];
}

// Whether `name` is documented in `text`: the name itself (a numbered instance such as
// udp.flow.3.lost as udp.flow.N.lost), or a family written once, as `parent.*` or
// `parent.<what>` with the last part listed in backquotes, or as a list that continues
// `parent.first`, `second` (or `parent.first`/`_second`). A numbered family written as
// `udp.flow.N.*` is documented with its sums (udp.flow.N.bytes with udp.bytes).
bool documented(const std::string& name, const std::string& text) {
  const std::string numbered = std::regex_replace(name, std::regex("\\.[0-9]+\\."), ".N.");
  if (text.find(numbered) != std::string::npos) return true;
  std::smatch per;
  if (std::regex_match(numbered, per, std::regex("(.*)(\\.[a-z_]+\\.N\\.)(.*)")) &&
      text.find("`" + per.str(1) + per.str(2) + "*`") != std::string::npos) {
    return documented(per.str(1) + "." + per.str(3), text);
  }
  for (std::size_t dot = numbered.rfind('.'); dot != std::string::npos && dot > 0;
       dot = numbered.rfind('.', dot - 1)) {
    const std::string parent = numbered.substr(0, dot + 1);
    const std::string rest = numbered.substr(dot + 1);
    const bool family = text.find(parent + "*") != std::string::npos ||
                        text.find(parent + "<") != std::string::npos ||
                        text.find("`" + parent) != std::string::npos;
    if (!family) continue;
    const std::string leaf = rest.substr(rest.rfind('.') + 1);
    const std::string suffix = leaf.substr(std::min(leaf.find('_'), leaf.size()));
    if (text.find("`" + rest + "`") != std::string::npos ||
        text.find("`" + leaf + "`") != std::string::npos ||
        text.find("`." + leaf + "`") != std::string::npos ||
        (!suffix.empty() && text.find("`" + suffix + "`") != std::string::npos)) {
      return true;
    }
  }
  return false;
}

TEST_P(Conformance, EveryCounterIsDocumented) {
  std::string docs =
      read_file(kSource + "/docs/plugins.md") + read_file(kSource + "/docs/operations.md");
  for (const std::string& doc : GetParam().docs) docs += read_file(kSource + "/" + doc);
  std::vector<std::string> args;
  for (const auto& [option, file] : GetParam().files) {
    args.insert(args.end(), {"--" + option, kSource + "/" + file});
  }
  const OptionValues options = parse(d(), args);
  CounterRegistry counters;
  NullSink sinks[2];
  const PluginInstance instance(d(), options, counters, 2,
                                [&](unsigned i) -> EventSink& { return sinks[i]; });
  const std::vector<CounterSample> registered = counters.sample();
  EXPECT_FALSE(registered.empty());
  for (const CounterSample& c : registered) {
    EXPECT_TRUE(documented(c.name, docs)) << c.name << " is in none of the plugin's documents";
  }
}

// IN_OPEN events of the watched files, read without waiting: inotify queues each event when
// the open happens, so they are all there once the opens have returned.
std::size_t opens(int fd) {
  alignas(inotify_event) char buffer[4096];
  std::size_t count = 0;
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) return count;
    for (ssize_t at = 0; at < n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(buffer + at);
      if ((e->mask & IN_OPEN) != 0) ++count;
      at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
    }
  }
}

// The plugins that read files of their own.
std::vector<Case> cases_with_files() {
  std::vector<Case> with;
  std::copy_if(cases().begin(), cases().end(), std::back_inserter(with),
               [](const Case& c) { return !c.files.empty(); });
  return with;
}

using LoadsOnce = Conformance;

TEST_P(LoadsOnce, InitReadsTheFilesOnceForEveryThread) {
  ASSERT_NE(d().init, nullptr) << "reads files but has no init(): once per thread";
  // Copies of the files, so that no other process opening the repository's copies counts.
  const fs::path dir = fs::path(::testing::TempDir()) / ("efu-once-" + GetParam().name);
  fs::create_directories(dir);
  const int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::vector<std::string> args;
  for (const auto& [option, file] : GetParam().files) {
    const fs::path copy = dir / fs::path(file).filename();
    fs::copy_file(kSource + "/" + file, copy, fs::copy_options::overwrite_existing);
    ASSERT_GE(inotify_add_watch(fd, copy.c_str(), IN_OPEN), 0) << copy;
    args.insert(args.end(), {"--" + option, copy.string()});
  }
  const OptionValues options = parse(d(), args);
  CounterRegistry counters;
  NullSink sinks[3];
  {
    const PluginInstance instance(d(), options, counters, 3,
                                  [&](unsigned i) -> EventSink& { return sinks[i]; });
    EXPECT_EQ(instance.instances(), 3U);
    EXPECT_NE(instance.shared(), nullptr);
  }
  EXPECT_EQ(opens(fd), GetParam().files.size()) << "each file opened once for 3 pipelines";
  close(fd);
}

INSTANTIATE_TEST_SUITE_P(Plugins, Conformance, ::testing::ValuesIn(cases()), print_case);
INSTANTIATE_TEST_SUITE_P(Plugins, LoadsOnce, ::testing::ValuesIn(cases_with_files()), print_case);

TEST(ConformanceDocs, TheFamilyMatcherNeedsTheName) {
  EXPECT_TRUE(documented("a.b.c", "the counter a.b.c"));
  EXPECT_TRUE(documented("udp.flow.7.lost", "`udp.flow.N.lost`"));
  EXPECT_TRUE(documented("x.errors.pad", "`x.errors.<reason>`: `pad`, `len`"));
  EXPECT_TRUE(documented("x.rejected.strip_gap", "`x.rejected.wire_gap`, `strip_gap`"));
  EXPECT_TRUE(documented("cal.clamp_high", "`cal.clamp_low`/`_high`"));
  EXPECT_TRUE(documented("u.flow.2.bytes", "`u.flow.N.*` each, `u.bytes` in all"));
  EXPECT_FALSE(documented("u.flow.2.bytes", "`u.flow.N.*` each, `u.packets` in all"));
  EXPECT_FALSE(documented("x.errors.pad", "`x.errors.<reason>`: `len`"));
  EXPECT_FALSE(documented("a.b.c", "nothing about it"));
}

}  // namespace
}  // namespace efu
