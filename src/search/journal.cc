#include "search/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <ostream>
#include <utility>

#include "search/result_codec.h"

namespace distir::search {
namespace fs = std::filesystem;
namespace {

// Version 2: records carry exposed communication and the step figures.
constexpr char kMagic[8] = {'D', 'I', 'S', 'T', 'I', 'R', 'J', '2'};
constexpr size_t kHeaderBytes = 16;
constexpr size_t kRecordOverhead = 4 + 8;  // length, checksum

uint64_t Fnv1a(const char* p, size_t n, uint64_t h = 1469598103934665603ull) {
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(p[i]);
    h *= 1099511628211ull;
  }
  return h;
}

void AppendRecord(const ConfigResult& r, std::vector<char>& out) {
  const size_t at = out.size();
  out.resize(at + 4);
  PackResult(r, out);
  const auto len = static_cast<uint32_t>(out.size() - at - 4);
  std::memcpy(out.data() + at, &len, 4);
  const uint64_t sum = Fnv1a(out.data() + at + 4, len);
  const char* s = reinterpret_cast<const char*>(&sum);
  out.insert(out.end(), s, s + 8);
}

std::vector<char> Header(uint64_t fingerprint) {
  // Copied into place: GCC 12 at -O3 misreads an insert of the 8 bytes as
  // reading past them (-Warray-bounds).
  std::vector<char> h(16);
  std::memcpy(h.data(), kMagic, 8);
  std::memcpy(h.data() + 8, &fingerprint, 8);
  return h;
}

Status WriteAll(int fd, const std::vector<char>& bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Internal() << "cannot write " << path << ": " << std::strerror(errno);
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

// Reads the records of one file into `out`, stopping at the first torn or
// corrupt record (the one a killed writer left half-written).
Status ReadFile(const fs::path& path, uint64_t fingerprint, int64_t num_configs,
                std::map<int64_t, ConfigResult>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Internal() << "cannot read " << path.string();
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  const std::vector<char> header = Header(fingerprint);
  // A writer killed before its header landed leaves a short file: no records.
  if (bytes.size() < kHeaderBytes) return Status::Ok();
  if (std::memcmp(bytes.data(), kMagic, 8) != 0) {
    return FailedPrecondition() << path.string() << " is not a DistIR search journal file";
  }
  if (std::memcmp(bytes.data() + 8, header.data() + 8, 8) != 0) {
    return FailedPrecondition() << path.string()
                                << " belongs to another experiment, hardware profile or "
                                   "distir binary; delete "
                                << path.parent_path().string() << " or run without --resume";
  }
  for (size_t at = kHeaderBytes; bytes.size() - at >= kRecordOverhead;) {
    uint32_t len = 0;
    std::memcpy(&len, bytes.data() + at, 4);
    if (bytes.size() - at - kRecordOverhead < len) break;
    uint64_t sum = 0;
    std::memcpy(&sum, bytes.data() + at + 4 + len, 8);
    if (sum != Fnv1a(bytes.data() + at + 4, len)) break;
    ConfigResult r;
    const std::optional<size_t> used = UnpackResult(bytes.data() + at + 4, len, r);
    if (!used || *used != len) break;
    if (r.index >= num_configs) {
      return FailedPrecondition() << path.string() << " holds configuration " << r.index
                                  << " of an experiment with " << num_configs;
    }
    out[r.index] = std::move(r);
    at += kRecordOverhead + len;
  }
  return Status::Ok();
}

}  // namespace

std::string JournalDir(const std::string& results_path) { return results_path + ".journal"; }

uint64_t JournalFingerprint(const Experiment& e, const std::string& tool_revision,
                            int64_t num_configs) {
  uint64_t h = Fnv1a(e.yaml_text.data(), e.yaml_text.size());
  h = Fnv1a("\0", 1, h);
  h = Fnv1a(e.hardware_text.data(), e.hardware_text.size(), h);
  h = Fnv1a("\0", 1, h);
  h = Fnv1a(tool_revision.data(), tool_revision.size(), h);
  return Fnv1a(reinterpret_cast<const char*>(&num_configs), 8, h);
}

StatusOr<std::vector<ConfigResult>> ReadJournal(const std::string& dir, uint64_t fingerprint,
                                                int64_t num_configs) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::vector<ConfigResult>{};
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".bin") files.push_back(entry.path());
  }
  if (ec) return Internal() << "cannot list " << dir << ": " << ec.message();
  std::map<int64_t, ConfigResult> by_index;
  for (const fs::path& f : files) {
    DISTIR_RETURN_IF_ERROR(ReadFile(f, fingerprint, num_configs, by_index));
  }
  std::vector<ConfigResult> out;
  out.reserve(by_index.size());
  for (auto& [index, r] : by_index) out.push_back(std::move(r));
  return out;
}

Status ResetJournal(const std::string& dir, uint64_t fingerprint,
                    const std::vector<ConfigResult>& results) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Internal() << "cannot create " << dir << ": " << ec.message();
  const std::string base = (fs::path(dir) / "base.bin").string();
  {
    JournalWriter w;
    DISTIR_RETURN_IF_ERROR(w.Open(base + ".tmp", fingerprint));
    for (const ConfigResult& r : results) DISTIR_RETURN_IF_ERROR(w.Append(r));
  }
  fs::rename(base + ".tmp", base, ec);
  if (ec) return Internal() << "cannot rename " << base << ".tmp: " << ec.message();
  std::vector<fs::path> stale;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path() != fs::path(base)) stale.push_back(entry.path());
  }
  for (const fs::path& p : stale) fs::remove(p, ec);
  if (ec) return Internal() << "cannot clean " << dir << ": " << ec.message();
  return Status::Ok();
}

Status RemoveJournal(const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec) return Internal() << "cannot remove " << dir << ": " << ec.message();
  return Status::Ok();
}

JournalCleanup::JournalCleanup(std::string dir, bool resume, std::ostream* warnings)
    : dir_(std::move(dir)), warnings_(warnings) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(dir_, ec);
  owned_ = !fs::exists(st) || (!resume && fs::is_directory(st));
}

JournalCleanup::~JournalCleanup() {
  if (!owned_) return;
  Status removed = RemoveJournal(dir_);
  if (!removed.ok() && warnings_ != nullptr) {
    *warnings_ << "distir search: warning: " << removed.message() << "\n";
  }
}

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) ::close(fd_);
}

Status JournalWriter::Open(const std::string& path, uint64_t fingerprint) {
  path_ = path;
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) return Internal() << "cannot create " << path << ": " << std::strerror(errno);
  return WriteAll(fd_, Header(fingerprint), path_);
}

Status JournalWriter::Append(const ConfigResult& r) {
  buffer_.clear();
  AppendRecord(r, buffer_);
  return WriteAll(fd_, buffer_, path_);
}

}  // namespace distir::search
