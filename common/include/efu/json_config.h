// Reading JSON configuration files (instrument geometry, calibration, efu's own config) so that
// every error names the file, the JSON path of the bad value and what was expected, in one line:
//
//   freia geometry 'freia.json': /Config/3/Ring: 24 is out of range; expected 0..23
//
//   const efu::JsonDocument doc = efu::JsonDocument::from_file(path, "freia geometry");
//   const efu::JsonNode root = doc.root();
//   const auto offset = root.get_int("WireChOffset", 0, 63);
//   for (const efu::JsonNode& c : root.at("Config").elements()) {
//     const auto ring = c.get_int("Ring", 0, 23);
//   }
//
// Every failure throws efu::ConfigError (exit code 2 from the host). JSON paths follow RFC 6901
// ("/Config/3/Ring"); the root is "/". Nodes refer into their document: keep it alive.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace efu {

class JsonNode;

/// A parsed JSON file and how its errors name it.
class JsonDocument {
 public:
  /// Reads and parses `path`. `what` says what the file is ("freia geometry"); errors start with
  /// "<what> '<path>': ". Throws ConfigError if the file cannot be read or is not valid JSON.
  static JsonDocument from_file(const std::string& path, std::string what);
  /// Parses `text`; `origin` stands for the file name in errors (tests, embedded configs).
  static JsonDocument from_text(std::string_view text, std::string what, std::string origin);

  JsonNode root() const;
  /// The "<what> '<origin>'" prefix of this document's errors.
  const std::string& name() const noexcept { return context_->name; }

 private:
  struct Context {
    std::string name;
    nlohmann::json json;
  };
  explicit JsonDocument(std::shared_ptr<const Context> context) : context_(std::move(context)) {}
  std::shared_ptr<const Context> context_;
  friend class JsonNode;
};

/// One value inside a JsonDocument, with its JSON path.
class JsonNode {
 public:
  const std::string& path() const noexcept { return path_; }
  const nlohmann::json& json() const noexcept { return *value_; }

  bool is_object() const noexcept { return value_->is_object(); }
  bool is_array() const noexcept { return value_->is_array(); }
  /// True if this is an object with member `key`.
  bool has(std::string_view key) const;

  /// The member `key` of this object (an error if this is not an object or it is missing).
  JsonNode at(std::string_view key) const;
  /// The member `key` if present (an error if this is not an object).
  std::optional<JsonNode> find(std::string_view key) const;
  /// The elements of this array (an error if this is not an array). `min_size`/`max_size`
  /// bound the element count.
  std::vector<JsonNode> elements(std::size_t min_size = 0,
                                 std::size_t max_size = static_cast<std::size_t>(-1)) const;

  /// This value as an integer in min..max (JSON integers only; 3.0 and "3" are errors).
  std::int64_t as_int(std::int64_t min, std::int64_t max) const;
  /// This value as a number (integer or floating point) in min..max.
  double as_double(double min, double max) const;
  const std::string& as_string() const;
  bool as_bool() const;

  // Members of this object: required, or with a default when absent.
  std::int64_t get_int(std::string_view key, std::int64_t min, std::int64_t max) const;
  std::int64_t get_int_or(std::string_view key, std::int64_t fallback, std::int64_t min,
                          std::int64_t max) const;
  double get_double(std::string_view key, double min, double max) const;
  double get_double_or(std::string_view key, double fallback, double min, double max) const;
  std::string get_string(std::string_view key) const;
  std::string get_string_or(std::string_view key, std::string fallback) const;
  bool get_bool(std::string_view key) const;
  bool get_bool_or(std::string_view key, bool fallback) const;

  /// Refuses members not in `known` (a misspelt key must not be silently ignored). Call it only
  /// where the format is closed; the facility's files carry free-form keys (Comment, Info, ...).
  void check_keys(std::initializer_list<std::string_view> known) const;

  /// Throws ConfigError "<file>: <path>: <problem>". `problem` says what is wrong and what was
  /// expected, e.g. "cassette 3 is used twice; expected each cassette once".
  [[noreturn]] void fail(const std::string& problem) const;

 private:
  JsonNode(std::shared_ptr<const JsonDocument::Context> context, const nlohmann::json* value,
           std::string path)
      : context_(std::move(context)), value_(value), path_(std::move(path)) {}
  JsonNode child(std::string_view key, const nlohmann::json& value) const;
  [[noreturn]] void fail_type(const char* expected) const;

  std::shared_ptr<const JsonDocument::Context> context_;
  const nlohmann::json* value_;
  std::string path_;
  friend class JsonDocument;
};

}  // namespace efu
