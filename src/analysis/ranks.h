// Ranks of a sample, the first step of every rank statistic.
//
// Spearman's rho (rank_correlation.h) is Pearson's correlation of the ranks that
// AverageRanks() returns; giving tied values the mean of the ranks they span is
// what makes that definition right in the presence of ties (the "fractional
// ranking" of statistics textbooks and of scipy.stats.rankdata's default).

#pragma once

#include <vector>

namespace distir::analysis {

/// 1-based ranks of `values` in ascending order; each group of equal values gets
/// the mean of the ranks it spans: {10, 20, 20, 30} -> {1, 2.5, 2.5, 4}.
/// The result has one entry per input, in input order. NaN is not supported
/// (REQUIRES: no NaN in `values`).
std::vector<double> AverageRanks(const std::vector<double>& values);

/// True when every value equals the first (and for an empty sample): such a
/// sample has no rank variance, so no rank statistic is defined on it.
bool AllEqual(const std::vector<double>& values);

/// -1, 0 or 1 by the sign of `v`: whether a pair is concordant (Kendall's tau,
/// pair agreement) is the product of two such signs.
int Sign(double v);

}  // namespace distir::analysis
