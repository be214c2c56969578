// Claiming an output file before a long run writes it (distir search -o).
//
// A search runs for minutes to hours and only then writes its results; it must
// not find out at the end that it cannot, overwrite one of its own inputs,
// replace a symbolic link by a file, or race another search writing the same
// file (both would journal into `<out>.journal/` and rename over each other).
// ClaimOutput() settles all of this before any work:
//   - it resolves symbolic links: the results go where `-o` points, so the
//     link is kept, and the `.tmp`, `.lock` and `.journal` sit beside the file
//     it points to (any path to one file claims the same file);
//   - it refuses a directory, an existing path that is not a regular file
//     (/dev/null, a FIFO), a missing or unwritable directory, a read-only
//     file, a name too long for `<name>.journal`, and any of the run's inputs
//     (the same file under any name);
//   - it takes an exclusive flock(2) on `<target>.lock`, held until the
//     OutputClaim is destroyed, which removes the lock file: a second claim of
//     the same file fails at once, naming the output. flock locks are released
//     by the kernel when their holder dies, so a killed run leaves a lock file
//     that does not lock anything;
//   - holding the lock, it removes a `<target>.tmp` that an interrupted
//     writer left (see results_file.h) and says so in `removed_stale_tmp`.
// The lock is advisory: it binds the processes that claim the output, every
// distir search; on a cluster the directory must be on a file system whose
// flock is cluster-wide (NFSv4, Lustre with -o flock, GPFS), as for the journal.

#pragma once

#include <string>
#include <vector>

#include "support/status_or.h"

namespace distir::io {

/// A file of the run that the output must not overwrite: `what` names it in
/// errors ("the experiment file"). An empty `path` or "-" is skipped.
struct RunInput {
  std::string what;
  std::string path;
};

/// An exclusive claim on an output file; movable, not copyable.
class OutputClaim {
 public:
  OutputClaim() = default;
  OutputClaim(OutputClaim&& other) noexcept;
  OutputClaim& operator=(OutputClaim&& other) noexcept;
  OutputClaim(const OutputClaim&) = delete;
  OutputClaim& operator=(const OutputClaim&) = delete;
  /// Removes the lock file and releases the lock.
  ~OutputClaim();

  /// The file the results go to: the `-o` path with its symbolic links resolved.
  const std::string& target() const { return target_; }
  /// The lock file, `<target>.lock`.
  const std::string& lock_path() const { return lock_path_; }
  /// The stale `<target>.tmp` ClaimOutput() removed, or "".
  const std::string& removed_stale_tmp() const { return removed_stale_tmp_; }

 private:
  friend StatusOr<OutputClaim> ClaimOutput(const std::string& path,
                                           const std::vector<RunInput>& inputs);
  void Release();

  int fd_ = -1;
  std::string target_;
  std::string lock_path_;
  std::string removed_stale_tmp_;
};

/// The file writing to `path` writes: `path` itself, or where its chain of
/// symbolic links ends (a relative link resolved from its own directory; the
/// end may not exist yet). Errors: a chain of more than 40 links, a link that
/// cannot be read.
StatusOr<std::string> ResolveOutputPath(const std::string& path);

/// Checks `target` (resolved) as above, without claiming it. Errors are
/// InvalidArgument located at `shown`, the path as the user gave it.
Status CheckOutputPath(const std::string& target, const std::string& shown,
                       const std::vector<RunInput>& inputs);

/// Resolves `path`, checks it, takes the lock and removes a stale `.tmp`.
/// Errors: those of ResolveOutputPath and CheckOutputPath; FailedPrecondition
/// when another process holds the lock; Internal when the lock file or the
/// stale `.tmp` cannot be handled. Each is located at `path`.
StatusOr<OutputClaim> ClaimOutput(const std::string& path, const std::vector<RunInput>& inputs);

}  // namespace distir::io
