#include "io/output_claim.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>

#include "io/results_file.h"

namespace distir::io {
namespace fs = std::filesystem;
namespace {

constexpr int kMaxLinks = 40;  // the kernel's own limit (ELOOP)
constexpr int kLockAttempts = 8;
// The longest name the run puts beside the output (the resume journal,
// search/journal.h), and the longest file name most file systems take.
constexpr std::string_view kLongestSuffix = ".journal";
constexpr size_t kMaxNameBytes = 255;

SourceLoc At(const std::string& path) { return SourceLoc{path, 0, 0, ""}; }

// The directory a file path sits in: "." for a bare name.
fs::path DirOf(const fs::path& p) { return p.has_parent_path() ? p.parent_path() : fs::path("."); }

// True when both exist and are one file (the same inode), whatever their names.
bool SameFile(const std::string& a, const std::string& b) {
  std::error_code ec;
  const bool same = fs::equivalent(a, b, ec);
  return same && !ec;
}

Status CheckExisting(const fs::path& target, const std::string& shown) {
  std::error_code ec;
  const fs::file_status st = fs::status(target, ec);
  if (!fs::exists(st)) return Status::Ok();
  if (fs::is_directory(st)) {
    return InvalidArgument(At(shown)) << "the output is a directory; give a file name with -o";
  }
  if (!fs::is_regular_file(st)) {
    return InvalidArgument(At(shown))
           << "the output exists and is not a regular file (a device, FIFO or socket); the "
              "results replace the output file, so give a file name with -o";
  }
  if (::access(target.c_str(), W_OK) != 0) {
    return InvalidArgument(At(shown)) << "the output is not writable: " << std::strerror(errno);
  }
  return Status::Ok();
}

Status CheckDirectory(const fs::path& target, const std::string& shown) {
  const fs::path dir = DirOf(target);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return InvalidArgument(At(shown))
           << "the output directory '" << dir.string() << "' does not exist";
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return InvalidArgument(At(shown)) << "the output directory '" << dir.string()
                                      << "' is not writable: " << std::strerror(errno);
  }
  return Status::Ok();
}

Status CheckInputs(const std::string& target, const std::string& shown,
                   const std::vector<RunInput>& inputs) {
  for (const RunInput& in : inputs) {
    if (in.path.empty() || in.path == "-" || !SameFile(target, in.path)) continue;
    return InvalidArgument(At(shown)) << "the output is " << in.what << " ('" << in.path
                                      << "'), an input of this run; choose another output with -o";
  }
  return Status::Ok();
}

// Opens and flock()s `lock_path` without waiting. The holder before us removes
// the file while it still holds the lock (~OutputClaim), so a lock taken on a
// file that is no longer at `lock_path` is worthless: then try the current one.
StatusOr<int> LockFile(const std::string& lock_path, const std::string& shown) {
  for (int attempt = 0; attempt < kLockAttempts; ++attempt) {
    const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
      return Internal(At(shown)) << "cannot create the lock file '" << lock_path
                                 << "': " << std::strerror(errno);
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      ::close(fd);
      if (err == EINTR) continue;
      if (err == EWOULDBLOCK) {
        return FailedPrecondition(At(shown))
               << "another distir search is writing this output (it holds '" << lock_path
               << "'); wait for it to finish, or choose another output with -o";
      }
      return Internal(At(shown)) << "cannot lock '" << lock_path << "': " << std::strerror(err);
    }
    struct stat held {};
    struct stat now {};
    if (::fstat(fd, &held) == 0 && ::stat(lock_path.c_str(), &now) == 0 &&
        held.st_dev == now.st_dev && held.st_ino == now.st_ino) {
      return fd;
    }
    ::close(fd);
  }
  return Internal(At(shown)) << "cannot lock '" << lock_path << "': it keeps being replaced";
}

// Removes `<target>.tmp` when a writer was interrupted before renaming it.
// Only the holder of the lock may: no live writer can be using it.
StatusOr<std::string> RemoveStaleTmp(const std::string& target, const std::string& shown) {
  const std::string tmp = ResultsTempPath(target);
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(tmp, ec))) return std::string();
  fs::remove(tmp, ec);
  if (ec) {
    return Internal(At(shown)) << "cannot remove '" << tmp
                               << "', left by an interrupted run: " << ec.message();
  }
  return tmp;
}

}  // namespace

OutputClaim::OutputClaim(OutputClaim&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      target_(std::move(other.target_)),
      lock_path_(std::move(other.lock_path_)),
      removed_stale_tmp_(std::move(other.removed_stale_tmp_)) {}

OutputClaim& OutputClaim::operator=(OutputClaim&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = std::exchange(other.fd_, -1);
    target_ = std::move(other.target_);
    lock_path_ = std::move(other.lock_path_);
    removed_stale_tmp_ = std::move(other.removed_stale_tmp_);
  }
  return *this;
}

OutputClaim::~OutputClaim() { Release(); }

void OutputClaim::Release() {
  if (fd_ < 0) return;
  // Unlinked while still locked: see LockFile.
  ::unlink(lock_path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

StatusOr<std::string> ResolveOutputPath(const std::string& path) {
  fs::path p(path);
  for (int links = 0;; ++links) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return p.string();
    if (links == kMaxLinks) {
      return InvalidArgument(At(path))
             << "the output is a chain of more than " << kMaxLinks << " symbolic links";
    }
    const fs::path next = fs::read_symlink(p, ec);
    if (ec) {
      return InvalidArgument(At(path))
             << "cannot read the symbolic link '" << p.string() << "': " << ec.message();
    }
    p = next.is_absolute() || !p.has_parent_path() ? next : p.parent_path() / next;
  }
}

Status CheckOutputPath(const std::string& target, const std::string& shown,
                       const std::vector<RunInput>& inputs) {
  const fs::path t(target);
  const fs::path name = t.filename();
  if (name.empty() || name == "." || name == "..") {
    return InvalidArgument(At(shown)) << "the output names a directory; give a file name with -o";
  }
  if (name.string().size() + kLongestSuffix.size() > kMaxNameBytes) {
    return InvalidArgument(At(shown))
           << "the output's file name is too long: the run writes '" << name.string()
           << kLongestSuffix << "' beside it, and a name may have at most " << kMaxNameBytes
           << " bytes";
  }
  DISTIR_RETURN_IF_ERROR(CheckExisting(t, shown));
  DISTIR_RETURN_IF_ERROR(CheckDirectory(t, shown));
  return CheckInputs(target, shown, inputs);
}

StatusOr<OutputClaim> ClaimOutput(const std::string& path, const std::vector<RunInput>& inputs) {
  OutputClaim claim;
  DISTIR_ASSIGN_OR_RETURN(claim.target_, ResolveOutputPath(path));
  DISTIR_RETURN_IF_ERROR(CheckOutputPath(claim.target_, path, inputs));
  claim.lock_path_ = claim.target_ + ".lock";
  DISTIR_ASSIGN_OR_RETURN(claim.fd_, LockFile(claim.lock_path_, path));
  DISTIR_ASSIGN_OR_RETURN(claim.removed_stale_tmp_, RemoveStaleTmp(claim.target_, path));
  return claim;
}

}  // namespace distir::io
