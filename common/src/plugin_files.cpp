#include "efu/plugin_files.h"

#include <filesystem>

namespace efu {

std::string ShippedFiles::path(std::string_view name) const {
  const std::filesystem::path source = std::filesystem::path(source_dir) / name;
  if (std::filesystem::exists(source)) return source.string();
  return (std::filesystem::path(installed_dir) / name).string();
}

std::string geometry_file(const OptionValues& options, const ShippedFiles& shipped,
                          std::string_view default_file) {
  const std::string& given = options.get_string(kGeometryOption);
  return given.empty() ? shipped.path(default_file) : given;
}

CalibrationFile calibration_file(const OptionValues& options) {
  const std::string& given = options.get_string(kCalibrationOption);
  if (given.empty()) return CalibrationFile{CalibrationFile::Kind::kDefault, {}};
  if (given == "off") return CalibrationFile{CalibrationFile::Kind::kNone, {}};
  return CalibrationFile{CalibrationFile::Kind::kFile, given};
}

}  // namespace efu
