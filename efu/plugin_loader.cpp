#include "plugin_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "efu/errors.h"

#ifndef EFU_INSTALL_PLUGIN_DIR
#define EFU_INSTALL_PLUGIN_DIR "/usr/local/lib/efu/plugins"
#endif

namespace efu {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kFilePrefix = "efu_";
constexpr std::string_view kFileSuffix = ".so";

fs::path executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path(".") : exe.parent_path();
}

using EntryFn = const PluginDescriptor* (*)();

}  // namespace

std::vector<std::string> plugin_search_path() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("EFU_PLUGIN_PATH"); env != nullptr) {
    std::string_view rest = env;
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const std::string_view entry = rest.substr(0, colon);
      if (!entry.empty()) dirs.emplace_back(entry);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  const fs::path exe_dir = executable_dir();
  dirs.push_back((exe_dir / ".." / "plugins").lexically_normal().string());
  dirs.push_back((exe_dir / ".." / "lib" / "efu" / "plugins").lexically_normal().string());
  dirs.emplace_back(EFU_INSTALL_PLUGIN_DIR);
  std::vector<std::string> unique;
  for (const std::string& d : dirs) {
    if (std::find(unique.begin(), unique.end(), d) == unique.end()) unique.push_back(d);
  }
  return unique;
}

LoadedPlugin load_plugin(const std::string& name_or_path) {
  std::string path;
  const bool is_path = name_or_path.find('/') != std::string::npos ||
                       std::string_view(name_or_path).ends_with(kFileSuffix);
  if (is_path) {
    path = name_or_path;
    if (!fs::exists(path)) {
      throw ConfigError("--module: '" + path + "' does not exist; expected a plugin .so file");
    }
  } else {
    const std::string file = std::string(kFilePrefix) + name_or_path + std::string(kFileSuffix);
    std::string searched;
    for (const std::string& dir : plugin_search_path()) {
      const fs::path candidate = fs::path(dir) / file;
      if (fs::exists(candidate)) {
        path = candidate.string();
        break;
      }
      searched += (searched.empty() ? "" : ":") + dir;
    }
    if (path.empty()) {
      std::string known;
      for (const LoadedPlugin& p : list_plugins().plugins) {
        known += (known.empty() ? "" : ", ") + std::string(p.descriptor->name);
      }
      throw ConfigError("--module: no plugin '" + name_or_path + "' (" + file + ") in " + searched +
                        "; expected one of: " + (known.empty() ? "(none found)" : known) +
                        " (or set EFU_PLUGIN_PATH)");
    }
  }

  // RTLD_NOW: an unresolved symbol fails here, with its name, not later mid-run.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    throw ConfigError("--module: cannot load '" + path + "': " + (err ? err : "unknown error"));
  }
  dlerror();
  auto entry = reinterpret_cast<EntryFn>(dlsym(handle, EFU_PLUGIN_ENTRY_SYMBOL));
  if (entry == nullptr) {
    // Copy the message first: dlclose() frees the string dlerror() returned.
    const char* err = dlerror();
    const std::string reason = err ? err : "not found";
    dlclose(handle);
    throw ConfigError("--module: '" + path + "' is not an efu plugin: no symbol " +
                      EFU_PLUGIN_ENTRY_SYMBOL + " (" + reason + ")");
  }
  const PluginDescriptor* d = entry();
  if (d == nullptr) {
    dlclose(handle);
    throw ConfigError("--module: '" + path + "': " + EFU_PLUGIN_ENTRY_SYMBOL +
                      "() returned no descriptor; expected a PluginDescriptor");
  }
  if (d->abi_version != kPluginAbiVersion) {
    const std::uint32_t theirs = d->abi_version;
    dlclose(handle);
    throw ConfigError("--module: '" + path + "' was built for plugin ABI " +
                      std::to_string(theirs) + ", this efu has plugin ABI " +
                      std::to_string(kPluginAbiVersion) + "; expected a plugin rebuilt against " +
                      "this efu's headers");
  }
  if (d->name == nullptr || d->version == nullptr || d->create == nullptr ||
      (d->option_count != 0 && d->options == nullptr)) {
    dlclose(handle);
    throw ConfigError("--module: '" + path +
                      "' has an incomplete descriptor; expected name, version and create");
  }
  return LoadedPlugin{path, d};
}

PluginListing list_plugins() {
  PluginListing listing;
  for (const std::string& dir : plugin_search_path()) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (std::string_view(name).starts_with(kFilePrefix) &&
          std::string_view(name).ends_with(kFileSuffix)) {
        files.push_back(e.path());
      }
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      try {
        LoadedPlugin p = load_plugin(f.string());
        const bool shadowed =
            std::any_of(listing.plugins.begin(), listing.plugins.end(), [&](const LoadedPlugin& q) {
              return std::string_view(q.descriptor->name) == p.descriptor->name;
            });
        if (!shadowed) listing.plugins.push_back(p);
      } catch (const ConfigError& e) {
        listing.failures.emplace_back(e.what());
      }
    }
  }
  return listing;
}

}  // namespace efu
