// A private scratch directory for one test: made by mkdtemp (a fresh name, mode 0700) under
// the system's temp directory, removed with everything in it when the object goes.
#pragma once
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace hf {

struct TempDir {
  std::filesystem::path root;

  explicit TempDir(const std::string& prefix = "hf-test") {
    std::string t = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (!::mkdtemp(t.data())) throw std::runtime_error("mkdtemp failed for " + t);
    root = t;
  }
  ~TempDir() {
    std::error_code ec;  // a test may have taken the owner's rights away to provoke errors
    std::filesystem::permissions(root, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(root, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `text` to root / name, creating the directories on the way.
  void write(const std::filesystem::path& name, const std::string& text) const {
    std::filesystem::create_directories((root / name).parent_path());
    std::ofstream(root / name, std::ios::binary) << text;
  }
};

}  // namespace hf
