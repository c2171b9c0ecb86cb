#include "efu/gen/result_files.h"

#include "efu/errors.h"

namespace efu::gen {

std::ofstream open_ground_truth(const std::string& path, const std::string& header) {
  std::ofstream out;
  if (path.empty()) return out;
  out.open(path);
  if (!out) throw ConfigError("--ground-truth: '" + path + "' cannot be written");
  out << header << '\n';
  return out;
}

SummaryJson& SummaryJson::raw(const std::string& key, const std::string& json) {
  body_ += (body_.empty() ? "\"" : ", \"") + key + "\": " + json;
  return *this;
}

SummaryJson& SummaryJson::number(const std::string& key, std::uint64_t value) {
  return raw(key, std::to_string(value));
}

SummaryJson& SummaryJson::flag(const std::string& key, bool value) {
  return raw(key, value ? "true" : "false");
}

SummaryJson& SummaryJson::text(const std::string& key, const std::string& value) {
  return raw(key, "\"" + value + "\"");
}

SummaryJson& SummaryJson::counts(const std::string& key,
                                 const std::map<std::string, std::uint64_t>& value) {
  std::string json = "{";
  for (const auto& [name, n] : value) {
    json += (json.size() == 1 ? "\"" : ", \"") + name + "\": " + std::to_string(n);
  }
  return raw(key, json + "}");
}

void SummaryJson::write(const std::string& path) const {
  if (path.empty()) return;
  std::ofstream out(path);
  out << '{' << body_ << "}\n";
}

}  // namespace efu::gen
