#include "viewer/ui/frame_facts.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace hf::viewer::ui {

nlohmann::json FrameFacts::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : facts_) j[k] = v;
  return j;
}

bool FrameFacts::write(const std::string& path, std::string* error) const {
  std::ofstream f(path, std::ios::trunc);
  if (f) f << to_json().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  if (!f) {
    if (error) *error = path + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

FrameFacts& frame_facts() {
  static FrameFacts facts;
  return facts;
}

}  // namespace hf::viewer::ui
