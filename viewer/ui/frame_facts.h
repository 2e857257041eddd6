// Facts about the frame just drawn, for tests that look at a screenshot: what each panel
// says (its message, the colour it gave a value, what it drew), as key -> value pairs that
// `hotfuse-view DUMP --screenshot PNG --screenshot-facts FILE` writes as one JSON object.
// A panel sets its own keys while it draws ("timeline.message", "summary.speedup_color");
// adding a fact is one set() call, nothing else to register. Keys are "panel.what".
#pragma once
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace hf::viewer::ui {

class FrameFacts {
 public:
  void set(const std::string& key, nlohmann::json value) { facts_[key] = std::move(value); }
  void clear() { facts_.clear(); }
  const std::map<std::string, nlohmann::json>& all() const { return facts_; }
  nlohmann::json to_json() const;
  // false and *error when the file cannot be written.
  bool write(const std::string& path, std::string* error) const;

 private:
  std::map<std::string, nlohmann::json> facts_;
};

// The process's facts: cleared at the start of each frame (App::frame), written by main.
FrameFacts& frame_facts();

}  // namespace hf::viewer::ui
