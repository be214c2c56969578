// A grid point's template for another micro-batch, written from two built ones.
//
// Grid points that differ only in their micro-batch m (the same T, P, v, D,
// schedule, recomputation, ZeRO and sequence parallelism) have partitioned
// templates (grid.h) with the same ops, names, devices and attributes in
// which only integers proportional to m differ: the extents of values that
// carry the batch and the shape constants of partitioned Reshapes. From two
// templates built at micro-batches m_a != m_b, every integer of the template
// (type extents; integer, float and dense-tensor attribute elements) is either
// equal in both, so it does not depend on m, or in the ratio m_a : m_b, so it
// is c * m, written as x_a * m / m_a. Anything else refuses
// (FailedPrecondition) and the caller builds the template: another op, name,
// device, dtype, string or attribute; a number that is neither equal nor in
// ratio; an extent c * m that is not whole at m.
//
// Two points determine c * m; what is not linear in m must not pass as such.
// An uneven split of m over n devices (pieces ceil(m / n) and the rest) is
// linear at m_a and m_b only when both are multiples of n, and then c * m =
// m / n is not whole at any m that is not, so it refuses there. The search
// checks the rest (search/retype_test.cc, tests/unit/sharding): the written
// template equals, op for op, the one built at m.

#pragma once

#include <cstdint>
#include <vector>

#include "sharding/grid.h"
#include "support/status.h"
#include "support/status_or.h"

namespace distir::sharding {

/// Which integers of a family's template are c * m, learned from two of its
/// templates; it then writes the template of any micro-batch from the first.
class MicrobatchScaling {
 public:
  /// From `a` built at micro-batch `ma` and `b` at `mb`. REQUIRES: ma != mb,
  /// both positive. FailedPrecondition naming the first difference that is
  /// not c * m.
  static StatusOr<MicrobatchScaling> Learn(const GridTemplate& a, int64_t ma, const GridTemplate& b,
                                           int64_t mb);

  /// The template of micro-batch `m` (> 0) written from `a`, the template
  /// Learn was given as `a`. FailedPrecondition where c * m is not whole.
  StatusOr<GridTemplate> Retype(const GridTemplate& a, int64_t m) const;

 private:
  int64_t ma_ = 1;
  /// Per integer of the template, in the order of the walk (retype_template.cc):
  /// true where it is c * m.
  std::vector<bool> scales_;
};

}  // namespace distir::sharding
