#include "viewer/model/recent_dumps.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace hf::viewer {

namespace fs = std::filesystem;

fs::path recent_dumps_file() {
  if (const char* x = std::getenv("XDG_STATE_HOME"); x && *x)
    return fs::path(x) / "hotfuse" / "recent";
  if (const char* h = std::getenv("HOME"); h && *h)
    return fs::path(h) / ".local" / "state" / "hotfuse" / "recent";
  return {};
}

std::vector<std::string> load_recent_dumps(const fs::path& file) {
  std::vector<std::string> out;
  if (file.empty()) return out;
  std::ifstream f(file);
  std::string line;
  while (std::getline(f, line) && out.size() < 100)
    if (!line.empty() && line.size() < 4096) out.push_back(line);
  return out;
}

bool save_recent_dumps(const fs::path& file, const std::vector<std::string>& list) {
  if (file.empty()) return false;
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  // Written aside and renamed: a crash mid-write never leaves half a list.
  const fs::path tmp = file.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!f) return false;
    for (const std::string& p : list) f << p << "\n";
    if (!f.flush()) return false;
  }
  fs::rename(tmp, file, ec);
  if (ec) fs::remove(tmp, ec);
  return !ec;
}

std::vector<std::string> add_recent_dump(std::vector<std::string> list, const std::string& path,
                                         size_t keep) {
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  const std::string p = (ec ? fs::path(path) : abs.lexically_normal()).string();
  list.erase(std::remove(list.begin(), list.end(), p), list.end());
  list.insert(list.begin(), p);
  if (list.size() > keep) list.resize(keep);
  return list;
}

}  // namespace hf::viewer
