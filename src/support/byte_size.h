// Sizes in bytes as people write them ("32 GiB", "512MB", "1.5e9 B") and as
// distir prints them, and the memory this machine can give one process.
//
// The experiment's memory_limit (search/experiment.cc) and the --max-memory
// flag of `distir search` and `distir simulate` read sizes here, so both take
// the same units; the bound on distir's own memory (search/memory_estimate.h)
// starts from MachineMemoryBytes().

#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace distir {

/// The units a size may carry, for error messages: "B, kB, MB, GB, TB, KiB, MiB, GiB, TiB".
const char* ByteSizeUnits();

/// Bytes per `unit` of ByteSizeUnits() ("" is bytes too), or nullopt.
std::optional<double> ByteUnitScale(std::string_view unit);

/// The bytes that `text` (a number, optional spaces, an optional unit of
/// ByteSizeUnits()) denotes, or nullopt when it is not of that form or not a
/// positive finite number. The result is not rounded and may exceed int64.
std::optional<double> ParseByteSize(std::string_view text);

/// "512 B", "6.19 KiB", "1.50 GiB": binary units, two decimals above 1 KiB.
std::string FormatByteSize(double bytes);

/// The memory this process may use on this machine: the physical memory, or
/// the cgroup's limit (memory.max, cgroup v2) when that is lower. nullopt when
/// neither can be read (not Linux).
std::optional<int64_t> MachineMemoryBytes();

}  // namespace distir
