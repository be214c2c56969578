// Reading a whole input file (an experiment, a hardware profile, a program)
// into memory, with limits.
//
// std::ifstream reads a character device such as /dev/zero until memory runs
// out, blocks on a FIFO without a writer and reads a directory as an empty
// file. ReadRegularFile() refuses everything but a regular file before reading
// and caps the size, so that a wrong path is an error naming it. Readers of
// text formats (YAML, IR) use it instead of opening streams themselves.

#pragma once

#include <cstdint>
#include <string>

#include "support/status_or.h"

namespace distir {

/// The largest input ReadRegularFile() reads by default: 64 MiB, far above
/// any experiment, profile or IR file we write, far below what a machine has.
inline constexpr int64_t kMaxInputFileBytes = int64_t{64} << 20;

/// The contents of the regular file at `path` (symbolic links are followed).
/// Errors, each naming `path`, without a location (callers that know where
/// the path came from attach one):
///   NotFound         "cannot open '<path>': <reason>" (no such file, no permission);
///   InvalidArgument  "'<path>' is a directory, not a regular file" (likewise a
///                    character or block device, a FIFO or a socket), checked on
///                    the opened file before anything is read, so that the check
///                    and the read see the same file;
///   InvalidArgument  "'<path>' is larger than <max_bytes> bytes";
///   Internal         a read error ("cannot read '<path>': <reason>").
StatusOr<std::string> ReadRegularFile(const std::string& path,
                                      int64_t max_bytes = kMaxInputFileBytes);

}  // namespace distir
