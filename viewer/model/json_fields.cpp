#include "viewer/model/json_fields.h"

#include <cmath>

namespace hf::viewer {

using json = nlohmann::json;

namespace {

[[noreturn]] void wrong_type(const std::string& path, const char* expected, const json& got) {
  throw FormatError(path + ": expected " + expected + ", got " + json_type_name(got));
}

const json* present(const json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

}  // namespace

std::string field_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string index_path(const std::string& parent, size_t i) {
  return parent + "[" + std::to_string(i) + "]";
}

const char* json_type_name(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "a number";
    default:
      return "something else";
  }
}

const json& object_field(const json& j, const char* key, const std::string& path) {
  static const json empty = json::object();
  const json* v = present(j, key);
  if (!v) return empty;
  if (!v->is_object()) wrong_type(field_path(path, key), "an object", *v);
  return *v;
}

const json& array_field(const json& j, const char* key, const std::string& path) {
  static const json empty = json::array();
  const json* v = present(j, key);
  if (!v) return empty;
  if (!v->is_array()) wrong_type(field_path(path, key), "an array", *v);
  return *v;
}

std::optional<double> opt_number(const json& j, const char* key, const std::string& path) {
  const json* v = present(j, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) wrong_type(field_path(path, key), "a number", *v);
  return v->get<double>();
}

std::optional<int64_t> opt_int(const json& j, const char* key, const std::string& path) {
  const json* v = present(j, key);
  if (!v) return std::nullopt;
  if (v->is_number_integer() || v->is_number_unsigned()) return v->get<int64_t>();
  if (v->is_number_float()) {
    double d = v->get<double>();
    if (std::isfinite(d) && d == std::floor(d)) return static_cast<int64_t>(d);
    throw FormatError(field_path(path, key) + ": expected an integer, got " + v->dump());
  }
  wrong_type(field_path(path, key), "an integer", *v);
}

std::optional<std::string> opt_string(const json& j, const char* key, const std::string& path) {
  const json* v = present(j, key);
  if (!v) return std::nullopt;
  if (!v->is_string()) wrong_type(field_path(path, key), "a string", *v);
  return v->get<std::string>();
}

std::optional<bool> opt_bool(const json& j, const char* key, const std::string& path) {
  const json* v = present(j, key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) wrong_type(field_path(path, key), "a boolean", *v);
  return v->get<bool>();
}

json parse_json_text(const std::string& text) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw FormatError("the file is empty");
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    // Byte offset -> line and column.
    size_t line = 1, col = 1;
    const size_t end = std::min<size_t>(e.byte, text.size());
    for (size_t i = 0; i + 1 < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string what = e.what();
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line 1, column 3:
    // syntax error while parsing value - invalid literal; last read: 'x'": keep the tail.
    if (auto p = what.find("syntax error"); p != std::string::npos) what = what.substr(p);
    throw FormatError("not valid JSON (line " + std::to_string(line) + ", column " +
                      std::to_string(col) + "): " + what);
  }
}

}  // namespace hf::viewer
