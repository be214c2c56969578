#include "models/transformer_sharding.h"

namespace distir {

std::vector<std::string> TransformerShardingRules(const TransformerOptions& o) {
  const TransformerVariant variant = o.variant;
  // `*` after a weight's name also matches its .master, .exp_avg and
  // .exp_avg_sq, which are laid out as the weight (the optimizer is elementwise).
  std::vector<std::string> rules = {"tokens=[{dp}, {}]",
                                    "labels=[{dp}, {}]",
                                    "embedding.weight*=[{tp}, {}]",
                                    "layers.*.attention.qkv.weight*=[{}, {tp}]",
                                    "layers.*.attention.proj.weight*=[{tp}, {}]",
                                    "layers.*.mlp.fc2.weight*=[{tp}, {}]"};
  if (variant == TransformerVariant::kGpt) {
    rules.insert(rules.end(),
                 {"layers.*.attention.qkv.bias*=[{tp}]", "layers.*.mlp.fc1.weight*=[{}, {tp}]",
                  "layers.*.mlp.fc1.bias*=[{tp}]"});
  } else {
    rules.insert(rules.end(), {"layers.*.mlp.fc1_gate.weight*=[{}, {tp}]",
                               "layers.*.mlp.fc1_up.weight*=[{}, {tp}]"});
  }
  if (o.untie_embeddings_and_output_weights.value_or(false))
    rules.push_back("output_layer.weight*=[{}, {tp}]");
  return rules;
}

std::vector<std::string> SequenceParallelRules(const TransformerOptions& o) {
  const bool gpt = o.variant == TransformerVariant::kGpt;
  const std::string split_s = "=[{dp}, {tp}, {}]";  // the sequence over tp
  const std::string split_h = "=[{dp}, {}, {tp}]";  // the features over tp
  const std::string unreduced = "=[{dp}, {}, {}], partial = sum[tp]";
  // Names of the model's values (docs/models.md): GPT's linears are a product
  // `.mm` and a bias add; LLaMA's are the product, and its SwiGLU sums the
  // input gradients of fc1_gate and fc1_up into post_attention_norm.grad.
  const std::string embedded = gpt ? "embedding" : "embedding.tokens";
  const std::string qkv_out = gpt ? "layers.*.attention.qkv.mm" : "layers.*.attention.qkv";
  const std::string proj_out = gpt ? "layers.*.attention.proj.mm" : "layers.*.attention.proj";
  const std::string fc2_out = gpt ? "layers.*.mlp.fc2.mm" : "layers.*.mlp.fc2";
  const std::vector<std::string> fc1s =
      gpt ? std::vector<std::string>{"layers.*.mlp.fc1"}
          : std::vector<std::string>{"layers.*.mlp.fc1_gate", "layers.*.mlp.fc1_up"};
  const std::string fc1_dx =
      gpt ? "layers.*.mlp.fc1.input.grad" : "layers.*.post_attention_norm.grad";
  const bool untied = o.untie_embeddings_and_output_weights.value_or(false);
  // A weight gradient is summed over the batch, split over dp: it stays
  // partial over dp until the microbatches are accumulated, and is all-reduced
  // with the step's gradients, as Megatron does (a gradient required whole
  // made the propagation all-gather activations over dp in every microbatch).
  const std::string grad_dp = ", partial = sum[dp]";
  std::vector<std::string> rules = {
      // Weight gradients laid out as their weights: the column-parallel
      // products' input is gathered along the sequence, not their weight.
      "layers.*.attention.qkv.weight.grad=[{}, {tp}]" + grad_dp,
      "embedding.weight.grad*=[{tp}, {}]" + grad_dp,
      (untied ? "output_layer.weight.grad" : "output_layer.weight_t.grad") +
          std::string("=[{}, {tp}]") + grad_dp,
      // Row-parallel products (and the column-parallel input gradients, and
      // the LM head's) stay partial and are reduce-scattered along the
      // sequence for their users.
      proj_out + unreduced, proj_out + "@users" + split_s, fc2_out + unreduced,
      fc2_out + "@users" + split_s, "layers.*.attention.qkv.input.grad" + unreduced,
      "layers.*.attention.qkv.input.grad@users" + split_s, fc1_dx + unreduced,
      fc1_dx + "@users" + split_s, "final_norm.grad" + unreduced, "final_norm.grad@users" + split_s,
      // Column-parallel products split by features (their input all-gathered
      // along the sequence), and the row-parallel ones' input gradients.
      qkv_out + split_h, "logits" + split_h, "layers.*.attention.proj.input.grad" + split_h,
      "layers.*.mlp.fc2.input.grad" + split_h,
      // The sequence-parallel region: norms, residual adds and their
      // gradients on s / t tokens.
      "final_norm" + split_s, "final_norm.input.grad" + split_s, "layers.*.input_norm" + split_s,
      "layers.*.post_attention_norm" + split_s, "layers.*.residual" + split_s,
      "layers.*.out" + split_s, "layers.*.input_norm.input.grad" + split_s,
      "layers.*.post_attention_norm.input.grad" + split_s, "layers.*.residual.grad" + split_s,
      "layers.*.input.grad" + split_s};
  // Each column-parallel MLP product: its weight gradient as its weight, its
  // output split by features, its input gradient partial (LLaMA's two are
  // summed into fc1_dx; `layers.*.input.grad` above would match them too, so
  // they go first).
  std::vector<std::string> mlp;
  for (const std::string& fc1 : fc1s) {
    mlp.push_back(fc1 + ".weight.grad=[{}, {tp}]" + grad_dp);
    mlp.push_back((gpt ? fc1 + ".mm" : fc1) + split_h);
    if (!gpt) mlp.push_back(fc1 + ".input.grad" + unreduced);
  }
  rules.insert(rules.begin(), mlp.begin(), mlp.end());
  // The first block's input: GPT's is the sum of the vocabulary-parallel
  // lookup (reduce-scattered) and the position rows; LLaMA's is the lookup
  // itself, partial until reduce-scattered (not a lookup of a gathered table).
  if (gpt) {
    rules.push_back(embedded + split_s);
  } else {
    rules.push_back(embedded + unreduced);
    rules.push_back(embedded + "@users" + split_s);
  }
  return rules;
}

ModelSharding TransformerShardingOf(const TransformerOptions& o) {
  ModelSharding s;
  s.rules = TransformerShardingRules(o);
  s.sequence_parallel_rules = SequenceParallelRules(o);
  s.layer_pattern = kTransformerLayerPattern;
  s.tp_divisor = o.num_query_groups;
  s.tp_divisor_name = "the number of query groups";
  s.recompute_layers = true;
  s.scatter_gather_transfers = true;
  s.sequence_parallel_regather = true;
  return s;
}

Status CheckTpDivides(int64_t tp, int64_t divisor, const std::string& divisor_name) {
  if (divisor == 0 || divisor % tp == 0) return Status::Ok();
  return InvalidArgument() << "T = " << tp << " does not divide " << divisor_name << " (" << divisor
                           << ")";
}

}  // namespace distir
