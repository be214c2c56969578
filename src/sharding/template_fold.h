// A function written from two built ones, one a part larger (docs/cost_model.md
// §3.6): the engine of the layer fold (fold_layers.h) and the stage fold
// (fold_stages.h).
//
// `a` and `b` are templates of the same grid point, `b` with one more part
// of a repeated kind between the first and the last (a middle layer per
// model chunk; middle pipeline stages). Learn finds, in `b`, the parameters,
// ops and returned values of `a`, each named as `a` names it once the spec
// reads `b`'s names in `a`'s terms (FoldSpec::NameInA): each of `a`'s is the
// first of `b`'s named as it exactly after the previous match, or by a
// *shifted* name (a value of the middle part named for its neighbour's,
// FoldNames) where no later one of `b`'s is named as it exactly. The rest of
// `b` is *inserted*: the middle part. Each matched op must equal its
// counterpart (kind, attributes and result types as the spec compares them,
// shardings) and read what it reads, except where it reads an inserted value
// Y in place of X: a *chain* through the middle part (a layer's input to its
// output, a gradient from the part above to the one below; at most one Y per
// X). Anything else refuses (FailedPrecondition).
//
// Write emits `b` with each run of inserted ops (consecutive; a stage's setup
// ops among its forward ops) FoldWriter::copies() times: copy j of a chain reads copy j - 1's Y
// where the middle part reads X (copy 1 reads X), and a matched reader of Y
// reads the last copy's. A backward run (one holding backward ops, which
// must hold no forward ones), and a chain whose Y a backward op computes,
// counts its copies from the last, as the backward pass walks the
// parts down. The writer names, types and attributes each copy (j = 0: the
// matched ops).

#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/function.h"
#include "support/status_or.h"

namespace distir::sharding {

/// A name of `b` in `a`'s terms: `exact` (empty: the middle part's own), and
/// `shifted` (non-empty only for a middle part's name that may stand for a
/// neighbour's).
struct FoldNames {
  std::string exact;
  std::string shifted;
};

/// How Learn reads `b` in `a`'s terms.
class FoldSpec {
 public:
  virtual ~FoldSpec() = default;
  virtual FoldNames NameInA(const std::string& name) const = 0;
  /// True when `b`'s type or attributes are `a`'s (by default: equal).
  virtual bool SameType(const Type& b, const Type& a) const { return b == a; }
  virtual bool SameAttrs(const AttrMap& b, const AttrMap& a) const { return b == a; }
};

/// How Write names, types and attributes copy j of `b`'s values and ops
/// (j = 0: the matched ones, j = 1 .. copies(): the inserted part's copies).
class FoldWriter {
 public:
  virtual ~FoldWriter() = default;
  virtual int copies() const = 0;
  virtual std::string Name(const std::string& name, int j) const = 0;
  /// False where types and attributes are copied as they are.
  virtual bool Retypes() const { return false; }
  virtual Type TypeOf(const Type& t, int /*j*/) const { return t; }
  virtual AttrMap Attrs(const AttrMap& attrs, int /*j*/) const { return attrs; }
};

class TemplateFold {
 public:
  /// From `a` and `b` (functions with ops tagged with tasks) read by `spec`.
  /// FailedPrecondition naming the first difference that is not an inserted
  /// middle part.
  static StatusOr<TemplateFold> Learn(const Function& a, const Function& b, const FoldSpec& spec);

  /// `b` with the inserted part written `writer.copies()` (>= 0) times; `b`
  /// is the function Learn was given as `b`, or one that differs from it in
  /// integers only (the same ops reading the same value ids).
  /// `images` (per op of `b`, may be empty) gives `written_images` per op
  /// written. FailedPrecondition where `b` is not of that structure.
  StatusOr<std::unique_ptr<Function>> Write(const Function& b, const FoldWriter& writer,
                                            const std::vector<double>& images,
                                            std::vector<double>& written_images) const;

 private:
  /// By `b`'s parameter, op and return index: inserted.
  std::vector<char> param_inserted_, op_inserted_, return_inserted_;
  /// By op index: its task phase (TaskPhase, -1 without a task).
  std::vector<int8_t> op_phase_;
  /// By value id: inserted; the chain partner (Y of an X, X of a Y; -1: none);
  /// the chain counts copies from the last (a backward Y).
  std::vector<char> value_inserted_;
  std::vector<int32_t> partner_;
  std::vector<char> descending_;
  /// `b`'s structure, to check a function Write is given: per op its kind
  /// and input ids (CSR), and the parameter and value counts.
  std::vector<int32_t> kinds_, input_begin_, inputs_;
  int num_params_ = 0, num_values_ = 0;
};

}  // namespace distir::sharding
