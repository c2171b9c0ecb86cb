// The host's side of the plugin contract beyond loading (efu/startup/plugin_loader.h): PluginInstance
// runs init() once, create() per processing thread and release() after the last pipeline; the
// loader refuses init without release; the start-up warning for a plugin without route_key.
#include <dlfcn.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "efu/errors.h"
#include "startup/host_options.h"
#include "startup/plugin_loader.h"

namespace efu {
namespace {

const std::string kDir = EFU_TEST_PLUGIN_DIR;           // the sharing plugins (this folder)
const std::string kHostDir = EFU_TEST_HOST_PLUGIN_DIR;  // counting, counting_routed

std::string load_error(const std::string& what) {
  try {
    load_plugin(what);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(PluginLoader, RejectsInitWithoutRelease) {
  const std::string err = load_error(kDir + "/efu_sharing_norelease.so");
  EXPECT_NE(err.find("efu_sharing_norelease.so' has init but no release; expected both or neither"),
            std::string::npos)
      << err;
}

// The "sharing" test plugin's record of what the host called (plugins/sharing_plugin.cpp).
std::string sharing_log(const LoadedPlugin& plugin) {
  void* handle = dlopen(plugin.path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return "(not loaded)";
  using LogFn = const char* (*)();
  auto log = reinterpret_cast<LogFn>(dlsym(handle, "sharing_test_log"));
  const std::string text = log != nullptr ? log() : "(no sharing_test_log)";
  dlclose(handle);  // the reference RTLD_NOLOAD took; load_plugin's stays
  return text;
}

class NullSink final : public EventSink {
 public:
  void add(std::uint64_t, std::uint32_t, std::uint32_t) override {}
};

struct PluginRun {
  explicit PluginRun(const std::string& plugin, std::vector<std::string> args = {})
      : loaded(load_plugin((plugin == "sharing" ? kDir : kHostDir) + "/efu_" + plugin + ".so")) {
    args.insert(args.begin(), "efu");
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    options = parse_options(static_cast<int>(argv.size()), argv.data(), loaded.descriptor, "");
  }
  std::unique_ptr<PluginInstance> start(unsigned instances) {
    return std::make_unique<PluginInstance>(*loaded.descriptor, options, counters, instances,
                                            [this](unsigned i) -> EventSink& { return sinks[i]; });
  }
  std::string start_error(unsigned instances) {
    try {
      start(instances);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  }
  LoadedPlugin loaded;
  OptionValues options;
  CounterRegistry counters;
  NullSink sinks[4];
};

TEST(PluginInstance, InitOnceThenCreatePerThreadAndReleaseAfterTheLastPipeline) {
  PluginRun run("sharing");
  auto instance = run.start(3);
  EXPECT_EQ(sharing_log(run.loaded), "I C0 C1 C2");
  ASSERT_EQ(instance->instances(), 3U);
  EXPECT_NE(instance->shared(), nullptr);
  EXPECT_EQ(run.counters.value("sharing.pipelines"), 3U);  // each got init()'s state
  EXPECT_NE(&instance->pipeline(0), &instance->pipeline(2));
  instance.reset();
  EXPECT_EQ(sharing_log(run.loaded), "I C0 C1 C2 D2 D1 D0 R");
}

TEST(PluginInstance, AFailedCreateDestroysWhatWasMadeAndReleases) {
  PluginRun run("sharing", {"--sharing-fail-at", "1"});
  EXPECT_EQ(run.start_error(3), "--sharing-fail-at: 1 asks create() to fail there; expected -1");
  EXPECT_EQ(sharing_log(run.loaded), "I C0 D0 R");
}

TEST(PluginInstance, AFailedInitCreatesNothing) {
  PluginRun run("sharing", {"--sharing-fail-init", "1"});
  EXPECT_EQ(run.start_error(2), "--sharing-fail-init: 1 asks init() to fail; expected 0");
  EXPECT_EQ(sharing_log(run.loaded), "I");
  PluginRun other("sharing", {"--sharing-fail-init", "2"});
  EXPECT_EQ(other.start_error(2),
            "--module: plugin 'sharing' failed to start: an exception of unknown type");
}

TEST(PluginInstance, WithoutInitThePipelinesShareNothing) {
  PluginRun run("counting");
  auto instance = run.start(2);
  EXPECT_EQ(instance->shared(), nullptr);
  EXPECT_EQ(instance->instances(), 2U);
  PluginRun failing("counting", {"--counting-fail", "2"});
  EXPECT_NE(failing.start_error(1).find("--module: plugin 'counting' failed to start"),
            std::string::npos);
}

TEST(UnroutedWarning, OnlyForAPluginWithoutRouteKeyOnSeveralThreads) {
  const LoadedPlugin unrouted = load_plugin(kHostDir + "/efu_counting.so");
  const LoadedPlugin routed = load_plugin(kHostDir + "/efu_counting_routed.so");
  EXPECT_EQ(unrouted_warning(*unrouted.descriptor, 3),
            "plugin 'counting' has no route_key: every packet goes to processing thread 0 of the 3 "
            "(--processing-threads); run it with --processing-threads 1");
  EXPECT_EQ(unrouted_warning(*unrouted.descriptor, 1), "");
  EXPECT_EQ(unrouted_warning(*routed.descriptor, 3), "");

  std::ostringstream out;
  auto logger = std::make_shared<spdlog::logger>(
      "unrouted", std::make_shared<spdlog::sinks::ostream_sink_st>(out));
  logger->set_pattern("%l %v");
  const auto previous = spdlog::default_logger();
  spdlog::set_default_logger(logger);
  const bool warned = warn_if_unrouted(*unrouted.descriptor, 3);
  const bool quiet =
      !warn_if_unrouted(*routed.descriptor, 3) && !warn_if_unrouted(*unrouted.descriptor, 1);
  spdlog::set_default_logger(previous);
  EXPECT_TRUE(warned);
  EXPECT_TRUE(quiet);
  EXPECT_EQ(out.str(), "warning " + unrouted_warning(*unrouted.descriptor, 3) + "\n");
}

}  // namespace
}  // namespace efu
