// DISTIR_CHECK: invariants that only a bug can break.
//
// Bad input is a Status (status.h); a broken invariant aborts with file, line
// and a message, so that it is never mistaken for a user error.
//   DISTIR_CHECK(i < num_inputs()) << "input index out of range";
// DISTIR_DCHECK is the same in debug builds and compiles to nothing in NDEBUG.

#pragma once

#include <sstream>

namespace distir::internal {

/// Collects the message of a failed check and aborts in its destructor.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  [[noreturn]] ~CheckFailure();
  CheckFailure(const CheckFailure&) = delete;
  CheckFailure& operator=(const CheckFailure&) = delete;

  template <typename T>
  CheckFailure& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  std::ostringstream stream_;
};

/// Lets `DISTIR_CHECK(c) << x` be a void expression in the ternary below.
struct Voidify {
  void operator&(const CheckFailure&) {}
};

}  // namespace distir::internal

#define DISTIR_CHECK(cond)                 \
  (cond) ? (void)0                         \
         : ::distir::internal::Voidify() & \
               ::distir::internal::CheckFailure(__FILE__, __LINE__, #cond)

#ifdef NDEBUG
#define DISTIR_DCHECK(cond) \
  true ? (void)0 : ::distir::internal::Voidify() & ::distir::internal::CheckFailure("", 0, "")
#else
#define DISTIR_DCHECK(cond) DISTIR_CHECK(cond)
#endif
