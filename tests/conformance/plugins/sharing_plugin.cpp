// Test plugin "sharing": a plugin with init() and release(), for the tests of the host's
// PluginInstance. It writes what the host calls, in order, to a log the test reads through
// sharing_test_log() (dlsym on the loaded plugin): "I" init, "C<i>" create of instance i,
// "D<i>" its pipeline destroyed, "R" release. Every pipeline checks that it got init()'s state.
// Options make init() or one create() fail on purpose. Built with EFU_TEST_NO_RELEASE, the
// descriptor has init but no release, which the loader must refuse.
#include <string>

#include "efu/plugin.h"

namespace {

std::string g_log;

void note(const std::string& event) { g_log += (g_log.empty() ? "" : " ") + event; }

struct State {
  int magic = 0x5ead;
};

class SharingPipeline final : public efu::Pipeline {
 public:
  explicit SharingPipeline(const efu::PipelineContext& ctx)
      : instance_(ctx.instance), pipelines_(ctx.counters.counter("sharing.pipelines")) {
    const State* state = efu::shared_state<State>(ctx);
    if (state == nullptr || state->magic != 0x5ead) {
      throw efu::ConfigError("--sharing-fail-init: create() got no state from init()");
    }
    pipelines_.add();
    note("C" + std::to_string(instance_));
  }
  ~SharingPipeline() override { note("D" + std::to_string(instance_)); }
  void process(efu::PacketBatch) override {}

 private:
  unsigned instance_;
  efu::Counter& pipelines_;
};

void* init(const efu::OptionValues& options) {
  g_log.clear();
  note("I");
  const std::int64_t fail = options.get_int("sharing-fail-init");
  if (fail == 1) throw efu::ConfigError("--sharing-fail-init: 1 asks init() to fail; expected 0");
  if (fail == 2) throw 42;  // not a std::exception: the host must still name the plugin
  return new State;
}

[[maybe_unused]] void release(void* shared) {
  note("R");
  delete static_cast<State*>(shared);
}

efu::Pipeline* create(const efu::PipelineContext& ctx) {
  if (static_cast<std::int64_t>(ctx.instance) == ctx.options.get_int("sharing-fail-at")) {
    throw efu::ConfigError("--sharing-fail-at: " + std::to_string(ctx.instance) +
                           " asks create() to fail there; expected -1");
  }
  return new SharingPipeline(ctx);
}

constexpr efu::OptionSpec kOptions[] = {
    {"sharing-fail-init", efu::OptionType::kInt, "0",
     "1: init() throws ConfigError; 2: it throws an int"},
    {"sharing-fail-at", efu::OptionType::kInt, "-1",
     "create() throws ConfigError for this processing thread (-1: never)"},
};

#ifdef EFU_TEST_NO_RELEASE
constexpr void (*kRelease)(void*) = nullptr;
#else
constexpr void (*kRelease)(void*) = &release;
#endif

constexpr efu::PluginDescriptor kDescriptor{efu::kPluginAbiVersion,
                                            "sharing",
                                            "1.0",
                                            "test plugin: state shared by its pipelines",
                                            kOptions,
                                            std::size(kOptions),
                                            create,
                                            nullptr,
                                            false,
                                            &init,
                                            kRelease};

}  // namespace

EFU_PLUGIN(kDescriptor)

/// What the host called, in order (see the top of this file).
extern "C" __attribute__((visibility("default"))) const char* sharing_test_log() {
  return g_log.c_str();
}
