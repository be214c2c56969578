// ModelLayout: what the parallel transform needs to know about a sequential model.
//
// Parallelize() is generic over layered models: it replays the sequential
// function's ops per (replica, stage, shard, microbatch). What differs between
// models is captured here, per op and per parameter:
//   - the layer of every op (-1 before the first layer, num_layers after the
//     last), hence its pipeline stage, and its phase: forward, backward
//     (training) or optimizer (training, once per step after all microbatches);
//   - per parameter: data (split along dim 0 over replicas and microbatches),
//     weight or optimizer state;
//   - the Megatron split of every weight *use* (an op input): replicated,
//     columns (last dim), rows (dim 0), or the fused QKV columns of GPT-2;
//     one weight may be used with different splits (GPT-2's tied embedding);
//   - which op results are partial sums over the T shards (row-parallel
//     products in the forward pass, column-parallel input gradients in the
//     backward pass) and must be all-reduced;
//   - how each returned value is reassembled (collect): a sum (losses), a
//     concatenation along the batch (and, if T-split, the last) dim, or an
//     updated weight split like the weight it updates.
//   - which integer inputs spell extents of the full tensors (a Reshape
//     target with the batch or the head count written out, a Split's sizes)
//     and must read the local extents in each clone (LocalShape).
// AnalyzeModel() reads it from a function built by src/models, by the value
// names models/mlp.h and models/gpt.h document, or from a GPT-2 imported from
// ONNX with HuggingFace's parameter names (docs/onnx.md §6): there the head
// count comes from the attention's Reshape of the sharded Split outputs, and
// the T shardings of the weights are propagated through the block's ops.

#pragma once

#include <cstdint>
#include <vector>

#include "ir/function.h"
#include "support/status_or.h"

namespace distir {

enum class OpPhase { kForward, kBackward, kOptimizer };

/// How a tensor is split over the T shards of a tensor-parallel group.
enum class TpSplit {
  kReplicated,  ///< every shard holds all of it
  kColumns,     ///< the last dim cut into T contiguous pieces (uneven allowed: first ones larger)
  kRows,        ///< dim 0 cut into T pieces
  kQkvColumns,  ///< last dim = [Q | K | V], each cut into T; shard t holds [Q_t | K_t | V_t]
};

enum class ParamRole { kData, kWeight, kOptimizerState };

/// An integer input of an op (a Reshape target, a Split's sizes) whose
/// sequential contents are the extents of the full tensors. Each clone of the
/// op reads a Constant with the local extents instead: entry `batch_index`
/// divided by D*K (the batch), entry `tp_index` (every entry when
/// `tp_all`) divided by T. Entries the exporter wrote as 0 or -1 (copy, infer)
/// adapt by themselves and get no LocalShape. Reshape targets and
/// ConstantOfShape shapes computed by ops are always replaced (`computed`).
struct LocalShape {
  int input = 1;
  std::vector<int64_t> full;
  int batch_index = -1;
  int tp_index = -1;
  bool tp_all = false;
  /// The input is computed at run time (an exported Shape/Gather/Concat
  /// chain): replaced by a Constant even when the local extents are the full
  /// ones, which folds the chain out of the program.
  bool computed = false;

  /// The local extents for `batch_pieces` = D*K and `tp` = T.
  std::vector<int64_t> Local(int64_t batch_pieces, int64_t tp) const;
};

struct LayoutOp {
  int64_t layer = 0;  ///< -1: before the first layer; num_layers: after the last
  OpPhase phase = OpPhase::kForward;
  /// Split of each input when it is a parameter (kReplicated otherwise).
  std::vector<TpSplit> input_splits;
  /// Results that are partial sums over the T shards (all-reduced when T > 1).
  std::vector<int> partial_results;
  /// Inputs replaced by their local extents (empty for most ops).
  std::vector<LocalShape> local_shapes;
  /// An exported GELU (the ops of a block's `mlp.act` scope, erf or tanh
  /// form) is emitted as one Gelu: its last op carries `gelu` ("none" or
  /// "tanh") and `gelu_input` (the activation it reads, a value of the
  /// function), the other ops of the scope are `fused_away`.
  std::string gelu;
  const Value* gelu_input = nullptr;
  bool fused_away = false;
};

struct LayoutParam {
  ParamRole role = ParamRole::kWeight;
  /// Optimizer state: the index of the weight it belongs to (same split).
  int weight = -1;
};

enum class OutputKind {
  kSum,          ///< per-microbatch partial values summed (losses)
  kBatchConcat,  ///< per-microbatch values concatenated along dim 0
  kUpdated,      ///< optimizer result: split like parameter `param`
};

struct LayoutOutput {
  OutputKind kind = OutputKind::kSum;
  int param = -1;                          ///< kUpdated: the weight or state it updates
  TpSplit split = TpSplit::kReplicated;    ///< kBatchConcat: how the T shards hold it
};

struct ModelLayout {
  bool training = false;
  int64_t num_layers = 0;
  int64_t batch = 0;  ///< global batch (dim 0 of every data parameter)
  std::vector<LayoutOp> ops;        ///< parallel to fn.ops()
  std::vector<LayoutParam> params;  ///< parallel to fn.params()
  std::vector<LayoutOutput> outputs;  ///< parallel to fn.returns()
  /// The largest T the model admits and why, for the error message: every
  /// split extent must divide by T (the MLP width; GPT-2's heads).
  int64_t tp_divisor = 1;
  const char* tp_divisor_name = "";
};

/// Analyzes a function built by BuildMlpTraining (@mlp) or BuildGpt2Inference
/// (@gpt2), or a GPT-2 imported from ONNX (HuggingFace parameter names:
/// %input_ids, %h.N.attn.c_attn.weight, ...). `tp` decides the Megatron
/// pairing (with T = 1 every use is replicated). InvalidArgument for other
/// functions, naming what is missing, and for a GPT-2 whose ops cannot carry
/// the T sharding of its weights (e.g. a LayerNorm over a sharded dim), naming
/// the op.
StatusOr<ModelLayout> AnalyzeModel(const Function& fn, int64_t tp);

}  // namespace distir
