// Abstract domains: the pluggable half of the abstract interpreter.
//
// A domain over a value type V (Type for the shape domain, MixedValue for the
// mixed abstract/concrete domain, later host tensors for the reference
// executor) maps each op kind to one or more transfer functions ("rules"). The
// interpreter (interpreter.h) walks a function and asks the domain to apply the
// rule for each op. Several rules may be registered for one kind, each with an
// ArgPattern saying which inputs must be concrete; Apply() picks the most precise
// rule that matches the arguments at hand (paper §3: "a dynamic dispatch
// algorithm ... picks the most precise matching implementation").
//
// Rules are registered explicitly by a domain's Register*Rules() function, never
// by static initializers (STYLE.md §4).

#pragma once

#include <bit>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "ir/op.h"
#include "ir/type.h"
#include "support/check.h"
#include "support/status_or.h"

namespace distir {

/// What the interpreter needs to know about a domain's value type V. Each value
/// type specializes it (shape_domain.h for Type, mixed_domain.h for MixedValue):
///
///   static bool IsConcrete(const V& v);       // v is a concrete value (not an abstraction)
///   static V FromType(const Type& type);       // the abstract value of `type`
///   static const Type& TypeOf(const V& v);     // the type of v (a concrete value has one too)
///   static V WithDevice(const V& v, DeviceId device);  // v moved to `device` (or to none)
template <typename V>
struct ValueTraits;

/// A read-only view of the arguments of one op: a contiguous array of pointers
/// into the interpreter's value table. Valid only during the rule call.
template <typename V>
class ArgList {
 public:
  ArgList(const V* const* args, int size) : args_(args), size_(size) {}

  int size() const { return size_; }
  /// REQUIRES: 0 <= i < size().
  const V& operator[](int i) const {
    DISTIR_DCHECK(i >= 0 && i < size_) << "argument index " << i << " out of range";
    return *args_[i];
  }

 private:
  const V* const* args_;
  int size_;
};

/// Which arguments a rule needs to be concrete. The precision of a matching rule
/// is the number of concrete positions it requires; dispatch prefers higher
/// precision, and among equals the rule registered first.
struct ArgPattern {
  /// Bit i set: input i must be concrete (inputs beyond 63 cannot be required).
  uint64_t concrete = 0;
  /// Every input must be concrete (for variadic ops such as Concat).
  bool all_concrete = false;
  /// The rule applies only to ops with exactly this many inputs; -1: any number.
  int arity = -1;

  /// Matches any arguments, precision 0 (a purely abstract rule).
  static ArgPattern Abstract() { return {}; }
  /// Inputs at `positions` must be concrete; the op must have `arity` inputs (-1: any).
  static ArgPattern ConcreteAt(std::initializer_list<int> positions, int arity = -1) {
    ArgPattern p;
    for (int i : positions) {
      DISTIR_CHECK(i >= 0 && i < 64) << "pattern position " << i << " out of range";
      p.concrete |= uint64_t{1} << i;
    }
    p.arity = arity;
    return p;
  }
  /// All inputs must be concrete; the op must have `arity` inputs (-1: any).
  static ArgPattern AllConcrete(int arity = -1) {
    ArgPattern p;
    p.all_concrete = true;
    p.arity = arity;
    return p;
  }
};

/// A rule table over value type V, keyed by OpKind.
///
/// A rule maps the op and its arguments to one value per result, or returns an
/// error located at the op (op.loc()). Rules are plain functions: they keep no
/// state, so one domain may serve any number of interpretations concurrently
/// once registration is done. Not thread-safe during registration.
template <typename V>
class Domain {
 public:
  using Results = std::vector<V>;
  using Rule = StatusOr<Results> (*)(const Op& op, ArgList<V> args);

  /// `name` appears in errors: "no rule for op Foo in domain 'shape'".
  explicit Domain(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }

  /// Adds `rule` for `kind`, applicable when the arguments match `pattern`.
  /// REQUIRES: kind != OpKind::kCall (calls are the interpreter's business).
  void Register(OpKind kind, Rule rule, ArgPattern pattern = ArgPattern::Abstract()) {
    DISTIR_CHECK(kind != OpKind::kCall && rule != nullptr) << "bad rule registration";
    size_t index = static_cast<size_t>(kind);
    if (rules_.size() <= index) rules_.resize(index + 1);
    rules_[index].push_back({rule, pattern});
  }

  /// Sets the rule used when no registered rule matches (e.g. the mixed domain
  /// falls back to the shape rules). Without one, such ops are Unimplemented.
  void SetFallback(Rule rule) { fallback_ = rule; }

  /// True when at least one rule is registered for `kind` (ignoring the fallback).
  bool HasRule(OpKind kind) const {
    size_t index = static_cast<size_t>(kind);
    return index < rules_.size() && !rules_[index].empty();
  }

  /// The most precise rule registered for op.kind() that matches `args`, or the
  /// fallback (possibly nullptr) when none matches.
  Rule Select(const Op& op, ArgList<V> args) const {
    size_t index = static_cast<size_t>(op.kind());
    if (index >= rules_.size()) return fallback_;
    const std::vector<Entry>& entries = rules_[index];
    if (entries.size() == 1 && IsAbstractPattern(entries[0].pattern)) return entries[0].rule;
    return SelectAmong(entries, args);
  }

  /// True when, were every argument of `op` abstract, Select() would pick the
  /// fallback: no registered rule for op.kind() matches all-abstract arguments
  /// of op.num_inputs(). Type inference uses it to run an op-by-op fast path
  /// while no value can become concrete (infer_types.cc).
  bool FallsBackOnAbstract(const Op& op) const {
    size_t index = static_cast<size_t>(op.kind());
    if (index >= rules_.size()) return true;
    const int n = op.num_inputs();
    for (const Entry& e : rules_[index]) {
      const ArgPattern& p = e.pattern;
      if (p.arity >= 0 && p.arity != n) continue;
      if (p.concrete != 0 || (p.all_concrete && n > 0)) continue;
      return false;
    }
    return true;
  }

  /// Applies the selected rule. Unimplemented (at the op) when there is none;
  /// InvalidArgument when the rule gives another number of results than the
  /// op defines.
  StatusOr<Results> Apply(const Op& op, ArgList<V> args) const {
    Rule rule = Select(op, args);
    if (rule == nullptr) {
      return Unimplemented(op.loc())
             << "no rule for op " << op.Name() << " in domain '" << name_ << "'";
    }
    StatusOr<Results> results = rule(op, args);
    if (results.ok() && static_cast<int>(results->size()) != op.num_results()) {
      return InvalidArgument(op.loc()) << op.Name() << " gives " << results->size()
                                       << " results here, but the op has " << op.num_results();
    }
    return results;
  }

 private:
  struct Entry {
    Rule rule;
    ArgPattern pattern;
  };

  static bool IsAbstractPattern(const ArgPattern& p) {
    return p.concrete == 0 && !p.all_concrete && p.arity < 0;
  }

  Rule SelectAmong(const std::vector<Entry>& entries, ArgList<V> args) const {
    const int n = args.size();
    uint64_t mask = 0;
    bool all = true;
    for (int i = 0; i < n; ++i) {
      bool concrete = ValueTraits<V>::IsConcrete(args[i]);
      all = all && concrete;
      if (concrete && i < 64) mask |= uint64_t{1} << i;
    }
    Rule best = fallback_;
    int best_precision = -1;
    for (const Entry& e : entries) {
      const ArgPattern& p = e.pattern;
      if (p.arity >= 0 && p.arity != n) continue;
      if (p.all_concrete && !all) continue;
      if ((p.concrete & ~mask) != 0) continue;
      int precision = p.all_concrete ? n : std::popcount(p.concrete);
      // Strictly greater: among equally precise rules the first registered wins.
      if (precision > best_precision) {
        best = e.rule;
        best_precision = precision;
      }
    }
    return best;
  }

  std::string name_;
  std::vector<std::vector<Entry>> rules_;  ///< indexed by OpKind
  Rule fallback_ = nullptr;
};

}  // namespace distir
