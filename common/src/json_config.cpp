#include "efu/json_config.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "efu/errors.h"

namespace efu {
namespace {

/// A value as it appears in the file, shortened, for error messages.
std::string show(const nlohmann::json& v) {
  if (v.is_array()) return "[...]";
  if (v.is_object()) return "{...}";
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

/// RFC 6901 escaping of one path segment.
std::string escape(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string number_text(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

}  // namespace

JsonDocument JsonDocument::from_text(std::string_view text, std::string what, std::string origin) {
  auto context = std::make_shared<Context>();
  context->name = std::move(what) + " '" + std::move(origin) + "'";
  try {
    context->json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the 1-based offset of the problem; give line and column, which editors show.
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw ConfigError(context->name + ": not valid JSON at line " + std::to_string(line) +
                      ", column " + std::to_string(column) + "; expected a JSON document");
  } catch (const nlohmann::json::exception& e) {
    // Valid syntax the parser still refuses, e.g. a number too large for any C++ type
    // (out_of_range.406): a bad file like any other, not a crash.
    throw ConfigError(context->name + ": not usable JSON (" + e.what() +
                      "); expected numbers within 64-bit range");
  }
  return JsonDocument(std::move(context));
}

JsonDocument JsonDocument::from_file(const std::string& path, std::string what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError(what + " '" + path + "': cannot be read; expected a readable JSON file");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return from_text(text.str(), std::move(what), path);
}

JsonNode JsonDocument::root() const { return JsonNode(context_, &context_->json, "/"); }

void JsonNode::fail(const std::string& problem) const {
  throw ConfigError(context_->name + ": " + path_ + ": " + problem);
}

void JsonNode::fail_type(const char* expected) const {
  fail(show(*value_) + " is not " + expected + "; expected " + expected);
}

JsonNode JsonNode::child(std::string_view key, const nlohmann::json& value) const {
  return JsonNode(context_, &value, (path_ == "/" ? "/" : path_ + "/") + escape(key));
}

bool JsonNode::has(std::string_view key) const {
  return value_->is_object() && value_->find(key) != value_->end();
}

std::optional<JsonNode> JsonNode::find(std::string_view key) const {
  if (!value_->is_object()) fail_type("an object");
  const auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  return child(key, *it);
}

JsonNode JsonNode::at(std::string_view key) const {
  std::optional<JsonNode> found = find(key);
  if (!found) fail("missing \"" + std::string(key) + "\"; expected it in this object");
  return *found;
}

std::vector<JsonNode> JsonNode::elements(std::size_t min_size, std::size_t max_size) const {
  if (!value_->is_array()) fail_type("an array");
  const std::size_t n = value_->size();
  if (n < min_size || n > max_size) {
    const std::string bound =
        max_size == static_cast<std::size_t>(-1)
            ? "at least " + std::to_string(min_size)
            : (min_size == max_size ? "exactly " + std::to_string(min_size)
                                    : std::to_string(min_size) + ".." + std::to_string(max_size));
    fail("has " + std::to_string(n) + " elements; expected " + bound);
  }
  std::vector<JsonNode> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(
        JsonNode(context_, &(*value_)[i], (path_ == "/" ? "/" : path_ + "/") + std::to_string(i)));
  }
  return out;
}

std::int64_t JsonNode::as_int(std::int64_t min, std::int64_t max) const {
  if (!value_->is_number_integer()) {
    fail(show(*value_) + " is not an integer; expected an integer in " + std::to_string(min) +
         ".." + std::to_string(max));
  }
  std::int64_t v = 0;
  if (value_->is_number_unsigned()) {
    const std::uint64_t u = value_->get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(max)) {
      fail(show(*value_) + " is out of range; expected " + std::to_string(min) + ".." +
           std::to_string(max));
    }
    v = static_cast<std::int64_t>(u);
  } else {
    v = value_->get<std::int64_t>();
  }
  if (v < min || v > max) {
    fail(std::to_string(v) + " is out of range; expected " + std::to_string(min) + ".." +
         std::to_string(max));
  }
  return v;
}

double JsonNode::as_double(double min, double max) const {
  if (!value_->is_number()) {
    fail(show(*value_) + " is not a number; expected a number in " + number_text(min) + ".." +
         number_text(max));
  }
  const double v = value_->get<double>();
  if (!std::isfinite(v) || v < min || v > max) {
    fail(show(*value_) + " is out of range; expected " + number_text(min) + ".." +
         number_text(max));
  }
  return v;
}

const std::string& JsonNode::as_string() const {
  if (!value_->is_string()) fail_type("a string");
  return value_->get_ref<const std::string&>();
}

bool JsonNode::as_bool() const {
  if (!value_->is_boolean()) fail_type("true or false");
  return value_->get<bool>();
}

std::int64_t JsonNode::get_int(std::string_view key, std::int64_t min, std::int64_t max) const {
  return at(key).as_int(min, max);
}

std::int64_t JsonNode::get_int_or(std::string_view key, std::int64_t fallback, std::int64_t min,
                                  std::int64_t max) const {
  const std::optional<JsonNode> n = find(key);
  return n ? n->as_int(min, max) : fallback;
}

double JsonNode::get_double(std::string_view key, double min, double max) const {
  return at(key).as_double(min, max);
}

double JsonNode::get_double_or(std::string_view key, double fallback, double min,
                               double max) const {
  const std::optional<JsonNode> n = find(key);
  return n ? n->as_double(min, max) : fallback;
}

std::string JsonNode::get_string(std::string_view key) const { return at(key).as_string(); }

std::string JsonNode::get_string_or(std::string_view key, std::string fallback) const {
  const std::optional<JsonNode> n = find(key);
  return n ? n->as_string() : fallback;
}

bool JsonNode::get_bool(std::string_view key) const { return at(key).as_bool(); }

bool JsonNode::get_bool_or(std::string_view key, bool fallback) const {
  const std::optional<JsonNode> n = find(key);
  return n ? n->as_bool() : fallback;
}

void JsonNode::check_keys(std::initializer_list<std::string_view> known) const {
  if (!value_->is_object()) fail_type("an object");
  for (const auto& [key, value] : value_->items()) {
    bool found = false;
    for (std::string_view k : known) found = found || k == key;
    if (!found) {
      std::string expected;
      std::size_t i = 0;
      for (std::string_view k : known) {
        if (i++ != 0) expected.append(", ");
        expected.append(k);
      }
      child(key, value).fail("unknown key; expected one of " + expected);
    }
  }
}

}  // namespace efu
