#include "support/check.h"

#include <cstdio>
#include <cstdlib>

namespace distir::internal {

CheckFailure::CheckFailure(const char* file, int line, const char* condition) {
  stream_ << file << ":" << line << ": check failed: " << condition << ": ";
}

CheckFailure::~CheckFailure() {
  // stderr and abort are right here: a failed check is a bug, not bad input.
  std::fprintf(stderr, "%s\n", stream_.str().c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace distir::internal
