// One folder's entries for the viewer's file dialog: sub-folders first (those that are dump
// folders marked), then the files a dump is made of (.json, .dot, .gv). Hidden entries are
// left out. Never throws: a folder that cannot be read gives its error.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace hf::viewer {

struct DirEntry {
  std::string name;
  bool is_dir = false;
  bool is_dump = false;  // a folder with report.json, trace.json, before.dot or after.dot
};

struct DirListing {
  std::filesystem::path dir;  // absolute, normalised
  std::vector<DirEntry> entries;
  std::string error;  // "" when read
};

DirListing list_dir(const std::filesystem::path& dir);
// A folder hotfuse-view can open as a dump.
bool is_dump_dir(const std::filesystem::path& dir);

}  // namespace hf::viewer
