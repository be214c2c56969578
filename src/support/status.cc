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

Status::Status(StatusCode code, std::string message, SourceLoc loc) {
  // An ok Status carries nothing; errors own their text.
  if (code == StatusCode::kOk && message.empty() && loc.empty()) return;
  state_ = std::make_unique<State>(State{code, std::move(message), std::move(loc), {}});
}

const std::string& Status::message() const {
  static const std::string* const kEmpty = new std::string();
  return state_ ? state_->message : *kEmpty;
}

const SourceLoc& Status::loc() const {
  static const SourceLoc* const kEmpty = new SourceLoc();
  return state_ ? state_->loc : *kEmpty;
}

const std::vector<std::string>& Status::notes() const {
  static const std::vector<std::string>* const kEmpty = new std::vector<std::string>();
  return state_ ? state_->notes : *kEmpty;
}

Status::State& Status::MutableState() {
  if (state_ == nullptr) state_ = std::make_unique<State>();
  return *state_;
}

Status& Status::WithLocIfMissing(const SourceLoc& loc) {
  if (ok()) return *this;  // success has no location (and must stay allocation-free)
  SourceLoc& here = MutableState().loc;
  if (here.empty()) here = loc;
  // A line-less location may still learn its file name.
  if (here.file.empty() && here.symbolic.empty()) here.file = loc.file;
  return *this;
}

Status& Status::AddNote(std::string note) {
  MutableState().notes.push_back(std::move(note));
  return *this;
}

Status& Status::Prefix(const std::string& prefix) {
  std::string& message = MutableState().message;
  message = prefix + message;
  return *this;
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string out;
  std::string where = state_->loc.ToString();
  if (!where.empty()) out += where + ": ";
  out += "error: " + state_->message;
  for (const std::string& note : state_->notes) out += "\nnote: " + note;
  return out;
}

}  // namespace distir
