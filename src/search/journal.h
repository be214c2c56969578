// The resume journal of a search: what every rank has finished, on disk, so
// that a search killed part-way (SIGTERM from a batch system at its time limit,
// SIGKILL, a node failure) and started again with --resume recomputes only the
// configurations it had not finished (docs/configs.md, "Resuming a search").
//
// The journal is a directory next to the results file, `<results>.journal/`,
// holding one append-only file per writer:
//   base.bin     the results of earlier runs, consolidated by rank 0 at start
//   rank<r>.bin  the results rank r of the current run has finished
// Every file starts with the header "DISTIRJ2" and the experiment's fingerprint
// (8 bytes each); then records: payload length (u32), payload (result_codec.h),
// FNV-1a 64 of the payload (u64). A record is appended with one write(2) as soon
// as its configuration is evaluated, so a killed process loses at most the
// record it was writing; a torn or corrupt tail record is ignored on reading.
// The directory must be visible to every rank (a shared file system on a
// cluster, as for the results file); it is removed once the results file is
// written.

#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "search/evaluator.h"
#include "search/experiment.h"
#include "support/status_or.h"

namespace distir::search {

/// `<results_path>.journal`.
std::string JournalDir(const std::string& results_path);

/// Identifies what a journal's results are valid for: the experiment and
/// hardware texts, the tool revision that computed them and the number of
/// configurations. Results of another experiment or binary are never mixed in.
uint64_t JournalFingerprint(const Experiment& e, const std::string& tool_revision,
                            int64_t num_configs);

/// Every well-formed record of every file in `dir`, by configuration index
/// (duplicates, possible after an interrupted consolidation, are the same
/// result and kept once). A missing directory is an empty journal.
/// Errors: FailedPrecondition when a file belongs to another fingerprint or is
/// not a journal file; an index >= num_configs; I/O errors. Each names the file.
StatusOr<std::vector<ConfigResult>> ReadJournal(const std::string& dir, uint64_t fingerprint,
                                                int64_t num_configs);

/// Replaces the journal in `dir` by one file, base.bin, holding `results`
/// (written to base.bin.tmp and renamed, then the other files removed), creating
/// `dir` if needed. An interrupted call leaves a journal that reads the same.
Status ResetJournal(const std::string& dir, uint64_t fingerprint,
                    const std::vector<ConfigResult>& results);

/// Removes `dir` and its files; a missing directory is fine.
Status RemoveJournal(const std::string& dir);

/// Removes, when destroyed, the journal directory a run made, unless Dismiss()
/// was called: a search that fails leaves no journal behind. A journal that
/// was there before a --resume run holds an earlier run's work and is kept, for
/// the next try; so is anything at `dir` that is not a directory.
class JournalCleanup {
 public:
  /// Decides now whether `dir` is this run's: it does not exist yet, or it is a
  /// directory and the run does not resume from it (the run discards it).
  /// `warnings` (not owned, may be null) receives the warning of a removal
  /// that fails; it must outlive this object.
  JournalCleanup(std::string dir, bool resume, std::ostream* warnings = nullptr);
  JournalCleanup(const JournalCleanup&) = delete;
  JournalCleanup& operator=(const JournalCleanup&) = delete;
  /// RemoveJournal(dir) when the journal is this run's and Dismiss() was not
  /// called; a failure to remove it is a line on `warnings`.
  ~JournalCleanup();

  /// The run succeeded: leave `dir` alone.
  void Dismiss() { owned_ = false; }
  bool owned() const { return owned_; }

 private:
  std::string dir_;
  std::ostream* warnings_ = nullptr;
  bool owned_ = false;
};

/// Appends records to one journal file.
class JournalWriter {
 public:
  JournalWriter() = default;
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;
  ~JournalWriter();

  /// Creates (or truncates) `path` and writes the header.
  Status Open(const std::string& path, uint64_t fingerprint);
  /// Appends `r` with one write(2). REQUIRES: Open() succeeded.
  Status Append(const ConfigResult& r);

 private:
  int fd_ = -1;
  std::string path_;
  std::vector<char> buffer_;
};

}  // namespace distir::search
