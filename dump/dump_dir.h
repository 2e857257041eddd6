// The directory a dump is written to, and the rule that a dump never replaces a file the
// user did not ask it to write.
//
//  - DIR missing: created (with parents).
//  - DIR exists and is empty: used.
//  - DIR exists and is not empty: refused (hf::Error, one line naming DIR) unless `force`.
//  - DIR is not a directory, or a symbolic link another user owns: refused.
// Files go through the one secure-file layer (runtime/io/secure_fs.h): DIR is held open and
// every file is written relative to it, subdirectories opened without following symlinks.
// Without force a file is created exclusively (O_EXCL | O_NOFOLLOW): an existing file is
// never replaced. With force only the files the dump writes are replaced, each written to a
// temporary name in its directory and renamed over the old one (a symbolic link there is
// replaced, not followed); nothing else in DIR is touched or removed.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/io/secure_fs.h"

namespace hf::dump {

class DumpDir {
 public:
  // Checks (and creates) the directory; throws hf::Error "--dump DIR: ..." when refused
  // (`option` names the flag in messages: --save-outputs follows the same rule).
  DumpDir(std::filesystem::path dir, bool force, std::string option = "--dump");
  // The same checks, creating and writing nothing: run before anything else, so a refused
  // directory costs nothing (hf::Error "<option> DIR: ...").
  static void check(const std::filesystem::path& dir, bool force, const std::string& option);

  const std::filesystem::path& path() const { return dir_; }
  bool force() const { return force_; }

  // Writes DIR/relative ("report.json", "kernels/hf_0123.cpp"; subdirectories are created,
  // and must be real directories). Throws hf::Error naming the file on failure.
  std::filesystem::path write(const std::string& relative, std::string_view content);

  // Relative names written so far, in order.
  const std::vector<std::string>& written() const { return written_; }

 private:
  std::filesystem::path dir_;
  bool force_ = false;
  std::string option_;
  fsutil::Fd fd_;  // dir_, held open
  std::vector<std::string> written_;
};

}  // namespace hf::dump
