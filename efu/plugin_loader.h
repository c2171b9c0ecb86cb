// Finding and loading detector pipeline plugins (design.md §2).
#pragma once

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
/// symbol, or both ABI versions).
LoadedPlugin load_plugin(const std::string& name_or_path);

/// Every loadable plugin on the search path (first one wins for a name), and one line per file
/// that failed to load, for --list-modules.
struct PluginListing {
  std::vector<LoadedPlugin> plugins;
  std::vector<std::string> failures;
};
PluginListing list_plugins();

}  // namespace efu
