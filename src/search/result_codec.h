// The byte form of one configuration's result: how results travel between MPI
// ranks (MPI_Gatherv) and how the resume journal stores them (journal.h).
//
// Layout, little-endian as the host (every rank of a job and every restart of
// it runs on the same kind of machine): index i64, status i8, fits i8,
// iteration_time_s f64, throughput f64, peak_memory_bytes i64, num_ops i64,
// reason length i64, reason bytes, exposed_communication_s f64, the step figures
// (tokens_per_s, tflops_per_gpu, mfu f64; memory_at_peak 6 x i64; zero for
// models other than transformers). Doubles travel bit for bit, so a result read
// back equals the one computed: resumed and uninterrupted searches agree exactly.

#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "search/evaluator.h"

namespace distir::search {

/// Appends the byte form of `r` to `out`.
void PackResult(const ConfigResult& r, std::vector<char>& out);

/// Decodes one result from the `size` bytes at `p`; returns the bytes it used,
/// or nullopt when they do not hold a whole, well-formed result (too short, a
/// negative length or index, an unknown status).
std::optional<size_t> UnpackResult(const char* p, size_t size, ConfigResult& r);

}  // namespace distir::search
