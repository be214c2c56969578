#include "support/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace distir {
namespace {

// Closes a file descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// What `mode` names when it is not a regular file.
const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

StatusOr<std::string> ReadRegularFile(const std::string& path, int64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO without a writer would otherwise wait forever
  // before fstat could refuse it. It changes nothing for a regular file.
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) {
    return NotFound() << "cannot open '" << path << "': " << std::strerror(errno);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return Internal() << "cannot read '" << path << "': " << std::strerror(errno);
  }
  if (!S_ISREG(st.st_mode)) {
    return InvalidArgument() << "'" << path << "' is " << KindOf(st.st_mode)
                             << ", not a regular file";
  }
  if (st.st_size > max_bytes) {
    return InvalidArgument() << "'" << path << "' is larger than " << max_bytes << " bytes ("
                             << st.st_size << ")";
  }
  // Read until end of file, not st_size bytes: the file may change size
  // meanwhile (a file being appended to); the cap still holds.
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Internal() << "cannot read '" << path << "': " << std::strerror(errno);
    if (got == 0) return text;
    if (static_cast<int64_t>(text.size()) + got > max_bytes) {
      return InvalidArgument() << "'" << path << "' is larger than " << max_bytes << " bytes";
    }
    text.append(buffer, static_cast<size_t>(got));
  }
}

}  // namespace distir
