// Status and error locations.
//
// Bad input (IR text, YAML, ONNX, impossible requests) travels up the stack as a
// Status, never as an exception or an exit. A Status carries a code, a message in
// house style (lowercase, no trailing period, names the entity, states the rule,
// then the evidence), a SourceLoc and optional notes. Only tools/ turn a Status
// into an exit code; diagnostic.h renders it for humans. StatusOr<T> is in
// status_or.h.

#pragma once

#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace distir {

/// Broad classes of failure; tools map them to exit codes.
enum class StatusCode {
  kOk,
  kInvalidArgument,     ///< the input is malformed or violates a rule
  kNotFound,            ///< a named entity does not exist
  kUnimplemented,       ///< a valid request we do not support (e.g. an op without a rule)
  kFailedPrecondition,  ///< an operation's REQUIRES did not hold
  kResourceExhausted,   ///< e.g. a configuration does not fit in memory
  kInternal,            ///< an I/O or library failure that is not the user's fault
};

/// Short lowercase name of a code, e.g. "invalid argument".
const char* StatusCodeName(StatusCode code);

/// Where an error was found. Either a text position (`file`, 1-based `line` and
/// `col`; `line` == 0 means "whole file") or a symbolic location such as
/// "onnx node 'MatMul_12' (MatMul)". An empty SourceLoc means "no location".
struct SourceLoc {
  std::string file;
  int line = 0;
  int col = 0;
  std::string symbolic;

  bool empty() const { return file.empty() && symbolic.empty(); }
  /// "file:line:col", "file", the symbolic text, or "" when empty.
  std::string ToString() const;
};

/// The result of an operation that can fail on bad input. An ok Status is one
/// null pointer (LevelDB's layout): creating, copying, moving and destroying it
/// costs next to nothing, which matters on paths that run once per op of
/// programs of millions of ops. An error owns its code, message, location and
/// notes. A moved-from Status is ok.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message, SourceLoc loc = {});
  Status(const Status& other)
      : state_(other.state_ ? std::make_unique<State>(*other.state_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) state_ = other.state_ ? std::make_unique<State>(*other.state_) : nullptr;
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status Ok() { return Status(); }

  bool ok() const { return state_ == nullptr || state_->code == StatusCode::kOk; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  /// Empty when ok.
  const std::string& message() const;
  const SourceLoc& loc() const;
  const std::vector<std::string>& notes() const;

  /// Attaches a location to an error when none is set yet; keeps the innermost
  /// one otherwise. Does nothing to an ok Status.
  Status& WithLocIfMissing(const SourceLoc& loc);
  /// Appends a note, rendered after the message as "note: ...".
  Status& AddNote(std::string note);
  /// Prefixes the message, e.g. "in function @f: ". Used to add context on the way up.
  Status& Prefix(const std::string& prefix);

  /// "loc: error: message" plus notes, without source excerpt (see diagnostic.h).
  std::string ToString() const;

 private:
  struct State {
    StatusCode code = StatusCode::kOk;
    std::string message;
    SourceLoc loc;
    std::vector<std::string> notes;
  };
  /// The state, created on first use by a mutator.
  State& MutableState();

  std::unique_ptr<State> state_;  // null: ok
};

/// Builds an error Status with stream syntax:
///   return InvalidArgument(loc) << "MatMul expects rank-2 operands, got " << t;
/// Converts implicitly to Status and to any StatusOr<T>.
class StatusBuilder {
 public:
  StatusBuilder(StatusCode code, SourceLoc loc) : code_(code), loc_(std::move(loc)) {}
  StatusBuilder(const StatusBuilder& other)
      // `ate`: text streamed into the copy goes after the message, not over it.
      : code_(other.code_),
        loc_(other.loc_),
        stream_(other.stream_.str(), std::ios_base::out | std::ios_base::ate) {}

  template <typename T>
  StatusBuilder& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }
  operator Status() const { return Status(code_, stream_.str(), loc_); }  // NOLINT
  Status Build() const { return Status(code_, stream_.str(), loc_); }

 private:
  StatusCode code_;
  SourceLoc loc_;
  std::ostringstream stream_;
};

inline StatusBuilder InvalidArgument(SourceLoc loc = {}) {
  return StatusBuilder(StatusCode::kInvalidArgument, std::move(loc));
}
inline StatusBuilder NotFound(SourceLoc loc = {}) {
  return StatusBuilder(StatusCode::kNotFound, std::move(loc));
}
inline StatusBuilder Unimplemented(SourceLoc loc = {}) {
  return StatusBuilder(StatusCode::kUnimplemented, std::move(loc));
}
inline StatusBuilder FailedPrecondition(SourceLoc loc = {}) {
  return StatusBuilder(StatusCode::kFailedPrecondition, std::move(loc));
}
inline StatusBuilder ResourceExhausted(SourceLoc loc = {}) {
  return StatusBuilder(StatusCode::kResourceExhausted, std::move(loc));
}
inline StatusBuilder Internal(SourceLoc loc = {}) {
  return StatusBuilder(StatusCode::kInternal, std::move(loc));
}

}  // namespace distir

#define DISTIR_STATUS_CONCAT_INNER(a, b) a##b
#define DISTIR_STATUS_CONCAT(a, b) DISTIR_STATUS_CONCAT_INNER(a, b)

/// Returns the Status of `expr` from the enclosing function when it is an error.
#define DISTIR_RETURN_IF_ERROR(expr)              \
  do {                                            \
    ::distir::Status _distir_status = (expr);     \
    if (!_distir_status.ok()) return _distir_status; \
  } while (0)

/// `lhs = value of expr` when ok; otherwise returns its Status.
#define DISTIR_ASSIGN_OR_RETURN(lhs, expr) \
  DISTIR_ASSIGN_OR_RETURN_IMPL(DISTIR_STATUS_CONCAT(_distir_or_, __LINE__), lhs, expr)
#define DISTIR_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return std::move(tmp).status();     \
  lhs = std::move(tmp).value()
