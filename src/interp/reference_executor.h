// The reference executor: runs a DistIR function on host tensors.
//
// It is the abstract interpreter (interpreter.h) over the CPU domain
// (cpu_domain.h): ops run one at a time in program order, communication ops in
// their global form, all arithmetic in double with each result rounded to its
// dtype. It is slow and simple on purpose: its job is to be obviously right, so
// that a transform is proven by running the sequential and the transformed
// program on the same seeded inputs and comparing the outputs with AllClose()
// (STYLE.md §7, semantic-equivalence tests). The conventions of the training
// ops (MSELossGrad's 1/N, the optimizer defaults) are listed in docs/ir.md,
// section "Reference executor".

#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "interp/cpu_domain.h"
#include "ir/function.h"
#include "support/status_or.h"

namespace distir {

/// Runs `fn` (a function of `module`) on `args`, one per parameter, and returns
/// the values it returns. Each argument must fit its parameter's type (same
/// kind, dtype, rank and device; a dynamic extent fits any). After each op of
/// `fn` whose results have known types in the IR (annotated or inferred), the
/// computed results are checked against them. Errors are located at the op.
/// `module` and `fn` are left unchanged; the call is thread-safe.
StatusOr<std::vector<HostValue>> Execute(const Module& module, const Function& fn,
                                         std::vector<HostValue> args);

/// How RandomInputs() fills parameters.
struct RandomInputOptions {
  enum class Distribution {
    /// N(0, 1) / sqrt(fan_in), fan_in = the second-to-last extent (the rows of
    /// a weight used as x W), the only extent of a rank-1 tensor, 1 for rank 0.
    kScaledNormal,
    /// U(-1, 1).
    kUniform,
  };
  Distribution distribution = Distribution::kScaledNormal;
  /// Integer parameters are uniform in [int_min, int_max] (both included);
  /// bool parameters are 0 or 1. The default keeps Gather indices valid for
  /// any axis of extent >= 2; wider ranges are the caller's business.
  int64_t int_min = 0;
  int64_t int_max = 1;
  /// Values used instead of random ones, by parameter name (without '%').
  std::map<std::string, HostValue> overrides;
};

/// One seeded random value per parameter of `fn`, of the parameter's type
/// (tuples element by element), rounded to its dtype; a parameter read as
/// Adam's second moment gets the absolute values (a variance is >= 0). Parameter i draws from
/// its own stream, derived from `seed` and i, so the values do not depend on
/// the other parameters or on `options.overrides`. The generator is a
/// splitmix64 with a Box-Muller transform: the same on every platform.
/// Errors: a parameter of unknown type or with a dynamic extent that is not
/// overridden; an override naming no parameter; int_min > int_max.
StatusOr<std::vector<HostValue>> RandomInputs(const Function& fn, uint64_t seed,
                                              const RandomInputOptions& options = {});

/// A random value of `type` drawn as RandomInputs() draws parameter values,
/// from the stream `seed`. REQUIRES: `type` is known with static extents;
/// options.int_min <= options.int_max.
HostValue RandomValue(const Type& type, uint64_t seed, const RandomInputOptions& options = {});

/// RandomValue(type, seed, options)'s elements without keeping them: drawn in
/// chunks on threads of their own (support/parallel_for.h), each chunk handed
/// to `sink(first, values)` (values[j] is element first + j, already rounded
/// to the dtype). For callers that store the values in another form at once
/// (an executor's buffers): a billion-parameter program's inputs as doubles
/// take gigabytes that only need to be paged in and written. `sink` is called
/// concurrently on disjoint ranges. REQUIRES: as RandomValue, and `type` is a
/// tensor or a scalar (no tuple).
void DrawRandomElements(const Type& type, uint64_t seed, const RandomInputOptions& options,
                        const std::function<void(int64_t first, std::span<const double> values)>& sink);

/// Ok when `actual` and `expected` have the same structure (tensor, scalar or
/// tuple; dtype and shape) and every element satisfies
/// |actual - expected| <= atol + rtol * |expected| (numpy's allclose; NaN
/// never matches). Devices are ignored: a distributed program's outputs are
/// compared with a sequential program's. Otherwise FailedPrecondition with a
/// report: how many elements differ, the largest absolute difference, and the
/// worst element by index with both values, e.g.
/// "3 of 64 elements differ (max |diff| 0.25); worst at [2, 5]: 1.5 vs 1.25".
Status AllClose(const HostValue& actual, const HostValue& expected, double rtol, double atol);

/// AllClose of each pair; the report names the position ("output 1: ...").
Status AllClose(const std::vector<HostValue>& actual, const std::vector<HostValue>& expected,
                double rtol, double atol);

}  // namespace distir
