// Typed, lenient reads of JSON fields for the viewer's parsers (report.json, trace.json).
//
// A missing field or a null gives the default / std::nullopt: dumps from older or other
// modes (--fusion all, static) leave fields out, and the report writes null for "not
// measured". A field that is present with the wrong type is an error: FormatError names its
// path ("regions[2].fused_ms: expected a number, got string").
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

namespace hf::viewer {

class FormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "regions[2]" + "fused_ms" -> "regions[2].fused_ms".
std::string field_path(const std::string& parent, const std::string& key);
std::string index_path(const std::string& parent, size_t i);

// The object at j[key] (an empty object when missing or null); FormatError otherwise.
const nlohmann::json& object_field(const nlohmann::json& j, const char* key,
                                   const std::string& path);
// The array at j[key] (an empty array when missing or null); FormatError otherwise.
const nlohmann::json& array_field(const nlohmann::json& j, const char* key,
                                  const std::string& path);

std::optional<double> opt_number(const nlohmann::json& j, const char* key,
                                 const std::string& path);
std::optional<int64_t> opt_int(const nlohmann::json& j, const char* key, const std::string& path);
std::optional<std::string> opt_string(const nlohmann::json& j, const char* key,
                                      const std::string& path);
std::optional<bool> opt_bool(const nlohmann::json& j, const char* key, const std::string& path);

inline double number_or(const nlohmann::json& j, const char* key, const std::string& path,
                        double def) {
  return opt_number(j, key, path).value_or(def);
}
inline int64_t int_or(const nlohmann::json& j, const char* key, const std::string& path,
                      int64_t def) {
  return opt_int(j, key, path).value_or(def);
}
inline std::string string_or(const nlohmann::json& j, const char* key, const std::string& path,
                             std::string def = {}) {
  return opt_string(j, key, path).value_or(std::move(def));
}
inline bool bool_or(const nlohmann::json& j, const char* key, const std::string& path, bool def) {
  return opt_bool(j, key, path).value_or(def);
}

// "number", "string", "object", ... for messages.
const char* json_type_name(const nlohmann::json& j);

// Parses JSON text; FormatError "line L, column C: <what>" on a syntax error.
nlohmann::json parse_json_text(const std::string& text);

}  // namespace hf::viewer
