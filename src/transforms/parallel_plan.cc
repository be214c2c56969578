// The mesh arithmetic of ParallelPlan and the @init / @collect functions.

#include "transforms/parallel_plan.h"

#include <map>

#include "ir/builder.h"

namespace distir::parallel {

int64_t StageOfLayer(int64_t layer, int64_t num_layers, int64_t stages) {
  if (layer < 0) return 0;
  if (layer >= num_layers) return stages - 1;
  const int64_t q = num_layers / stages;
  const int64_t rem = num_layers % stages;
  const int64_t long_span = rem * (q + 1);  // layers in the first `rem`, longer, stages
  return layer < long_span ? layer / (q + 1) : rem + (layer - long_span) / q;
}

std::vector<int64_t> PieceSizes(int64_t extent, int64_t pieces) {
  std::vector<int64_t> sizes(static_cast<size_t>(pieces), extent / pieces);
  for (int64_t i = 0; i < extent % pieces; ++i) ++sizes[static_cast<size_t>(i)];
  return sizes;
}

Type ShardType(const Type& full, TpSplit split, int64_t t, int64_t tp, int64_t zero_pieces,
               DeviceId device) {
  std::vector<int64_t> shape = full.shape();
  const size_t last = shape.empty() ? 0 : shape.size() - 1;
  switch (split) {
    case TpSplit::kReplicated:
      break;
    case TpSplit::kColumns:
      shape[last] = PieceSizes(shape[last], tp)[static_cast<size_t>(t)];
      break;
    case TpSplit::kRows:
      shape[0] = PieceSizes(shape[0], tp)[static_cast<size_t>(t)];
      break;
    case TpSplit::kQkvColumns:
      shape[last] = shape[last] / tp;  // 3 (d / T): T divides the heads, hence d
      break;
  }
  if (zero_pieces > 1) {
    if (shape.empty() || shape[0] % zero_pieces != 0) return Type();
    shape[0] /= zero_pieces;
  }
  return Type::Tensor(full.dtype(), std::move(shape), device);
}

namespace {

constexpr DeviceId kHost(0);

// Builds @init: caches every Split so that a parameter is cut once.
class InitBuilder {
 public:
  InitBuilder(const Function& seq, const ParallelPlan& plan) : seq_(seq), plan_(plan), b_("init") {}

  StatusOr<std::unique_ptr<Function>> Build() && {
    for (const auto& p : seq_.params()) {
      const Type& t = p->type();
      inputs_.push_back(b_.Param(p->name(), Type::Tensor(t.dtype(), t.shape(), kHost)));
    }
    std::vector<Value*> out;
    for (const ParamSource& src : plan_.params) out.push_back(Place(Source(src), src.device));
    b_.Return(std::move(out));
    return std::move(b_).Finish();
  }

 private:
  // Piece `index` of `v` cut along `axis` into `sizes`.
  Value* Piece(Value* v, int64_t axis, const std::vector<int64_t>& sizes, size_t index) {
    const std::string key = std::to_string(v->id()) + "/" + std::to_string(axis) + "/" +
                            std::to_string(sizes.size());
    auto [it, fresh] = splits_.try_emplace(key);
    if (fresh) {
      std::vector<std::string> names;
      for (size_t i = 0; i < sizes.size(); ++i) names.push_back(v->name() + ".p" + std::to_string(i));
      it->second = b_.AddMulti(OpKind::kSplit, {v}, {{"axis", axis}, {"split", sizes}}, names);
    }
    return it->second[index];
  }

  Value* Source(const ParamSource& src) {
    Value* v = inputs_[static_cast<size_t>(src.seq_param)];
    const std::vector<int64_t>& shape = seq_.param(src.seq_param)->type().shape();
    const int64_t tp = plan_.options.tp;
    const auto t = static_cast<size_t>(src.shard);
    const auto last = static_cast<int64_t>(shape.size()) - 1;
    if (src.batch_piece >= 0) {
      const int64_t n = plan_.options.dp * plan_.options.microbatches;
      return Piece(v, 0, PieceSizes(shape[0], n), static_cast<size_t>(src.batch_piece));
    }
    switch (src.split) {
      case TpSplit::kReplicated:
        break;
      case TpSplit::kColumns:
        v = Piece(v, last, PieceSizes(shape[static_cast<size_t>(last)], tp), t);
        break;
      case TpSplit::kRows:
        v = Piece(v, 0, PieceSizes(shape[0], tp), t);
        break;
      case TpSplit::kQkvColumns: {
        const int64_t d = shape[static_cast<size_t>(last)] / 3;
        std::vector<Value*> parts;
        for (size_t k = 0; k < 3; ++k) {
          Value* qkv = Piece(v, last, {d, d, d}, k);
          parts.push_back(Piece(qkv, last, PieceSizes(d, tp), t));
        }
        v = b_.Add(OpKind::kConcat, parts, {{"axis", last}}, v->name() + ".qkv" + std::to_string(t));
        break;
      }
    }
    if (src.zero_piece >= 0) {
      const int64_t rows = v == inputs_[static_cast<size_t>(src.seq_param)]
                               ? shape[0]
                               : (src.split == TpSplit::kRows ? PieceSizes(shape[0], tp)[t] : shape[0]);
      v = Piece(v, 0, PieceSizes(rows, plan_.options.dp), static_cast<size_t>(src.zero_piece));
    }
    return v;
  }

  Value* Place(Value* v, DeviceId device) {
    if (device != kHost) return b_.Add(OpKind::kSend, {v}, {{"device", device}}, v->name() + ".to");
    // A result must be computed in the function (not a parameter passed through).
    return b_.Add(OpKind::kIdentity, {v}, {}, v->name() + ".id");
  }

  const Function& seq_;
  const ParallelPlan& plan_;
  FunctionBuilder b_;
  std::vector<Value*> inputs_;
  std::map<std::string, std::vector<Value*>> splits_;
};

// Builds @collect from the sinks.
class CollectBuilder {
 public:
  CollectBuilder(const Function& program, const ParallelPlan& plan)
      : program_(program), plan_(plan), b_("collect") {}

  StatusOr<std::unique_ptr<Function>> Build() && {
    std::vector<Type> types(program_.returns().size());
    for (const ResultSink& sink : plan_.sinks) {
      for (size_t k = 0; k < sink.results.size(); ++k) types[static_cast<size_t>(sink.results[k])] = sink.types[k];
    }
    for (size_t j = 0; j < types.size(); ++j) {
      params_.push_back(b_.Param(program_.returns()[j]->name(), types[j]));
    }
    std::vector<Value*> out;
    for (const ResultSink& sink : plan_.sinks) {
      DISTIR_ASSIGN_OR_RETURN(Value * v, Assemble(sink));
      out.push_back(b_.Add(OpKind::kIdentity, {v}, {}, "out"));
    }
    b_.Return(std::move(out));
    return std::move(b_).Finish();
  }

 private:
  // Program result (r, t, m) of `sink`, moved to d0.
  Value* At(const ResultSink& sink, int64_t r, int64_t t, int64_t m) {
    const int index = sink.results[static_cast<size_t>((r * sink.shards + t) * sink.microbatches + m)];
    Value* v = params_[static_cast<size_t>(index)];
    if (v->type().device() == kHost) return v;
    return b_.Add(OpKind::kSend, {v}, {{"device", kHost}}, v->name() + ".home");
  }

  Value* Concat(std::vector<Value*> parts, int64_t axis) {
    if (parts.size() == 1) return parts[0];
    return b_.Add(OpKind::kConcat, std::move(parts), {{"axis", axis}}, "cat");
  }

  StatusOr<Value*> Assemble(const ResultSink& sink) {
    const int64_t rank = static_cast<int64_t>(sink.types.front().rank());
    auto shard_axis = [&]() -> int64_t { return sink.split == TpSplit::kRows ? 0 : rank - 1; };
    switch (sink.kind) {
      case OutputKind::kSum: {
        Value* sum = At(sink, 0, 0, 0);
        for (int64_t r = 1; r < sink.replicas; ++r) sum = b_.Add(OpKind::kAdd, {sum, At(sink, r, 0, 0)}, {}, "sum");
        return sum;
      }
      case OutputKind::kBatchConcat: {
        std::vector<Value*> rows;
        for (int64_t r = 0; r < sink.replicas; ++r) {
          for (int64_t m = 0; m < sink.microbatches; ++m) {
            std::vector<Value*> shards;
            for (int64_t t = 0; t < sink.shards; ++t) shards.push_back(At(sink, r, t, m));
            rows.push_back(Concat(std::move(shards), shard_axis()));
          }
        }
        return Concat(std::move(rows), 0);
      }
      case OutputKind::kUpdated: {
        std::vector<Value*> shards;
        for (int64_t t = 0; t < sink.shards; ++t) {
          std::vector<Value*> pieces;
          for (int64_t r = 0; r < sink.replicas; ++r) pieces.push_back(At(sink, r, t, 0));
          shards.push_back(Concat(std::move(pieces), 0));
        }
        return Concat(std::move(shards), shard_axis());
      }
    }
    return Internal() << "unknown output kind";
  }

  const Function& program_;
  const ParallelPlan& plan_;
  FunctionBuilder b_;
  std::vector<Value*> params_;
};

}  // namespace

StatusOr<std::unique_ptr<Function>> BuildInit(const Function& seq, const Function& program,
                                              const ParallelPlan& plan) {
  (void)program;
  return InitBuilder(seq, plan).Build();
}

StatusOr<std::unique_ptr<Function>> BuildCollect(const Function& seq, const Function& program,
                                                 const ParallelPlan& plan) {
  (void)seq;
  return CollectBuilder(program, plan).Build();
}

}  // namespace distir::parallel
