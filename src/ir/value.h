// SSA values.
//
// A Value is defined exactly once: either as a parameter of its function or as
// a result of one op. Values are owned by their definer (the Function for
// parameters, the Op for results); `Value*` is a stable non-owning handle that
// lives as long as the defining Function. Every value has a dense id within its
// function so that analyses keep their state in side tables indexed by id.

#pragma once

#include <memory>
#include <string>
#include <utility>

#include "ir/sharding.h"
#include "ir/type.h"
#include "support/status.h"

namespace distir {

class Op;

class Value {
 public:
  // Taken by rvalue reference, each moved once into its member (as Op's).
  Value(int id, std::string&& name, Type&& type, Op* def, int index, SourceLoc&& loc)
      : id_(id),
        index_(index),
        type_(std::move(type)),
        def_(def),
        name_(std::move(name)),
        loc_(std::move(loc)) {}
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

  /// Dense id in [0, Function::num_values()).
  int id() const { return id_; }
  /// Name without the '%' sigil; empty for an anonymous result (printed "_").
  const std::string& name() const { return name_; }
  const Type& type() const { return type_; }
  void set_type(Type type) { type_ = std::move(type); }
  /// The op defining this value; nullptr for a function parameter.
  Op* def() const { return def_; }
  bool is_param() const { return def_ == nullptr; }
  /// Position among the definer's results (or the function's parameters).
  int index() const { return index_; }
  /// Where the value is defined in the source text, when it came from text.
  const SourceLoc& loc() const { return loc_; }
  /// Sets where the value is defined (the parser gives each result its own token).
  void set_loc(SourceLoc loc) { loc_ = std::move(loc); }

  /// How the value is laid out over a mesh in a global-view program
  /// (sharding.h), or nullptr when it has no sharding (yet).
  const Sharding* sharding() const { return sharding_.get(); }
  void set_sharding(const Sharding& sharding) { sharding_ = std::make_shared<Sharding>(sharding); }
  /// A temporary moved in, not copied (a copy is several allocations, below).
  void set_sharding(Sharding&& sharding) {
    sharding_ = std::make_shared<Sharding>(std::move(sharding));
  }
  /// If `from` has a sharding, this value gets the same one, shared rather
  /// than copied (shardings are immutable once set); else nothing changes.
  /// The passes that rebuild a function copy every value's sharding this way:
  /// a copy of a Sharding is several allocations (its mesh name, its dims'
  /// axis names), ~10 % of building a GPT-3 template before.
  void CopyShardingFrom(const Value& from) {
    if (from.sharding_ != nullptr) sharding_ = from.sharding_;
  }
  void clear_sharding() { sharding_.reset(); }

  /// "%name", or "_" when anonymous.
  std::string Ref() const { return name_.empty() ? std::string("_") : "%" + name_; }

 private:
  // The fields every analysis reads (id, type, definer) come first, so that
  // they share the value's first cache lines; names and locations follow.
  int id_;
  int index_;
  Type type_;
  Op* def_;
  std::string name_;
  SourceLoc loc_;
  std::shared_ptr<const Sharding> sharding_;  // rare: only global-view programs have them
};

}  // namespace distir
