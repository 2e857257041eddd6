#include "dump/dump_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "runtime/ir/error.h"

namespace hf::dump {

namespace fs = std::filesystem;

namespace {

std::string errno_text(int err) {
  return std::strerror(err);
}

// Writes all of `content` to `fd`; false (errno set) on failure.
bool write_all(int fd, std::string_view content) {
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

DumpDir::DumpDir(fs::path dir, bool force, std::string option)
    : dir_(std::move(dir)), force_(force), option_(std::move(option)) {
  const std::string what = option_ + " " + dir_.string() + ": ";
  std::error_code ec;
  fs::file_status st = fs::status(dir_, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw Error(what + "cannot read it: " + ec.message());
  if (!fs::exists(st)) {
    if (!fs::create_directories(dir_, ec) && ec)
      throw Error(what + "cannot create the directory: " + ec.message());
    return;
  }
  if (!fs::is_directory(st)) throw Error(what + "exists and is not a directory");
  fs::directory_iterator it(dir_, ec);
  if (ec) throw Error(what + "cannot list the directory: " + ec.message());
  if (it != fs::directory_iterator() && !force_)
    throw Error(what + "directory is not empty; use --force to overwrite the " +
                (option_ == "--dump" ? "dump's files" : "files " + option_ + " writes") + " in it");
}

fs::path DumpDir::write(const std::string& relative, std::string_view content) {
  const fs::path rel(relative);
  if (rel.empty() || rel.is_absolute() || rel.filename().empty())
    throw Error(option_ + ": bad file name '" + relative + "'");
  for (const fs::path& part : rel)
    if (part == ".." || part == ".") throw Error(option_ + ": bad file name '" + relative + "'");
  const fs::path target = dir_ / rel;
  const std::string what = option_ + " " + target.string() + ": ";

  // Subdirectories: created as needed; an existing one must be a directory, not a link.
  fs::path sub = dir_;
  for (auto part = rel.begin(); std::next(part) != rel.end(); ++part) {
    sub /= *part;
    std::error_code ec;
    fs::file_status st = fs::symlink_status(sub, ec);
    if (!fs::exists(st)) {
      if (!fs::create_directory(sub, ec) && ec)
        throw Error(option_ + " " + sub.string() +
                    ": cannot create the directory: " + ec.message());
    } else if (!fs::is_directory(st)) {
      throw Error(option_ + " " + sub.string() + ": exists and is not a directory");
    }
  }

  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW;
  if (!force_) {
    int fd = ::open(target.c_str(), flags, 0644);
    if (fd < 0)
      throw Error(what + (errno == EEXIST ? std::string("exists; not overwritten without --force")
                                          : "cannot create the file: " + errno_text(errno)));
    bool ok = write_all(fd, content);
    int err = errno;
    ok = (::close(fd) == 0) && ok;
    if (!ok) {
      ::unlink(target.c_str());
      throw Error(what + "write error: " + errno_text(err));
    }
  } else {
    fs::path tmp;
    int fd = -1;
    for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
      tmp = target.parent_path() / ("." + target.filename().string() + ".tmp-" +
                                    std::to_string(::getpid()) + "-" + std::to_string(attempt));
      fd = ::open(tmp.c_str(), flags, 0644);
      if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) throw Error(what + "cannot create a temporary file: " + errno_text(errno));
    bool ok = write_all(fd, content);
    int err = errno;
    ok = (::close(fd) == 0) && ok;
    if (ok && ::rename(tmp.c_str(), target.c_str()) != 0) {
      ok = false;
      err = errno;
    }
    if (!ok) {
      ::unlink(tmp.c_str());
      throw Error(what + "cannot write the file: " + errno_text(err));
    }
  }
  written_.push_back(relative);
  return target;
}

}  // namespace hf::dump
