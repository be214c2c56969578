// The factorisation of a reshape (factor_rule.h, AddReshapeFactors).
//
// Walk the input and output dims together (extent-1 dims carry no factor).
// While one remaining extent divides the other, the smaller becomes a common
// factor: [1430] -> [10, 11, 13] gives factors 10, 11 and 13, the input dim
// made of all three (major first), and [8, 16, 64] -> [8, 1024] makes the
// output's 1024 of the factors 16 and 64. When neither divides the other
// ([6, 4] -> [4, 6]) the rest of both shapes has no common refinement and gets
// need-replication factors, so a dim sharded there is gathered first.

#include "sharding/factor_rule.h"

namespace distir::sharding {
namespace {

// The extent of the first dim at or after `d` that is not 1 (moving `d`
// there), or 0 past the end.
int64_t NextDim(const std::vector<int64_t>& shape, size_t& d) {
  while (d < shape.size() && shape[d] == 1) ++d;
  return d < shape.size() ? shape[d] : 0;
}

// Gives the dims from `d` on (the first with `left` of its extent uncovered)
// need-replication factors.
void Opaque(const std::vector<int64_t>& shape, size_t d, int64_t left, TensorFactors& tf,
            FactorRule& rule) {
  for (; d < shape.size(); ++d, left = d < shape.size() ? shape[d] : 1) {
    if (left != 1) tf[d].push_back(rule.AddFactor(left, true));
  }
}

}  // namespace

void AddReshapeFactors(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                       FactorRule& rule) {
  TensorFactors& a = rule.operands[0];
  TensorFactors& b = rule.results[0];
  a.assign(in.size(), {});
  b.assign(out.size(), {});
  size_t i = 0, j = 0;
  int64_t ra = NextDim(in, i), rb = NextDim(out, j);
  while (ra != 0 && rb != 0) {
    if (ra % rb != 0 && rb % ra != 0) {
      Opaque(in, i, ra, a, rule);
      Opaque(out, j, rb, b, rule);
      return;
    }
    int64_t size = std::min(ra, rb);
    int f = rule.AddFactor(size);
    a[i].push_back(f);
    b[j].push_back(f);
    ra /= size;
    rb /= size;
    if (ra == 1) ra = NextDim(in, ++i);
    if (rb == 1) rb = NextDim(out, ++j);
  }
}

}  // namespace distir::sharding
