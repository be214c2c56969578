#include "models/megatron_args.h"

#include <charconv>
#include <cstdlib>
#include <functional>
#include <map>
#include <sstream>

namespace distir {
namespace {

// The words of a pasted shell line: quotes group, a backslash before a
// newline (or alone between words) continues the line.
std::vector<std::string> SplitWords(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == quote)
        quote = 0;
      else
        word += c;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
      continue;
    }
    if (c == '\\' && i + 1 < line.size() && (line[i + 1] == '\n' || line[i + 1] == '\r')) continue;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || (c == '\\' && !in_word)) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    word += c;
    in_word = true;
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

StatusOr<int64_t> ParseInt(std::string_view option, std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc() && end == text.data() + text.size()) return value;
  return InvalidArgument() << "megatron option " << option << " takes an integer, got '" << text
                           << "'";
}

StatusOr<double> ParseDouble(std::string_view option, std::string_view text) {
  std::string s(text);
  char* end = nullptr;
  const double value = std::strtod(s.c_str(), &end);
  if (!s.empty() && end == s.c_str() + s.size()) return value;
  return InvalidArgument() << "megatron option " << option << " takes a number, got '" << text
                           << "'";
}

// What the line says about the blocks, resolved into a variant at the end.
struct BlockFlags {
  bool swiglu = false;
  bool rms_norm = false;
  bool rope = false;
  bool no_bias = false;
  bool group_query_attention = false;
  int64_t num_query_groups = 0;
  bool bf16 = false;
  bool fp16 = false;
  bool untie = false;
  bool flash = false;
};

struct State {
  MegatronArgs args;
  BlockFlags blocks;
};

using Setter = std::function<Status(State&, std::string_view option, std::string_view value)>;

struct OptionSpec {
  bool takes_value;
  Setter set;
};

Setter Int(int64_t TransformerOptions::*field) {
  return [field](State& s, std::string_view option, std::string_view value) -> Status {
    DISTIR_ASSIGN_OR_RETURN(s.args.transformer.*field, ParseInt(option, value));
    return Status::Ok();
  };
}

Setter ArgsInt(int64_t MegatronArgs::*field) {
  return [field](State& s, std::string_view option, std::string_view value) -> Status {
    DISTIR_ASSIGN_OR_RETURN(s.args.*field, ParseInt(option, value));
    return Status::Ok();
  };
}

Setter Double(double TransformerOptions::*field) {
  return [field](State& s, std::string_view option, std::string_view value) -> Status {
    DISTIR_ASSIGN_OR_RETURN(s.args.transformer.*field, ParseDouble(option, value));
    return Status::Ok();
  };
}

Setter Flag(bool BlockFlags::*field) {
  return [field](State& s, std::string_view, std::string_view) {
    s.blocks.*field = true;
    return Status::Ok();
  };
}

Setter ArgsFlag(bool MegatronArgs::*field) {
  return [field](State& s, std::string_view, std::string_view) {
    s.args.*field = true;
    return Status::Ok();
  };
}

// A string option whose values are a closed set; `apply` sets what they mean.
Setter Choice(std::vector<std::string> allowed,
              std::function<void(State&, std::string_view)> apply) {
  return [allowed = std::move(allowed), apply = std::move(apply)](
             State& s, std::string_view option, std::string_view value) -> Status {
    for (const std::string& a : allowed) {
      if (a == value) {
        apply(s, value);
        return Status::Ok();
      }
    }
    std::ostringstream names;
    for (size_t i = 0; i < allowed.size(); ++i) names << (i ? ", " : "") << allowed[i];
    return Unimplemented() << "megatron option " << option << " " << value
                           << " is not modelled (modelled: " << names.str() << ")";
  };
}

const std::map<std::string, OptionSpec, std::less<>>& OptionTable() {
  using T = TransformerOptions;
  using A = MegatronArgs;
  using B = BlockFlags;
  static const auto* table = new std::map<std::string, OptionSpec, std::less<>>{
      {"--num-layers", {true, Int(&T::num_layers)}},
      {"--hidden-size", {true, Int(&T::hidden_size)}},
      {"--ffn-hidden-size", {true, Int(&T::ffn_hidden_size)}},
      {"--num-attention-heads", {true, Int(&T::num_attention_heads)}},
      {"--num-query-groups",
       {true,
        [](State& s, std::string_view o, std::string_view v) -> Status {
          DISTIR_ASSIGN_OR_RETURN(s.blocks.num_query_groups, ParseInt(o, v));
          return Status::Ok();
        }}},
      {"--group-query-attention", {false, Flag(&B::group_query_attention)}},
      {"--seq-length", {true, Int(&T::seq_length)}},
      {"--max-position-embeddings", {true, Int(&T::max_position_embeddings)}},
      {"--vocab-size", {true, Int(&T::vocab_size)}},
      {"--padded-vocab-size", {true, Int(&T::vocab_size)}},
      {"--micro-batch-size", {true, ArgsInt(&A::micro_batch_size)}},
      {"--global-batch-size", {true, ArgsInt(&A::global_batch_size)}},
      {"--bf16", {false, Flag(&B::bf16)}},
      {"--fp16", {false, Flag(&B::fp16)}},
      {"--swiglu", {false, Flag(&B::swiglu)}},
      {"--disable-bias-linear", {false, Flag(&B::no_bias)}},
      {"--untie-embeddings-and-output-weights", {false, Flag(&B::untie)}},
      {"--use-flash-attn", {false, Flag(&B::flash)}},
      {"--normalization",
       {true, Choice({"LayerNorm", "RMSNorm"},
                     [](State& s, std::string_view v) { s.blocks.rms_norm = v == "RMSNorm"; })}},
      {"--position-embedding-type",
       {true, Choice({"learned_absolute", "rope"},
                     [](State& s, std::string_view v) { s.blocks.rope = v == "rope"; })}},
      {"--norm-epsilon", {true, Double(&T::norm_epsilon)}},
      {"--layernorm-epsilon", {true, Double(&T::norm_epsilon)}},
      {"--rotary-base", {true, Double(&T::rotary_base)}},
      {"--lr", {true, Double(&T::lr)}},
      {"--weight-decay", {true, Double(&T::weight_decay)}},
      {"--adam-beta1", {true, Double(&T::adam_beta1)}},
      {"--adam-beta2", {true, Double(&T::adam_beta2)}},
      {"--adam-eps", {true, Double(&T::adam_eps)}},
      {"--loss-scale", {true, Double(&T::loss_scale)}},
      // Megatron's "adam" is Apex's FusedAdam in AdamW mode (decoupled decay).
      {"--optimizer",
       {true, Choice({"adam"},
                     [](State& s, std::string_view) {
                       s.args.transformer.optimizer = TransformerOptimizer::kAdamW;
                     })}},
      {"--tensor-model-parallel-size", {true, ArgsInt(&A::tensor_model_parallel_size)}},
      {"--pipeline-model-parallel-size", {true, ArgsInt(&A::pipeline_model_parallel_size)}},
      {"--context-parallel-size", {true, ArgsInt(&A::context_parallel_size)}},
      {"--num-layers-per-virtual-pipeline-stage",
       {true, ArgsInt(&A::num_layers_per_virtual_pipeline_stage)}},
      {"--sequence-parallel", {false, ArgsFlag(&A::sequence_parallel)}},
      {"--use-distributed-optimizer", {false, ArgsFlag(&A::use_distributed_optimizer)}},
      {"--no-gradient-accumulation-fusion",
       {false,
        [](State& s, std::string_view, std::string_view) {
          s.args.transformer.gradient_accumulation_fusion = false;
          return Status::Ok();
        }}},
      {"--no-scatter-gather-tensors-in-pipeline",
       {false,
        [](State& s, std::string_view, std::string_view) {
          s.args.scatter_gather_tensors_in_pipeline = false;
          return Status::Ok();
        }}},
      {"--recompute-granularity",
       {true, Choice({"selective", "full"},
                     [](State& s, std::string_view v) { s.args.recompute_granularity = v; })}},
  };
  return *table;
}

bool IsOption(std::string_view word) { return word.size() > 2 && word.substr(0, 2) == "--"; }

// GPT or LLaMA blocks, the dtype and the query groups from the flags.
Status ResolveBlocks(const BlockFlags& b, TransformerOptions& o) {
  const int llama_flags = b.swiglu + b.rms_norm + b.rope + b.no_bias;
  if (llama_flags != 0 && llama_flags != 4) {
    return Unimplemented() << "megatron options --swiglu, --normalization RMSNorm, "
                           << "--position-embedding-type rope and --disable-bias-linear are "
                           << "modelled together (LLaMA blocks) or not at all (GPT blocks); "
                           << "the line gives " << llama_flags << " of the 4";
  }
  if (b.bf16 && b.fp16)
    return InvalidArgument() << "megatron options --bf16 and --fp16 exclude each other";
  o.variant = llama_flags == 4 ? TransformerVariant::kLlama : TransformerVariant::kGpt;
  o.params_dtype = b.bf16 ? DType::kBF16 : b.fp16 ? DType::kF16 : DType::kF32;
  o.untie_embeddings_and_output_weights = b.untie;
  // Without --use-flash-attn Megatron runs its unfused core attention.
  o.flash_attention = b.flash;
  // Megatron reads --num-query-groups only with --group-query-attention.
  o.num_query_groups = b.group_query_attention ? b.num_query_groups : 0;
  if (!b.flash && b.group_query_attention) {
    return Unimplemented() << "megatron option --group-query-attention without --use-flash-attn "
                           << "(unfused attention repeating the key/value heads) is not modelled "
                           << "yet: add --use-flash-attn";
  }
  return Status::Ok();
}

// Applies option `words[*i]` (and its value), advancing *i past them.
Status ApplyOption(const std::vector<std::string>& words, size_t* i, State& s) {
  std::string_view word = words[*i];
  std::string_view name = word, value;
  const size_t eq = word.find('=');
  const bool inline_value = eq != std::string_view::npos;
  if (inline_value) name = word.substr(0, eq), value = word.substr(eq + 1);
  auto it = OptionTable().find(name);
  const bool has_next = *i + 1 < words.size() && !IsOption(words[*i + 1]);
  if (it == OptionTable().end()) {
    std::string written(word);
    if (!inline_value && has_next) written += " " + words[++*i];
    s.args.unmodelled.push_back(std::move(written));
    return Status::Ok();
  }
  if (it->second.takes_value && !inline_value) {
    if (!has_next) return InvalidArgument() << "megatron option " << name << " needs a value";
    value = words[++*i];
  }
  return it->second.set(s, name, value);
}

// The launcher and its options come before the script (`torchrun
// --nproc_per_node 8 pretrain_gpt.py --num-layers ...`): Megatron's options
// start after the first word ending in ".py", or at the first option when
// no script is named.
size_t FirstScriptOption(const std::vector<std::string>& words) {
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.size() > 3 && w.compare(w.size() - 3, 3, ".py") == 0) return i + 1;
  }
  size_t i = 0;
  while (i < words.size() && !IsOption(words[i])) ++i;
  return i;
}

// v of --num-layers-per-virtual-pipeline-stage N: the L / P layers of a
// stage in chunks of N, checked as Megatron's arguments.py and
// parallel_state.py check them.
StatusOr<int64_t> VirtualStagesOf(const MegatronArgs& args) {
  const int64_t n = args.num_layers_per_virtual_pipeline_stage;
  if (n == 0) return 1;
  const int64_t layers = args.transformer.num_layers;
  const int64_t p = args.pipeline_model_parallel_size;
  if (n < 0)
    return InvalidArgument() << "--num-layers-per-virtual-pipeline-stage " << n
                             << " must be positive";
  if (p <= 2)
    return InvalidArgument() << "--num-layers-per-virtual-pipeline-stage needs "
                             << "--pipeline-model-parallel-size greater than 2 (Megatron: "
                             << "\"pipeline-model-parallel size should be greater than 2 with "
                             << "interleaved schedule\"), got " << p;
  if (layers % p != 0 || (layers / p) % n != 0)
    return InvalidArgument() << "--num-layers " << layers << " do not divide into "
                             << "--pipeline-model-parallel-size " << p << " stages of chunks of "
                             << "--num-layers-per-virtual-pipeline-stage " << n << " layers";
  const int64_t v = layers / p / n;
  // Megatron runs its interleaved code even with one chunk per stage (a
  // warm-up of 2 (P - r - 1) forwards), which is not plain 1F1B: refused
  // rather than simulated as something else.
  if (v == 1)
    return Unimplemented() << "--num-layers-per-virtual-pipeline-stage " << n
                           << " gives one model chunk per stage (L / P = " << layers / p
                           << "): Megatron's interleaved schedule with one chunk is not "
                           << "modelled; leave the option out for plain 1F1B";
  return v;
}

}  // namespace

int64_t MegatronArgs::ModelParallelSize() const {
  return tensor_model_parallel_size * pipeline_model_parallel_size * context_parallel_size;
}

StatusOr<MegatronArgs> ParseMegatronArgs(std::string_view line) {
  const std::vector<std::string> words = SplitWords(line);
  State s;
  size_t i = FirstScriptOption(words);
  for (; i < words.size(); ++i) {
    if (!IsOption(words[i])) {
      s.args.unmodelled.push_back(words[i]);
      continue;
    }
    DISTIR_RETURN_IF_ERROR(ApplyOption(words, &i, s));
  }
  DISTIR_RETURN_IF_ERROR(ResolveBlocks(s.blocks, s.args.transformer));
  s.args.transformer.batch = s.args.micro_batch_size;
  std::string culprit;
  if (Status valid = ValidateTransformerOptions(s.args.transformer, &culprit); !valid.ok()) {
    return valid.Prefix("megatron launch line: ");
  }
  return s.args;
}

StatusOr<MegatronDistribution> MegatronDistributionOf(const MegatronArgs& args,
                                                      int64_t world_size) {
  const int64_t model_parallel = args.ModelParallelSize();
  if (world_size < 1 || model_parallel < 1 || world_size % model_parallel != 0) {
    return InvalidArgument() << "world size " << world_size
                             << " is not a multiple of tensor x pipeline x context parallel "
                             << "size " << model_parallel;
  }
  std::vector<std::string> asks;
  auto ask = [&asks](bool when, const std::string& what) {
    if (when) asks.push_back(what);
  };
  ask(args.context_parallel_size > 1,
      "--context-parallel-size " + std::to_string(args.context_parallel_size));
  if (!asks.empty()) {
    std::ostringstream os;
    for (size_t i = 0; i < asks.size(); ++i) os << (i ? ", " : "") << asks[i];
    return Unimplemented() << "not modelled yet (issue #17): " << os.str();
  }
  MegatronDistribution d;
  d.tp = args.tensor_model_parallel_size;
  d.pp = args.pipeline_model_parallel_size;
  DISTIR_ASSIGN_OR_RETURN(d.virtual_stages, VirtualStagesOf(args));
  d.dp = world_size / model_parallel;
  const int64_t per_step = args.micro_batch_size * d.dp;
  d.global_batch = args.global_batch_size > 0 ? args.global_batch_size : per_step;
  if (d.global_batch % per_step != 0) {
    return InvalidArgument() << "--global-batch-size " << d.global_batch
                             << " is not a multiple of --micro-batch-size " << args.micro_batch_size
                             << " x data parallel size " << d.dp;
  }
  d.microbatches = d.global_batch / per_step;
  d.recompute = !args.recompute_granularity.empty();
  d.recompute_selective = args.recompute_granularity == "selective";
  d.zero_stage = args.use_distributed_optimizer ? 1 : 0;
  d.sequence_parallel = args.sequence_parallel;
  d.scatter_gather = args.scatter_gather_tensors_in_pipeline;
  return d;
}

}  // namespace distir
