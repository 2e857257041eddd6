#include "viewer/model/dir_listing.h"

#include <algorithm>

namespace hf::viewer {

namespace fs = std::filesystem;

bool is_dump_dir(const fs::path& dir) {
  std::error_code ec;
  for (const char* f : {"report.json", "trace.json", "before.dot", "after.dot"})
    if (fs::is_regular_file(dir / f, ec)) return true;
  return false;
}

DirListing list_dir(const fs::path& dir) {
  DirListing l;
  std::error_code ec;
  fs::path abs = fs::absolute(dir, ec);
  l.dir = (ec ? dir : abs).lexically_normal();
  if (l.dir.has_filename() == false && l.dir != l.dir.root_path()) l.dir = l.dir.parent_path();
  fs::directory_iterator it(l.dir, fs::directory_options::skip_permission_denied, ec);
  if (ec) {
    l.error = ec.message();
    return l;
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) {
      l.error = ec.message();
      break;
    }
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    DirEntry e;
    e.name = name;
    std::error_code sec;
    e.is_dir = it->is_directory(sec);
    if (e.is_dir) {
      e.is_dump = is_dump_dir(it->path());
    } else {
      const std::string ext = it->path().extension().string();
      if (ext != ".json" && ext != ".dot" && ext != ".gv") continue;
    }
    l.entries.push_back(std::move(e));
    if (l.entries.size() >= 5000) break;  // a huge folder: enough to pick from
  }
  std::sort(l.entries.begin(), l.entries.end(), [](const DirEntry& a, const DirEntry& b) {
    if (a.is_dir != b.is_dir) return a.is_dir;
    return a.name < b.name;
  });
  return l;
}

}  // namespace hf::viewer
