// A family's plugin as efu loads it, dlopen()ed from the build's plugin folder
// ($EFU_BUILD_DIR/plugins/efu_<name>.so), for tests of its descriptor. Header-only.
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "efu/plugin.h"

namespace efu::test {

class BuiltPlugin {
 public:
  explicit BuiltPlugin(const std::string& name) {
    const char* build = std::getenv("EFU_BUILD_DIR");
    if (build == nullptr) {
      error_ = "EFU_BUILD_DIR is not set";
      return;
    }
    const std::string path = std::string(build) + "/plugins/efu_" + name + ".so";
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      error_ = dlerror();
      return;
    }
    using Entry = const PluginDescriptor* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle_, EFU_PLUGIN_ENTRY_SYMBOL));
    if (entry == nullptr) {
      error_ = path + " has no " EFU_PLUGIN_ENTRY_SYMBOL;
      return;
    }
    descriptor_ = entry();
  }
  ~BuiltPlugin() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  BuiltPlugin(const BuiltPlugin&) = delete;
  BuiltPlugin& operator=(const BuiltPlugin&) = delete;

  /// Null when loading failed; error() says why.
  const PluginDescriptor* descriptor() const noexcept { return descriptor_; }
  const std::string& error() const noexcept { return error_; }

 private:
  void* handle_ = nullptr;
  const PluginDescriptor* descriptor_ = nullptr;
  std::string error_;
};

}  // namespace efu::test
