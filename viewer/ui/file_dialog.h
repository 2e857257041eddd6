// File > Open: an ImGui-drawn dialog to browse folders and pick a dump folder (or one of its
// files), with the dumps opened lately (viewer/model/recent_dumps.h) on the left. The path
// field starts focused and holds an absolute path; Enter opens what it names.
#pragma once
#include <string>
#include <vector>

#include "viewer/model/dir_listing.h"

namespace hf::viewer::ui {

class FileDialog {
 public:
  // Opens the dialog showing `start` (a folder, or a file's folder).
  void open(const std::string& start, std::vector<std::string> recent);
  // Draws it while open; true (and *chosen) when the user picked something to open.
  bool draw(std::string* chosen);

 private:
  void go_to(const std::filesystem::path& dir);

  bool request_open_ = false, focus_path_ = false;
  DirListing listing_;
  std::vector<std::string> recent_;
  char path_[1024] = {};
  int selected_ = -1;
};

}  // namespace hf::viewer::ui
