#include "efu/options.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

#include "efu/errors.h"

namespace efu {
namespace {

bool parse_int(std::string_view text, std::int64_t& out) {
  if (text.empty()) return false;
  const char* begin = text.data();
  if (*begin == '+') ++begin;
  const auto [ptr, ec] = std::from_chars(begin, text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool parse_float(std::string_view text, double& out) {
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && std::isfinite(out);
}

bool parse_bool(std::string_view text, bool& out) {
  if (text == "on" || text == "true" || text == "1" || text == "yes") {
    out = true;
    return true;
  }
  if (text == "off" || text == "false" || text == "0" || text == "no") {
    out = false;
    return true;
  }
  return false;
}

}  // namespace

std::string check_option_value(OptionType type, std::string_view text) {
  std::int64_t i = 0;
  double d = 0;
  bool b = false;
  switch (type) {
    case OptionType::kInt:
      return parse_int(text, i) ? "" : "an integer";
    case OptionType::kFloat:
      return parse_float(text, d) ? "" : "a number";
    case OptionType::kBool:
      return parse_bool(text, b) ? "" : "on/off, true/false or 1/0";
    case OptionType::kString:
      return "";
  }
  return "a valid value";
}

void OptionValues::set(std::string_view name, std::string value, bool explicitly_set) {
  values_.insert_or_assign(std::string(name), Value{std::move(value), explicitly_set});
}

const OptionValues::Value& OptionValues::find(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) {
    throw std::logic_error("option '" + std::string(name) + "' was never declared");
  }
  return it->second;
}

std::int64_t OptionValues::get_int(std::string_view name) const {
  std::int64_t v = 0;
  if (!parse_int(find(name).text, v)) {
    throw ConfigError("--" + std::string(name) + ": '" + find(name).text +
                      "' is not valid; expected an integer");
  }
  return v;
}

double OptionValues::get_float(std::string_view name) const {
  double v = 0;
  if (!parse_float(find(name).text, v)) {
    throw ConfigError("--" + std::string(name) + ": '" + find(name).text +
                      "' is not valid; expected a number");
  }
  return v;
}

const std::string& OptionValues::get_string(std::string_view name) const {
  return find(name).text;
}

bool OptionValues::get_bool(std::string_view name) const {
  bool v = false;
  if (!parse_bool(find(name).text, v)) {
    throw ConfigError("--" + std::string(name) + ": '" + find(name).text +
                      "' is not valid; expected on/off, true/false or 1/0");
  }
  return v;
}

bool OptionValues::is_set(std::string_view name) const { return find(name).explicitly_set; }

bool OptionValues::has(std::string_view name) const { return values_.find(name) != values_.end(); }

}  // namespace efu
