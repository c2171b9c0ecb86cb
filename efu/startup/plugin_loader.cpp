#include "startup/plugin_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include <spdlog/spdlog.h>

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

namespace {

// The file `name_or_path` names: itself if it is a path, else efu_<name>.so on the search path.
std::string find_plugin_file(const std::string& name_or_path) {
  const bool is_path = name_or_path.find('/') != std::string::npos ||
                       std::string_view(name_or_path).ends_with(kFileSuffix);
  if (is_path) {
    if (!fs::exists(name_or_path)) {
      throw ConfigError("--module: '" + name_or_path +
                        "' does not exist; expected a plugin .so file");
    }
    return name_or_path;
  }
  const std::string file = std::string(kFilePrefix) + name_or_path + std::string(kFileSuffix);
  std::string searched;
  for (const std::string& dir : plugin_search_path()) {
    const fs::path candidate = fs::path(dir) / file;
    if (fs::exists(candidate)) return candidate.string();
    searched += (searched.empty() ? "" : ":") + dir;
  }
  std::string known;
  for (const LoadedPlugin& p : list_plugins().plugins) {
    known += (known.empty() ? "" : ", ") + std::string(p.descriptor->name);
  }
  throw ConfigError("--module: no plugin '" + name_or_path + "' (" + file + ") in " + searched +
                    "; expected one of: " + (known.empty() ? "(none found)" : known) +
                    " (or set EFU_PLUGIN_PATH)");
}

// The descriptor the entry symbol of the loaded `handle` returns.
const PluginDescriptor* entry_descriptor(void* handle, const std::string& path) {
  dlerror();
  auto entry = reinterpret_cast<EntryFn>(dlsym(handle, EFU_PLUGIN_ENTRY_SYMBOL));
  if (entry == nullptr) {
    // The message is copied here: dlclose() frees the string dlerror() returned.
    const char* err = dlerror();
    throw ConfigError("--module: '" + path + "' is not an efu plugin: no symbol " +
                      EFU_PLUGIN_ENTRY_SYMBOL + " (" + (err ? err : "not found") + ")");
  }
  const PluginDescriptor* d = entry();
  if (d == nullptr) {
    throw ConfigError("--module: '" + path + "': " + EFU_PLUGIN_ENTRY_SYMBOL +
                      "() returned no descriptor; expected a PluginDescriptor");
  }
  return d;
}

// The ABI first: a descriptor of another ABI may have another layout, so nothing else of it is
// read before that check.
void check_descriptor(const PluginDescriptor& d, const std::string& path) {
  if (d.abi_version != kPluginAbiVersion) {
    throw ConfigError("--module: '" + path + "' was built for plugin ABI " +
                      std::to_string(d.abi_version) + ", this efu has plugin ABI " +
                      std::to_string(kPluginAbiVersion) + "; expected a plugin rebuilt against " +
                      "this efu's headers");
  }
  if (d.name == nullptr || d.version == nullptr || d.create == nullptr ||
      (d.option_count != 0 && d.options == nullptr)) {
    throw ConfigError("--module: '" + path +
                      "' has an incomplete descriptor; expected name, version and create");
  }
  if ((d.init == nullptr) != (d.release == nullptr)) {
    throw ConfigError("--module: '" + path + "' has " +
                      (d.init ? "init but no release" : "release but no init") +
                      "; expected both or neither");
  }
}

}  // namespace

LoadedPlugin load_plugin(const std::string& name_or_path) {
  const std::string path = find_plugin_file(name_or_path);
  // RTLD_NOW: an unresolved symbol fails here, with its name, not later mid-run.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    throw ConfigError("--module: cannot load '" + path + "': " + (err ? err : "unknown error"));
  }
  try {
    const PluginDescriptor* d = entry_descriptor(handle, path);
    check_descriptor(*d, path);
    return LoadedPlugin{path, d};
  } catch (const ConfigError&) {
    dlclose(handle);
    throw;
  }
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

PluginInstance::PluginInstance(const PluginDescriptor& descriptor, const OptionValues& options,
                               CounterRegistry& counters, unsigned instances, const SinkOf& sink_of,
                               const SourcesOf& sources_of)
    : descriptor_(descriptor) {
  try {
    if (descriptor_.init != nullptr) shared_ = descriptor_.init(options);
    create_all(options, counters, instances, sink_of, sources_of);
  } catch (const ConfigError&) {
    destroy();
    throw;
  } catch (...) {
    const std::string why = current_exception_text();
    destroy();
    throw ConfigError(std::string("--module: plugin '") + descriptor_.name +
                      "' failed to start: " + why);
  }
}

PluginInstance::~PluginInstance() { destroy(); }

void PluginInstance::create_all(const OptionValues& options, CounterRegistry& counters,
                                unsigned instances, const SinkOf& sink_of,
                                const SourcesOf& sources_of) {
  contexts_.reserve(instances);  // a pipeline may keep a reference to its context
  pipelines_.reserve(instances);
  for (unsigned i = 0; i < instances; ++i) {
    SourceOutputs* sources = sources_of ? sources_of(i) : nullptr;
    contexts_.push_back(
        PipelineContext{options, counters, sink_of(i), i, instances, shared_, sources});
    pipelines_.emplace_back(descriptor_.create(contexts_.back()));
    if (!pipelines_.back()) {
      throw ConfigError(std::string("--module: plugin '") + descriptor_.name +
                        "' created no pipeline");
    }
  }
}

void PluginInstance::destroy() noexcept {
  // The pipelines first, in reverse order of creation: they may read the shared state until
  // they are gone. Then the state, once.
  while (!pipelines_.empty()) pipelines_.pop_back();
  if (shared_ != nullptr && descriptor_.release != nullptr) descriptor_.release(shared_);
  shared_ = nullptr;
}

std::string unrouted_warning(const PluginDescriptor& descriptor, unsigned threads) {
  if (descriptor.route_key != nullptr || threads < 2) return {};
  return std::string("plugin '") + descriptor.name + "' has no route_key: every packet goes to " +
         "processing thread 0 of the " + std::to_string(threads) +
         " (--processing-threads); run it with --processing-threads 1";
}

bool warn_if_unrouted(const PluginDescriptor& descriptor, unsigned threads) {
  const std::string warning = unrouted_warning(descriptor, threads);
  if (warning.empty()) return false;
  spdlog::warn("{}", warning);
  return true;
}

}  // namespace efu
