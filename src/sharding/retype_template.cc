#include "sharding/retype_template.h"

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "ir/clone.h"

namespace distir::sharding {
namespace {

__extension__ typedef __int128 Wide;
constexpr double kExact = 9007199254740992.0;  // 2^53: whole doubles up to it are exact

bool Whole(double x) { return std::trunc(x) == x && std::abs(x) <= kExact; }

// Where an integer is (its function, and its value or op and attribute),
// spelled only when a check fails: the walk passes every integer of every
// op of the template, and spelling each place cost more than the checks.
struct Where {
  const std::string& fn;
  const distir::Value* value = nullptr;
  const distir::Op* op = nullptr;
  size_t index = 0;       // the op's
  std::string_view attr;  // the attribute's name, if any
  std::string str() const {
    if (value != nullptr) return fn + " %" + value->name();
    std::string s = fn + " op " + std::to_string(index) + " (" + op->Name() + ")";
    if (!attr.empty()) s.append(" ").append(attr);
    return s;
  }
  Where At(std::string_view name) const { return Where{fn, value, op, index, name}; }
};

// Learns, from integers at micro-batches ma and mb, which are c * m: visits
// each integer of the first template with its counterpart in the second.
class Learner {
 public:
  Learner(int64_t ma, int64_t mb) : ma_(ma), mb_(mb) {}
  static constexpr bool kLearns = true;

  bool Fail(std::string what) {
    if (error_.empty()) error_ = std::move(what);
    return false;
  }
  const std::string& error() const { return error_; }
  std::vector<bool> TakeScales() { return std::move(scales_); }

  bool Int(int64_t& x, int64_t other, const Where& where) {
    if (x == other) return Record(false);
    if (Wide{x} * mb_ != Wide{other} * ma_) return Fail(where.str() + " is not c * m");
    return Record(true);
  }
  bool Float(double& x, double other, const Where& where) {
    if (x == other) return Record(false);
    if (!Whole(x) || !Whole(other)) return Fail(where.str() + " is not c * m");
    auto xi = static_cast<int64_t>(x);
    return Int(xi, static_cast<int64_t>(other), where);
  }

 private:
  bool Record(bool scales) {
    scales_.push_back(scales);
    return true;
  }
  int64_t ma_, mb_;
  std::vector<bool> scales_;
  std::string error_;
};

// Writes each integer that is c * m at micro-batch m from its value at ma.
class Writer {
 public:
  Writer(const std::vector<bool>& scales, int64_t ma, int64_t m)
      : scales_(scales), ma_(ma), m_(m) {}
  static constexpr bool kLearns = false;

  bool Fail(std::string what) {
    if (error_.empty()) error_ = std::move(what);
    return false;
  }
  const std::string& error() const { return error_; }

  bool Int(int64_t& x, int64_t /*other*/, const Where& where) {
    bool scales = false;
    if (!Next(scales)) return false;
    return !scales || Scale(x, where);
  }
  bool Float(double& x, double /*other*/, const Where& where) {
    bool scales = false;
    if (!Next(scales)) return false;
    if (!scales) return true;
    auto xi = static_cast<int64_t>(x);
    if (!Scale(xi, where)) return false;
    if (std::abs(static_cast<double>(xi)) > kExact) return Fail(where.str() + " is too large at m");
    x = static_cast<double>(xi);
    return true;
  }
  bool Done() {
    if (next_ != scales_.size()) return Fail("the template is not the one learned from");
    return true;
  }

 private:
  // Whether the next integer is c * m; fails where the template has more
  // integers than the one learned from.
  bool Next(bool& scales) {
    if (next_ >= scales_.size()) return Fail("the template is not the one learned from");
    scales = scales_[next_++];
    return true;
  }
  // x = c * m_a written as c * m.
  bool Scale(int64_t& x, const Where& where) {
    const Wide at_m = Wide{x} * m_;
    if (at_m % ma_ != 0) return Fail(where.str() + " = c * m is not whole");
    x = static_cast<int64_t>(at_m / ma_);
    return true;
  }

  const std::vector<bool>& scales_;
  size_t next_ = 0;
  int64_t ma_, m_;
  std::string error_;
};

// Walks the integers of function `a` (with those of `b`, its counterpart,
// when learning), in one fixed order: parameter types, then per op its
// attributes and result types. A Writer rewrites them in `a` (and is given
// `a` as `b`, which it never reads); a Learner first checks that `b` has as
// many parameters, ops, results and attributes, then that everything but
// the integers is equal.
template <typename V>
class Walk {
 public:
  Walk(V& v, const std::string& fn) : v_(v), fn_(fn) {}

  bool Function(distir::Function& a, const distir::Function& b) {
    if constexpr (V::kLearns) {
      if (a.name() != b.name() || a.num_params() != b.num_params() ||
          a.ops().size() != b.ops().size() || a.returns().size() != b.returns().size())
        return v_.Fail(fn_ + ": the functions differ");
      for (size_t i = 0; i < a.returns().size(); ++i) {
        if (a.returns()[i]->id() != b.returns()[i]->id())
          return v_.Fail(fn_ + ": the returns differ");
      }
    }
    for (int i = 0; i < a.num_params(); ++i) {
      if (!Value(*a.param(i), *b.param(i))) return false;
    }
    for (size_t i = 0; i < a.ops().size(); ++i) {
      if (!Op(*a.ops()[i], *b.ops()[i], i)) return false;
    }
    return true;
  }

 private:
  bool Value(distir::Value& a, const distir::Value& b) {
    const Where where{fn_, &a, nullptr, 0, {}};
    if constexpr (V::kLearns) {
      if (a.name() != b.name()) return v_.Fail(where.str() + ": names differ");
      if ((a.sharding() == nullptr) != (b.sharding() == nullptr) ||
          (a.sharding() != nullptr && !(*a.sharding() == *b.sharding())))
        return v_.Fail(where.str() + ": shardings differ");
    }
    std::optional<Type> t = TypeOf(a.type(), b.type(), where);
    if (!t.has_value()) return false;
    if constexpr (!V::kLearns) a.set_type(std::move(*t));
    return true;
  }

  std::optional<Type> TypeOf(const Type& a, const Type& b, const Where& where) {
    if constexpr (V::kLearns) {
      if (a.kind() != b.kind() || (a.is_tuple() && a.elements().size() != b.elements().size()))
        return v_.Fail(where.str() + ": types differ"), std::nullopt;
    }
    if (a.is_tuple()) {
      std::vector<Type> elements;
      elements.reserve(a.elements().size());
      for (size_t i = 0; i < a.elements().size(); ++i) {
        std::optional<Type> e = TypeOf(a.elements()[i], V::kLearns ? b.elements()[i] : a, where);
        if (!e.has_value()) return std::nullopt;
        elements.push_back(std::move(*e));
      }
      return Type::Tuple(std::move(elements));
    }
    if (!a.is_tensor()) {
      if (V::kLearns && !(a == b)) return v_.Fail(where.str() + ": types differ"), std::nullopt;
      return a;
    }
    if constexpr (V::kLearns) {
      if (a.dtype() != b.dtype() || !(a.device() == b.device()) ||
          a.shape().size() != b.shape().size())
        return v_.Fail(where.str() + ": dtypes, devices or ranks differ"), std::nullopt;
    }
    Dims shape = a.shape();
    for (size_t i = 0; i < shape.size(); ++i) {
      if (!v_.Int(shape[i], V::kLearns ? b.shape()[i] : 0, where)) return std::nullopt;
    }
    return a.WithShape(std::move(shape));
  }

  bool Op(distir::Op& a, const distir::Op& b, size_t index) {
    const Where where{fn_, nullptr, &a, index, {}};
    if constexpr (V::kLearns) {
      if (a.kind() != b.kind() || (a.is_call() && a.callee() != b.callee()) ||
          a.num_inputs() != b.num_inputs() || a.num_results() != b.num_results() ||
          a.attrs().size() != b.attrs().size())
        return v_.Fail(where.str() + ": the ops differ");
      for (int k = 0; k < a.num_inputs(); ++k) {
        if (a.input(k)->id() != b.input(k)->id()) return v_.Fail(where.str() + ": inputs differ");
      }
    }
    auto ib = b.attrs().begin();
    std::vector<std::pair<std::string, Attribute>> changed;
    for (const auto& [name, attr] : a.attrs()) {
      const Attribute& other = V::kLearns ? ib->second : attr;
      if constexpr (V::kLearns) {
        if (ib->first != name || other.type() != attr.type())
          return v_.Fail(where.str() + ": attributes differ");
        ++ib;
      }
      std::optional<Attribute> x = AttributeOf(attr, other, where.At(name));
      if (!x.has_value()) return false;
      if (!V::kLearns && !(*x == attr)) changed.emplace_back(name, std::move(*x));
    }
    for (auto& [name, attr] : changed) a.SetAttr(name, std::move(attr));
    for (int k = 0; k < a.num_results(); ++k) {
      if (!Value(*a.result(k), *b.result(k))) return false;
    }
    return true;
  }

  std::optional<Attribute> AttributeOf(const Attribute& a, const Attribute& b, const Where& where) {
    switch (a.type()) {
      case AttrType::kInt: {
        int64_t x = a.AsInt();
        if (!v_.Int(x, b.AsInt(), where)) return std::nullopt;
        return Attribute(x);
      }
      case AttrType::kFloat: {
        double x = a.AsFloat();
        if (!v_.Float(x, b.AsFloat(), where)) return std::nullopt;
        return Attribute(x);
      }
      case AttrType::kInts: {
        std::vector<int64_t> v = a.AsInts();
        if (V::kLearns && v.size() != b.AsInts().size())
          return v_.Fail(where.str() + ": sizes differ"), std::nullopt;
        for (size_t i = 0; i < v.size(); ++i) {
          if (!v_.Int(v[i], V::kLearns ? b.AsInts()[i] : 0, where)) return std::nullopt;
        }
        return Attribute(std::move(v));
      }
      case AttrType::kFloats:
        return Floats(a.AsFloats(), b.AsFloats(), where,
                      [](std::vector<double> v) { return Attribute(std::move(v)); });
      case AttrType::kTensor: {
        const DenseTensor& ta = a.AsTensor();
        const DenseTensor& tb = b.AsTensor();
        if (V::kLearns && (ta.dtype != tb.dtype || ta.shape != tb.shape))
          return v_.Fail(where.str() + ": constants of other shapes"), std::nullopt;
        return Floats(ta.values, tb.values, where, [&](std::vector<double> v) {
          DenseTensor t{ta.dtype, ta.shape, std::move(v)};
          return Attribute(std::move(t));
        });
      }
      default:
        if (V::kLearns && !(a == b)) return v_.Fail(where.str() + " differs"), std::nullopt;
        return a;
    }
  }

  template <typename Make>
  std::optional<Attribute> Floats(const std::vector<double>& a, const std::vector<double>& b,
                                  const Where& where, Make make) {
    if (V::kLearns && a.size() != b.size())
      return v_.Fail(where.str() + ": sizes differ"), std::nullopt;
    std::vector<double> v = a;
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v_.Float(v[i], V::kLearns ? b[i] : 0, where)) return std::nullopt;
    }
    return make(std::move(v));
  }

  V& v_;
  const std::string& fn_;
};

}  // namespace

StatusOr<MicrobatchScaling> MicrobatchScaling::Learn(const GridTemplate& a, int64_t ma,
                                                     const GridTemplate& b, int64_t mb) {
  if (a.local != b.local || a.keep_device != b.keep_device || a.op_images != b.op_images ||
      a.part != b.part || a.module.meshes().size() != b.module.meshes().size() ||
      a.module.functions().size() != b.module.functions().size())
    return FailedPrecondition() << "the templates differ in more than their micro-batch";
  for (size_t i = 0; i < a.module.meshes().size(); ++i) {
    if (!(*a.module.meshes()[i] == *b.module.meshes()[i]))
      return FailedPrecondition() << "the templates' meshes differ";
  }
  Learner learner(ma, mb);
  for (size_t i = 0; i < a.module.functions().size(); ++i) {
    // The learner writes nothing: the walk only reads `a` through it.
    distir::Function& fa = *a.module.functions()[i];
    if (!Walk<Learner>(learner, "@" + fa.name()).Function(fa, *b.module.functions()[i]))
      return FailedPrecondition() << "micro-batches " << ma << " and " << mb << ": "
                                  << learner.error();
  }
  MicrobatchScaling s;
  s.ma_ = ma;
  s.scales_ = learner.TakeScales();
  return s;
}

StatusOr<GridTemplate> MicrobatchScaling::Retype(const GridTemplate& a, int64_t m) const {
  GridTemplate out;
  out.local = a.local;
  out.keep_device = a.keep_device;
  out.op_images = a.op_images;
  out.part = a.part;
  for (const std::unique_ptr<Mesh>& mesh : a.module.meshes()) out.module.AddMesh(*mesh);
  Writer writer(scales_, ma_, m);
  for (const std::unique_ptr<distir::Function>& f : a.module.functions()) {
    std::unique_ptr<distir::Function> fn = CloneFunction(*f);
    if (!Walk<Writer>(writer, "@" + fn->name()).Function(*fn, *fn))
      return FailedPrecondition() << "micro-batch " << m << " from " << ma_ << ": "
                                  << writer.error();
    out.module.AddFunction(std::move(fn));
  }
  if (!writer.Done()) return FailedPrecondition() << writer.error();
  return out;
}

}  // namespace distir::sharding
