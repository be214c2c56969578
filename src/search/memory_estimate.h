// distir's own memory for one configuration, estimated before it is built.
//
// Building and simulating a distributed program holds its IR (ops, values,
// types, attributes) and the simulator's per-op state at once, so the peak
// resident memory of the process grows with the program's op count, which the
// configuration's counts (D, T, P, K, the sequential model's ops) give before
// anything is built. The evaluator (evaluator.h) refuses a configuration whose
// estimate is above the --max-memory limit as status too-large, so that no
// configuration can get the process killed by the kernel. The constants are
// measured peaks (/usr/bin/time -v) with a margin; docs/configs.md ("Memory of
// distir itself") lists the measurements they must stay above.

#pragma once

#include <cstdint>
#include <string>

#include "ir/function.h"
#include "support/status_or.h"
#include "transforms/parallel_options.h"

namespace distir::search {

/// The process, the sequential model and the profile: measured 23-31 MiB.
inline constexpr double kBaseMemoryBytes = 64.0 * 1024 * 1024;
/// Per op of the distributed program, built and simulated: measured 590-725.
inline constexpr double kMemoryBytesPerOp = 768;
/// Per op, on top, when a trace is recorded and kept (search's traces, simulate
/// --trace): measured 2.6-4.9 KiB.
inline constexpr double kTraceMemoryBytesPerOp = 8192;
/// Per op, on top, for `distir simulate --trace`, which streams its Chrome trace
/// to the file (sim/chrome_trace.h) and keeps only the simulator's events:
/// measured 37 B (GPT-3 175B on 64 GPUs, 4.8 M ops: 5.08 GB peak without the
/// trace, 5.26 GB with it, a 1.96 GB trace file).
inline constexpr double kStreamedTraceMemoryBytesPerOp = 256;
/// Per op of an expanded program (ir/expanded_program.h: the search's copies of
/// a one-microbatch template, docs/cost_model.md §3.2), ordered and simulated:
/// measured 165 (gpt3-1.3b, D 8 T 2 P 4 K 64, 2.16 M ops: 440 MB peak, against
/// 2.00 GB built whole) and 128 (Megatron's 1T on 512 GPUs, T 8 P 64 K 512,
/// 9.05e7 ops: 11.6 GB peak).
inline constexpr double kExpandedMemoryBytesPerOp = 192;
/// Per op of a program simulated from kinds of segments
/// (ir/segmented_program.h, docs/cost_model.md §3.3): measured 1.7 on
/// GPT-3 175B on 1024 A100s (T 8, micro batch 1: P 16, 2.4e7 ops of replica
/// 0, 296 MB peak; P 64, 9.8e7 ops, 420 MB).
inline constexpr double kSegmentedMemoryBytesPerOp = 8;
/// Per op of the sequential model, for the passes on its global view that
/// build a template (microbatches, stages, recomputation, shardings): up to
/// 16 KiB measured as what the template and the copies leave unexplained
/// (37-144 MB on GPT-3 175B's 8971 ops, the most with P 8 and v 2-3).
inline constexpr double kGlobalViewMemoryBytesPerOp = 24576;
/// The default limit's share of the machine's memory (MachineMemoryBytes()).
inline constexpr double kDefaultMemoryFraction = 0.8;

/// An upper-ish estimate of the ops of Parallelize(seq, o), n = seq's ops:
///   R T (K (m n + 4 P) + n)
/// with R = D replicas (1 when `one_replica`), m = 1.25, + 0.5 with
/// recomputation, + 0.5 with ZeRO stage 3 (their extra forward and gathers per
/// microbatch); 4 P covers the sends between stages and the per-iteration n
/// the optimizer and gradient reduction. In double: it may exceed int64.
double EstimateProgramOps(const Function& seq, const ParallelOptions& o, bool one_replica);

/// Peak bytes of building and simulating a program of `ops` ops:
/// kBaseMemoryBytes + ops (kMemoryBytesPerOp [+ kTraceMemoryBytesPerOp]).
double EstimateMemoryBytes(double ops, bool with_trace);

/// The same for a program of `ops` ops simulated as copies of its template of
/// one microbatch (EstimateProgramOps with K = 1 ops, built as IR):
/// kBaseMemoryBytes + template ops kMemoryBytesPerOp + ops kExpandedMemoryBytesPerOp.
double EstimateExpandedMemoryBytes(double ops, double template_ops);

/// The same simulated from kinds of segments (the search's default), with the
/// template built for the devices simulated (`template_ops` of them) from a
/// sequential model of `sequential_ops` ops: kBaseMemoryBytes +
/// sequential ops kGlobalViewMemoryBytesPerOp + 2 template ops
/// kMemoryBytesPerOp + ops kSegmentedMemoryBytesPerOp (the factor 2: the
/// template's ops and the kinds and costs the simulation keeps of them).
/// Measured 1.6-3.2 times below it on six GPT-3 175B points on 1024 A100s
/// (docs/configs.md, "Memory of distir itself").
double EstimateSegmentedMemoryBytes(double ops, double template_ops, double sequential_ops);

/// ResourceExhausted when `estimate_bytes` is above `limit_bytes` (0: no limit),
/// e.g. "needs about 26.10 GiB of memory to build and simulate its program of
/// about 3.40e+07 ops, above the limit of 18.60 GiB (--max-memory)".
Status CheckMemoryEstimate(double estimate_bytes, double ops, int64_t limit_bytes);

/// The default --max-memory: kDefaultMemoryFraction of MachineMemoryBytes(),
/// shared by `processes_on_machine` processes; 0 (no limit) when the machine's
/// memory is unknown. REQUIRES: processes_on_machine >= 1.
int64_t DefaultMaxMemory(int processes_on_machine);

/// A --max-memory value: a size with a unit (ByteSizeUnits()) or "none" (0, no
/// limit). InvalidArgument naming the flag otherwise.
StatusOr<int64_t> ParseMaxMemory(const std::string& text);

}  // namespace distir::search
