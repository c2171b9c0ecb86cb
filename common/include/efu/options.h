// Declared options: the host's and each plugin's, one table form for CLI, JSON config and help.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>

namespace efu {

enum class OptionType : std::uint8_t { kInt, kFloat, kString, kBool };

/// One declared option. `name` is the long CLI name without dashes ("batch-size") and also the
/// JSON config key. `default_value` is text in the option's type ("64", "0.5", "on", "").
struct OptionSpec {
  const char* name;
  OptionType type;
  const char* default_value;
  const char* help;
};

/// The parsed value of every declared option. Values were type-checked when parsed; the typed
/// getters only convert. The range-checked getters throw ConfigError naming the option, the
/// value and the accepted range ("--port: 70000 is out of range; expected 0..65535"), so no
/// plugin writes its own check.
class OptionValues {
 public:
  void set(std::string_view name, std::string value, bool explicitly_set);

  std::int64_t get_int(std::string_view name) const;
  double get_float(std::string_view name) const;
  const std::string& get_string(std::string_view name) const;
  bool get_bool(std::string_view name) const;

  /// get_int(), checked to lie in min..max (inclusive).
  std::int64_t get_int(std::string_view name, std::int64_t min, std::int64_t max) const;
  /// get_float(), checked to lie in min..max (inclusive).
  double get_float(std::string_view name, double min, double max) const;
  /// get_string(), checked to be one of `choices`; returns its index in `choices`.
  std::size_t get_choice(std::string_view name,
                         std::initializer_list<std::string_view> choices) const;
  /// True if the user gave the option (CLI or config), false if it holds its default.
  bool is_set(std::string_view name) const;
  bool has(std::string_view name) const;

 private:
  struct Value {
    std::string text;
    bool explicitly_set;
  };
  const Value& find(std::string_view name) const;
  std::map<std::string, Value, std::less<>> values_;
};

/// Checks that `text` is a valid value of `type`; returns an empty string if so, else what is
/// expected ("an integer", "a number", "on/off, true/false or 1/0").
std::string check_option_value(OptionType type, std::string_view text);

}  // namespace efu
