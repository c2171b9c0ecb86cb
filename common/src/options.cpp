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

const std::string& OptionValues::get_string(std::string_view name) const { return find(name).text; }

bool OptionValues::get_bool(std::string_view name) const {
  bool v = false;
  if (!parse_bool(find(name).text, v)) {
    throw ConfigError("--" + std::string(name) + ": '" + find(name).text +
                      "' is not valid; expected on/off, true/false or 1/0");
  }
  return v;
}

std::int64_t OptionValues::get_int(std::string_view name, std::int64_t min,
                                   std::int64_t max) const {
  const std::int64_t v = get_int(name);
  if (v < min || v > max) {
    throw ConfigError("--" + std::string(name) + ": " + std::to_string(v) +
                      " is out of range; expected " + std::to_string(min) + ".." +
                      std::to_string(max));
  }
  return v;
}

double OptionValues::get_float(std::string_view name, double min, double max) const {
  const double v = get_float(name);
  if (v < min || v > max) {
    auto text = [](double x) {
      std::string t = std::to_string(x);
      while (t.size() > 1 && t.back() == '0') t.pop_back();  // 0.010000 -> 0.01
      if (!t.empty() && t.back() == '.') t.pop_back();
      return t;
    };
    throw ConfigError("--" + std::string(name) + ": " + get_string(name) +
                      " is out of range; expected " + text(min) + " to " + text(max));
  }
  return v;
}

std::size_t OptionValues::get_choice(std::string_view name,
                                     std::initializer_list<std::string_view> choices) const {
  const std::string& v = get_string(name);
  std::size_t i = 0;
  std::string expected;
  for (std::string_view c : choices) {
    if (v == c) return i;
    if (i != 0) expected.append(i + 1 == choices.size() ? " or " : ", ");
    expected.append(c);
    ++i;
  }
  throw ConfigError("--" + std::string(name) + ": '" + v + "' is not valid; expected " + expected);
}

bool OptionValues::is_set(std::string_view name) const { return find(name).explicitly_set; }

bool OptionValues::has(std::string_view name) const { return values_.find(name) != values_.end(); }

}  // namespace efu
