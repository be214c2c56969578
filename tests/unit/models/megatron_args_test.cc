// Reading Megatron-LM launch lines into transformer options.

#include "models/megatron_args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace distir {
namespace {

using distir::testing::StatusIs;
using ::testing::ElementsAre;

constexpr char kLlamaLine[] =
    "torchrun --nproc_per_node 1 pretrain_gpt.py \\\n"
    "  --num-layers 2 --hidden-size 4096 --ffn-hidden-size 11008 --num-attention-heads 32 \\\n"
    "  --group-query-attention --num-query-groups 8 --seq-length 2048 \\\n"
    "  --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 1 --bf16 \\\n"
    "  --swiglu --normalization RMSNorm --position-embedding-type rope \\\n"
    "  --disable-bias-linear --untie-embeddings-and-output-weights --padded-vocab-size 32000 \\\n"
    "  --use-flash-attn \\\n"
    "  --lr 3e-4 --train-iters 100 --data-path '/data/my corpus' --log-interval=10 "
    "--no-gradient-accumulation-fusion";

TEST(MegatronArgsTest, ReadsALlamaLaunchLine) {
  ASSERT_OK_AND_ASSIGN(MegatronArgs args, ParseMegatronArgs(kLlamaLine));
  const TransformerOptions& o = args.transformer;
  EXPECT_EQ(o.variant, TransformerVariant::kLlama);
  EXPECT_EQ(o.num_layers, 2);
  EXPECT_EQ(o.hidden_size, 4096);
  EXPECT_EQ(o.ffn_hidden_size, 11008);
  EXPECT_EQ(o.num_attention_heads, 32);
  EXPECT_EQ(o.num_query_groups, 8);
  EXPECT_EQ(o.seq_length, 2048);
  EXPECT_EQ(o.max_position_embeddings, 4096);
  EXPECT_EQ(o.vocab_size, 32000);
  EXPECT_EQ(o.batch, 1);
  EXPECT_EQ(o.params_dtype, DType::kBF16);
  EXPECT_EQ(o.untie_embeddings_and_output_weights, true);
  EXPECT_TRUE(o.flash_attention);
  EXPECT_DOUBLE_EQ(o.lr, 3e-4);
  EXPECT_FALSE(o.gradient_accumulation_fusion);  // --no-gradient-accumulation-fusion
  EXPECT_EQ(args.global_batch_size, 1);
  EXPECT_THAT(args.unmodelled,
              ElementsAre("--train-iters 100", "--data-path /data/my corpus", "--log-interval=10"));
  ASSERT_OK_AND_ASSIGN(MegatronDistribution d, MegatronDistributionOf(args, 1));
  EXPECT_EQ(d.dp * d.tp * d.pp * d.microbatches, 1);
}

TEST(MegatronArgsTest, DefaultsAreMegatronsGptBlocksInF32) {
  ASSERT_OK_AND_ASSIGN(MegatronArgs args,
                       ParseMegatronArgs("--num-layers 1 --hidden-size 64 --num-attention-heads 4 "
                                         "--seq-length 16 --vocab-size 128 --num-query-groups 2"));
  EXPECT_EQ(args.transformer.variant, TransformerVariant::kGpt);
  EXPECT_EQ(args.transformer.params_dtype, DType::kF32);
  EXPECT_EQ(args.transformer.untie_embeddings_and_output_weights, false);
  // Without --group-query-attention Megatron ignores --num-query-groups.
  EXPECT_EQ(args.transformer.num_query_groups, 0);
  // Without --use-flash-attn Megatron runs its unfused core attention.
  EXPECT_FALSE(args.transformer.flash_attention);
  EXPECT_TRUE(args.unmodelled.empty());
}

TEST(MegatronArgsTest, BadValuesNameTheOption) {
  EXPECT_THAT(ParseMegatronArgs("--num-layers two"),
              StatusIs(StatusCode::kInvalidArgument, "--num-layers takes an integer"));
  EXPECT_THAT(ParseMegatronArgs("--hidden-size"),
              StatusIs(StatusCode::kInvalidArgument, "--hidden-size needs a value"));
  EXPECT_THAT(ParseMegatronArgs("--bf16 --fp16"),
              StatusIs(StatusCode::kInvalidArgument, "exclude each other"));
  EXPECT_THAT(
      ParseMegatronArgs("--num-attention-heads 4 --group-query-attention --num-query-groups 2"),
      StatusIs(StatusCode::kUnimplemented, "add --use-flash-attn"));
  EXPECT_THAT(ParseMegatronArgs("--swiglu"),
              StatusIs(StatusCode::kUnimplemented, "the line gives 1 of the 4"));
  EXPECT_THAT(ParseMegatronArgs("--normalization LayerNorm1P"),
              StatusIs(StatusCode::kUnimplemented, "LayerNorm1P is not modelled"));
  EXPECT_THAT(ParseMegatronArgs("--hidden-size 64 --num-attention-heads 3"),
              StatusIs(StatusCode::kInvalidArgument, "num_attention_heads"));
}

// Korthikanti et al. 2022, Table 3/5: GPT-3 175B on 64 GPUs, t = 8, p = 8,
// interleaved (3 chunks of 4 layers), sequence parallel, selective recompute.
constexpr char kGpt3Line[] =
    "--num-layers 96 --hidden-size 12288 --ffn-hidden-size 49152 --num-attention-heads 96 "
    "--seq-length 2048 --max-position-embeddings 2048 --padded-vocab-size 51200 "
    "--micro-batch-size 1 --global-batch-size 64 --bf16 --tensor-model-parallel-size 8 "
    "--pipeline-model-parallel-size 8 --num-layers-per-virtual-pipeline-stage 4 "
    "--sequence-parallel --recompute-granularity selective";

TEST(MegatronArgsTest, RefusesWhatIsNotModelledByName) {
  ASSERT_OK_AND_ASSIGN(MegatronArgs args, ParseMegatronArgs(kGpt3Line));
  EXPECT_EQ(args.ModelParallelSize(), 64);
  EXPECT_EQ(args.transformer.num_layers, 96);
  ASSERT_OK_AND_ASSIGN(MegatronDistribution d, MegatronDistributionOf(args, 64));
  EXPECT_TRUE(d.sequence_parallel);
  EXPECT_TRUE(d.recompute_selective);
  EXPECT_THAT(MegatronDistributionOf(args, 100),
              StatusIs(StatusCode::kInvalidArgument, "not a multiple"));
  args.context_parallel_size = 2;
  EXPECT_THAT(
      MegatronDistributionOf(args, 128),
      StatusIs(StatusCode::kUnimplemented, "not modelled yet (issue #17): --context-parallel-size 2"));
}

// --num-layers-per-virtual-pipeline-stage N: v = L / (P N) chunks per stage
// (96 / (8 x 4) = 3 for the GPT-3 line), with Megatron's checks.
TEST(MegatronArgsTest, VirtualPipelineStagesAreTheChunksPerStage) {
  ASSERT_OK_AND_ASSIGN(MegatronArgs args, ParseMegatronArgs(kGpt3Line));
  args.sequence_parallel = false;
  ASSERT_OK_AND_ASSIGN(MegatronDistribution d, MegatronDistributionOf(args, 64));
  EXPECT_EQ(d.pp, 8);
  EXPECT_EQ(d.virtual_stages, 3);
  EXPECT_EQ(d.microbatches, 64);
  args.num_layers_per_virtual_pipeline_stage = 0;
  ASSERT_OK_AND_ASSIGN(d, MegatronDistributionOf(args, 64));
  EXPECT_EQ(d.virtual_stages, 1);
  args.num_layers_per_virtual_pipeline_stage = 5;  // 12 layers per stage
  EXPECT_THAT(MegatronDistributionOf(args, 64),
              StatusIs(StatusCode::kInvalidArgument,
                       "--num-layers 96 do not divide into --pipeline-model-parallel-size 8 "
                       "stages of chunks of --num-layers-per-virtual-pipeline-stage 5 layers"));
  args.num_layers_per_virtual_pipeline_stage = 12;
  EXPECT_THAT(MegatronDistributionOf(args, 64),
              StatusIs(StatusCode::kUnimplemented, "one model chunk per stage (L / P = 12)"));
  args.num_layers_per_virtual_pipeline_stage = 4;
  args.pipeline_model_parallel_size = 2;
  EXPECT_THAT(MegatronDistributionOf(args, 16),
              StatusIs(StatusCode::kInvalidArgument, "greater than 2"));
}

// Table 5's GPT-3 175B run without the options not modelled yet: D x T x P from
// the world size, K = global / (micro x D), full recomputation, ZeRO-1 for the
// distributed optimizer.
TEST(MegatronArgsTest, DistributionOfTheParallelSizesAndTheGlobalBatch) {
  ASSERT_OK_AND_ASSIGN(
      MegatronArgs args,
      ParseMegatronArgs("--num-layers 96 --hidden-size 12288 --num-attention-heads 96 "
                        "--seq-length 2048 --micro-batch-size 1 --global-batch-size 1536 --bf16 "
                        "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 8 "
                        "--recompute-granularity full --use-distributed-optimizer"));
  ASSERT_OK_AND_ASSIGN(MegatronDistribution d, MegatronDistributionOf(args, 1024));
  EXPECT_EQ(d.dp, 16);
  EXPECT_EQ(d.tp, 8);
  EXPECT_EQ(d.pp, 8);
  EXPECT_EQ(d.microbatches, 96);
  EXPECT_EQ(d.global_batch, 1536);
  EXPECT_TRUE(d.recompute);
  EXPECT_EQ(d.zero_stage, 1);
  EXPECT_THAT(MegatronDistributionOf(args, 1000),
              StatusIs(StatusCode::kInvalidArgument, "not a multiple"));
  args.global_batch_size = 1000;
  EXPECT_THAT(MegatronDistributionOf(args, 1024),
              StatusIs(StatusCode::kInvalidArgument,
                       "--global-batch-size 1000 is not a multiple of --micro-batch-size 1 x "
                       "data parallel size 16"));
}

TEST(MegatronArgsTest, DataParallelismComesFromTheWorldSize) {
  ASSERT_OK_AND_ASSIGN(MegatronArgs args, ParseMegatronArgs("--micro-batch-size 2"));
  ASSERT_OK_AND_ASSIGN(MegatronDistribution d, MegatronDistributionOf(args, 4));
  EXPECT_EQ(d.dp, 4);
  EXPECT_EQ(d.microbatches, 1);
  EXPECT_EQ(d.global_batch, 8);  // Megatron's default: micro x data parallel
}

}  // namespace
}  // namespace distir
