// The host's declared options and the merge of command line, JSON config and plugin options.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "efu/options.h"
#include "efu/plugin.h"

namespace efu {

/// The host's own options, in the same table form as a plugin's. They are also the JSON config
/// keys. The table is the single source of --help and of the option list in README.md.
std::span<const OptionSpec> host_options();

/// What the command line asks for before any option is validated.
struct CommandLine {
  bool help = false;
  bool version = false;
  bool list_modules = false;
  std::string module;       // --module, or "module" from the config file
  std::string config_file;  // --config
};

/// Finds --help/--version/--list-modules/--module/--config without validating anything else,
/// so that the plugin can be loaded before its options are parsed. Reads "module" from the
/// config file if the command line has none. Throws ConfigError.
CommandLine scan_command_line(int argc, const char* const* argv);

/// Parses the whole command line against the host's and the plugin's options (plugin may be
/// null), then fills in keys from the JSON config file that the command line did not set.
/// Type-checks every value. Throws ConfigError with a one-line message naming the bad option,
/// value or config key.
OptionValues parse_options(int argc, const char* const* argv, const PluginDescriptor* plugin,
                           const std::string& config_file);

/// The --help text: the host's options, then the plugin's (if any).
std::string help_text(const PluginDescriptor* plugin);

}  // namespace efu
