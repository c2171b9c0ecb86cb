// The files a detector generator writes for a test to check efu against: the ground truth (one
// line per neutron, after a "# field ..." header line) and the summary JSON of what was sent.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <string>

namespace efu::gen {

/// The --ground-truth file, opened and headed with `header` (a "# ..." line without the newline).
/// With an empty path, a stream that was never opened. Throws ConfigError if it cannot be written.
std::ofstream open_ground_truth(const std::string& path, const std::string& header);

/// One JSON object on one line, keys in the order added:
///   {"packets": 12, "exact_truth": true, "faults": {"cookie": 1}}
class SummaryJson {
 public:
  SummaryJson& number(const std::string& key, std::uint64_t value);
  SummaryJson& flag(const std::string& key, bool value);
  /// `value` is a plain name (no quotes or backslashes to escape).
  SummaryJson& text(const std::string& key, const std::string& value);
  SummaryJson& counts(const std::string& key, const std::map<std::string, std::uint64_t>& value);
  /// Writes the object and a newline to `path` (the --summary file); nothing if it is empty.
  void write(const std::string& path) const;

 private:
  SummaryJson& raw(const std::string& key, const std::string& json);
  std::string body_;
};

}  // namespace efu::gen
