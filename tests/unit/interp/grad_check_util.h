// Central-difference gradients for the finite-difference tests of the
// gradient kernels (cpu_grad_test.cc, cpu_transformer_ops_test.cc), in f64.
//
// For a forward program y = F(args) and random weights c of y's shape, the
// objective L = sum(c * y) has dL/d(args[k]) = the backward program's output
// with dy = c. NumericGradient gives the central difference
// (L(a + h) - L(a - h)) / 2h, h = kGradStep = 1e-5: its truncation error is
// O(h^2) ~ 1e-10 and its rounding error about 1e-16 * |L| / h ~ 1e-10 for the
// O(1) values the tests use.

#pragma once

#include <utility>
#include <vector>

#include "cpu_test_util.h"

namespace distir::testing {

inline constexpr double kGradStep = 1e-5;

/// The results of `m`'s entry on `args`; aborts on an error.
inline std::vector<HostValue> RunOrDie(const Module& m, std::vector<HostValue> args) {
  StatusOr<std::vector<HostValue>> out = Execute(m, *m.entry(), std::move(args));
  DISTIR_CHECK(out.ok()) << out.status().ToString();
  return *std::move(out);
}

/// L = sum(c * y) for y = the first result of `forward` on `args`.
inline double Objective(const Module& forward, const std::vector<HostValue>& args,
                        const HostValue& c) {
  const DenseTensor y = RunOrDie(forward, args)[0].tensor();
  double sum = 0;
  for (size_t i = 0; i < y.values.size(); ++i) sum += c.tensor().values[i] * y.values[i];
  return sum;
}

/// Central differences of Objective with respect to every element of args[k].
inline HostValue NumericGradient(const Module& forward, std::vector<HostValue> args, int k,
                                 const HostValue& c) {
  const HostValue original = args[k];
  DenseTensor grad = original.tensor();
  for (size_t i = 0; i < grad.values.size(); ++i) {
    DenseTensor t = original.tensor();
    t.values[i] += kGradStep;
    args[k] = HostValue::Tensor(t, original.device());
    const double plus = Objective(forward, args, c);
    t.values[i] -= 2 * kGradStep;
    args[k] = HostValue::Tensor(t, original.device());
    grad.values[i] = (plus - Objective(forward, args, c)) / (2 * kGradStep);
  }
  return HostValue::Tensor(grad, original.device());
}

}  // namespace distir::testing
