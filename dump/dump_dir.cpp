#include "dump/dump_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "runtime/io/secure_fs.h"
#include "runtime/ir/error.h"

namespace hf::dump {

namespace fs = std::filesystem;

void DumpDir::check(const fs::path& dir, bool force, const std::string& option) {
  const std::string what = option + " " + dir.string() + ": ";
  struct stat st;
  if (::lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid != ::geteuid())
    throw Error(what + "is a symbolic link owned by uid " + std::to_string(st.st_uid) +
                ", not by this user; not followed (give the real directory)");
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT && errno != ENOTDIR)
      throw Error(what + "cannot read it: " + fsutil::errno_text(errno));
    // Missing: it will be created, so the nearest existing ancestor must be a directory.
    for (fs::path up = fs::absolute(dir).parent_path();; up = up.parent_path()) {
      if (::stat(up.c_str(), &st) == 0) {
        if (!S_ISDIR(st.st_mode))
          throw Error(what + "cannot create the directory: " + up.string() + " is not a directory");
        return;
      }
      if ((errno != ENOENT && errno != ENOTDIR) || up == up.parent_path())
        throw Error(what + "cannot create the directory: " + up.string() + ": " +
                    fsutil::errno_text(errno));
    }
  }
  if (!S_ISDIR(st.st_mode)) throw Error(what + "exists and is not a directory");
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) throw Error(what + "cannot list the directory: " + ec.message());
  if (it != fs::directory_iterator() && !force)
    throw Error(what + "directory is not empty; use --force to overwrite the " +
                (option == "--dump" ? "dump's files" : "files " + option + " writes") + " in it");
}

DumpDir::DumpDir(fs::path dir, bool force, std::string option)
    : dir_(std::move(dir)), force_(force), option_(std::move(option)) {
  check(dir_, force_, option_);
  const std::string what = option_ + " " + dir_.string() + ": ";
  std::error_code ec;
  if (!fs::exists(dir_, ec) && !fs::create_directories(dir_, ec) && ec)
    throw Error(what + "cannot create the directory: " + ec.message());
  // Held open: every file is written relative to it, so a path swapped later cannot
  // redirect the dump.
  fd_ = fsutil::Fd(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd_.valid()) throw Error(what + "cannot open the directory: " + fsutil::errno_text(errno));
}

fs::path DumpDir::write(const std::string& relative, std::string_view content) {
  std::vector<std::string> comps = fsutil::split_relative(relative, option_ + " " + dir_.string());
  const std::string leaf = comps.back();
  comps.pop_back();
  const fs::path target = dir_ / relative;
  const std::string what = option_ + " " + target.string() + ": ";

  // Subdirectories: created as needed (0755); an existing one must be a directory, never
  // a symlink (opened component by component with O_NOFOLLOW).
  std::vector<std::string> created;
  fsutil::Fd sub = fsutil::open_subdir(fd_.get(), comps, &created, 0755);
  if (!sub.valid())
    throw Error(what + "cannot open its directory: " + fsutil::errno_text(errno) +
                (errno == ELOOP || errno == ENOTDIR ? " (a symlink or file is in the way)" : ""));

  std::string why;
  if (!force_) {
    struct stat st;
    if (::fstatat(sub.get(), leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
      throw Error(what + "exists; not overwritten without --force");
    why = fsutil::create_exclusive(sub.get(), leaf, content, 0644);
  } else {
    why =
        fsutil::write_atomic(sub.get(), leaf, content, /*sync=*/false, 0644, "." + leaf + ".tmp-");
  }
  if (!why.empty()) throw Error(what + why);
  written_.push_back(relative);
  return target;
}

}  // namespace hf::dump
