// Finding and loading detector pipeline plugins, and running one for a run: init() once, a
// pipeline per processing thread, release() at the end (docs/architecture.md §2.1, §2.2).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "efu/plugin.h"

namespace efu {

/// A loaded plugin. The shared object stays loaded for the life of the process: pipelines and
/// their vtables live in it, and unloading at exit only races with static destructors.
struct LoadedPlugin {
  std::string path;
  const PluginDescriptor* descriptor = nullptr;
};

/// Directories searched for efu_<name>.so, in order: each entry of $EFU_PLUGIN_PATH
/// (colon-separated), <dir of efu>/../plugins (the build tree), <dir of efu>/../lib/efu/plugins
/// and the configured install prefix.
std::vector<std::string> plugin_search_path();

/// Loads `name_or_path`: a path if it contains '/' or ends in ".so", else a name looked up on the
/// search path. Throws ConfigError naming the path and the reason (dlerror text, missing entry
/// symbol, both ABI versions, or what the descriptor lacks).
LoadedPlugin load_plugin(const std::string& name_or_path);

/// Every loadable plugin on the search path (first one wins for a name), and one line per file
/// that failed to load, for --list-modules.
struct PluginListing {
  std::vector<LoadedPlugin> plugins;
  std::vector<std::string> failures;
};
PluginListing list_plugins();

/// A plugin's pipelines for one run. The constructor runs the descriptor's init() once (the
/// state every pipeline shares read-only), then create() once per processing thread, in thread
/// order, each with that state as PipelineContext::shared; the destructor destroys the
/// pipelines and then release()s the state. Construct it on the main thread before the data
/// threads start, and destroy it after they have stopped. The contexts live here, so the
/// references they hold stay valid for as long as the pipelines.
class PluginInstance {
 public:
  using SinkOf = std::function<EventSink&(unsigned instance)>;
  /// The named sources of a thread (PipelineContext::sources); empty or null: none.
  using SourcesOf = std::function<SourceOutputs*(unsigned instance)>;

  /// Throws ConfigError: the plugin's own, as thrown; any other exception, or a null pipeline,
  /// as one line naming the plugin. What was made before the throw is destroyed and released.
  PluginInstance(const PluginDescriptor& descriptor, const OptionValues& options,
                 CounterRegistry& counters, unsigned instances, const SinkOf& sink_of,
                 const SourcesOf& sources_of = {});
  ~PluginInstance();
  PluginInstance(const PluginInstance&) = delete;
  PluginInstance& operator=(const PluginInstance&) = delete;

  /// The pipeline of processing thread `instance` (0 .. instances-1).
  Pipeline& pipeline(unsigned instance) const { return *pipelines_.at(instance); }
  unsigned instances() const noexcept { return static_cast<unsigned>(pipelines_.size()); }
  /// What init() returned (null without init).
  const void* shared() const noexcept { return shared_; }

 private:
  void create_all(const OptionValues& options, CounterRegistry& counters, unsigned instances,
                  const SinkOf& sink_of, const SourcesOf& sources_of);
  void destroy() noexcept;

  const PluginDescriptor& descriptor_;
  void* shared_ = nullptr;
  std::vector<PipelineContext> contexts_;  // reserved up front: never reallocated
  std::vector<std::unique_ptr<Pipeline>> pipelines_;
};

/// The start-up warning for a plugin without a route_key run on several processing threads
/// (every packet then goes to thread 0 and the others idle); empty when there is none.
std::string unrouted_warning(const PluginDescriptor& descriptor, unsigned threads);
/// Logs unrouted_warning() as one warning line, if there is one; true if it did.
bool warn_if_unrouted(const PluginDescriptor& descriptor, unsigned threads);

}  // namespace efu
