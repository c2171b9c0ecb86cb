// The facility files of a detector plugin: `--geometry` and `--calibration` mean the same in
// every family (docs/plugins.md "Geometry and calibration files"), and a plugin's shipped
// configs are found the same way, in the source tree of a build or where they are installed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "efu/options.h"

namespace efu {

/// The option names of the instrument config and the calibration file, in every family.
inline constexpr std::string_view kGeometryOption = "geometry";
inline constexpr std::string_view kCalibrationOption = "calibration";

/// Where a plugin's shipped config files are. efu_add_plugin(<name> ... CONFIGS <dir>) gives the
/// plugin's sources both folders as EFU_PLUGIN_CONFIGS_SOURCE and EFU_PLUGIN_CONFIGS_INSTALLED:
///   constexpr efu::ShippedFiles kShipped{EFU_PLUGIN_CONFIGS_SOURCE, EFU_PLUGIN_CONFIGS_INSTALLED};
struct ShippedFiles {
  const char* source_dir;     // <source>/modules/<name>/<dir>: used while it exists (a build)
  const char* installed_dir;  // <prefix>/share/efu/<name>

  /// The shipped file `name`: the source tree's copy if it exists, else the installed one (whose
  /// absence the loader reports, naming that path).
  std::string path(std::string_view name) const;
};

/// --geometry FILE: the facility's instrument config; empty: the plugin's shipped
/// `default_file`.
std::string geometry_file(const OptionValues& options, const ShippedFiles& shipped,
                          std::string_view default_file);

/// --calibration FILE|off, as every family reads it.
struct CalibrationFile {
  enum class Kind : std::uint8_t {
    kFile,     // a file: `path`
    kDefault,  // empty: the shipped calibration of the instrument if the plugin has one, else none
    kNone,     // off: no calibration
  };
  Kind kind = Kind::kDefault;
  std::string path;
};
CalibrationFile calibration_file(const OptionValues& options);

}  // namespace efu
