#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "efu/errors.h"
#include "startup/plugin_loader.h"

namespace efu {
namespace {

const std::string kDir = EFU_TEST_PLUGIN_DIR;

std::string load_error(const std::string& what) {
  try {
    load_plugin(what);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(PluginLoader, LoadsATestPluginByPath) {
  const LoadedPlugin p = load_plugin(kDir + "/efu_counting.so");
  ASSERT_NE(p.descriptor, nullptr);
  EXPECT_STREQ(p.descriptor->name, "counting");
  EXPECT_EQ(p.descriptor->abi_version, kPluginAbiVersion);
  EXPECT_EQ(p.descriptor->option_count, 3u);
}

TEST(PluginLoader, FindsPluginByNameOnEfuPluginPath) {
  setenv("EFU_PLUGIN_PATH", ("/nonexistent:" + kDir).c_str(), 1);
  const LoadedPlugin p = load_plugin("counting");
  EXPECT_EQ(p.path, kDir + "/efu_counting.so");
  const PluginListing listing = list_plugins();
  bool found = false;
  for (const LoadedPlugin& q : listing.plugins)
    found |= std::string(q.descriptor->name) == "counting";
  EXPECT_TRUE(found);
  // The broken test plugins in the same folder are reported, not fatal.
  EXPECT_GE(listing.failures.size(), 2u);
  unsetenv("EFU_PLUGIN_PATH");
}

TEST(PluginLoader, RejectsAbiMismatchNamingBothVersions) {
  const std::string err = load_error(kDir + "/efu_badabi.so");
  EXPECT_NE(err.find("plugin ABI " + std::to_string(kPluginAbiVersion + 41)), std::string::npos)
      << err;
  EXPECT_NE(err.find("this efu has plugin ABI " + std::to_string(kPluginAbiVersion)),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("efu_badabi.so"), std::string::npos) << err;
}

TEST(PluginLoader, RejectsSharedObjectWithoutEntrySymbol) {
  const std::string err = load_error(kDir + "/efu_noentry.so");
  EXPECT_NE(err.find("is not an efu plugin: no symbol efu_plugin_entry"), std::string::npos) << err;
}

TEST(PluginLoader, RejectsGarbageFileWithDlerrorText) {
  const std::string path = ::testing::TempDir() + "efu_garbage.so";
  std::ofstream(path) << "this is not an ELF file";
  const std::string err = load_error(path);
  EXPECT_NE(err.find("cannot load '" + path + "'"), std::string::npos) << err;
  // dlerror() names the reason, e.g. "invalid ELF header" or "file too short".
  EXPECT_TRUE(err.find("ELF") != std::string::npos || err.find("too short") != std::string::npos)
      << err;
}

TEST(PluginLoader, MissingPluginNameListsSearchPath) {
  const std::string err = load_error("no_such_detector");
  EXPECT_NE(err.find("no plugin 'no_such_detector' (efu_no_such_detector.so)"), std::string::npos)
      << err;
  EXPECT_NE(load_error("/does/not/exist.so").find("does not exist"), std::string::npos);
}

}  // namespace
}  // namespace efu
