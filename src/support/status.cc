#include "support/status.h"

namespace distir {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kUnimplemented: return "unimplemented";
    case StatusCode::kFailedPrecondition: return "failed precondition";
    case StatusCode::kResourceExhausted: return "resource exhausted";
    case StatusCode::kInternal: return "internal";
  }
  return "unknown";
}

std::string SourceLoc::ToString() const {
  if (!symbolic.empty()) return file.empty() ? symbolic : file + ": " + symbolic;
  if (file.empty()) return "";
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(col);
}

Status& Status::WithLocIfMissing(const SourceLoc& loc) {
  if (loc_.empty()) loc_ = loc;
  // A line-less location may still learn its file name.
  if (loc_.file.empty() && loc_.symbolic.empty()) loc_.file = loc.file;
  return *this;
}

Status& Status::AddNote(std::string note) {
  notes_.push_back(std::move(note));
  return *this;
}

Status& Status::Prefix(const std::string& prefix) {
  message_ = prefix + message_;
  return *this;
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string out;
  std::string where = loc_.ToString();
  if (!where.empty()) out += where + ": ";
  out += "error: " + message_;
  for (const std::string& note : notes_) out += "\nnote: " + note;
  return out;
}

}  // namespace distir
