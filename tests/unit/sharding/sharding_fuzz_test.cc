// Fuzzing the sharding passes: random shardings on the golden programs
// (tests/lit/sharding) and random mutations of sharding text. Every case must
// end in a clean Status or in a partition that computes exactly what the
// global program computes; a crash fails the test (and the sanitizer build).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "interp/infer_types.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "sharding/cleanup.h"
#include "sharding/equivalence.h"
#include "sharding/materialize.h"
#include "sharding/partition.h"
#include "sharding/propagate.h"
#include "testing/test_util.h"

namespace distir::sharding {
namespace {

using ::distir::testing::SourcePath;

#ifdef DISTIR_SANITIZED_BUILD
constexpr int kCasesPerProgram = 20;
constexpr int kTextMutations = 300;
#else
constexpr int kCasesPerProgram = 100;
constexpr int kTextMutations = 3000;
#endif

// The largest value of the program, in elements (0 when it does not parse).
int64_t LargestValue(const std::string& text) {
  StatusOr<Module> m = ParseModule(text, "golden");
  if (!m.ok() || !InferTypes(*m).ok()) return 0;
  int64_t largest = 0;
  for (const auto& p : m->entry()->params()) largest = std::max(largest, p->type().NumElements());
  for (const auto& op : m->entry()->ops()) {
    for (const auto& r : op->results()) largest = std::max(largest, r->type().NumElements());
  }
  return largest;
}

// The golden programs small enough for the reference executor to run many
// times (those of a few thousand elements; the large ones have goldens of
// their own).
std::vector<std::string> GoldenPrograms() {
  std::vector<std::string> texts;
  std::vector<std::filesystem::path> paths;
  for (const auto& e : std::filesystem::directory_iterator(SourcePath("tests/lit/sharding"))) {
    if (e.path().extension() == ".distir") paths.push_back(e.path());
  }
  std::sort(paths.begin(), paths.end());
  for (const auto& p : paths) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    if (LargestValue(ss.str()) <= 20000) texts.push_back(ss.str());
  }
  return texts;
}

// A random sharding of a tensor of `rank` over `mesh`: each axis unused,
// appended to a random dim, or (rarely) partial.
Sharding RandomSharding(const Mesh& mesh, int64_t rank, std::mt19937& rng) {
  Sharding s = Sharding::Replicated(mesh.name(), rank);
  std::vector<std::string> axes;
  for (const MeshAxis& a : mesh.axes()) axes.push_back(a.name);
  std::shuffle(axes.begin(), axes.end(), rng);
  for (const std::string& a : axes) {
    int roll = static_cast<int>(rng() % 10);
    if (roll < 4 || (rank == 0 && roll < 9)) continue;
    if (roll == 9) {
      s.partial.push_back(a);
      continue;
    }
    s.dims[rng() % rank].push_back(a);
  }
  return s;
}

struct Outcome {
  int errors = 0;
  int equal = 0;
};

// Re-rolls the shardings of `m`'s parameters and Shard ops, then runs the
// whole pipeline and the numerical check.
void RunCase(const std::string& text, std::mt19937& rng, Outcome& outcome) {
  StatusOr<Module> parsed = ParseModule(text, "golden");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  Module m = std::move(parsed).value();
  ASSERT_OK(InferTypes(m));
  if (m.meshes().empty()) return;  // a sequential program (--parallelize's input)
  // Each sharding on a random mesh of the program: with two meshes (G38's
  // stages) values cross between them wherever the layouts disagree.
  auto mesh = [&]() -> const Mesh& { return *m.meshes()[rng() % m.meshes().size()]; };
  Function& fn = *m.entry();
  for (const auto& p : fn.params()) {
    if (!p->type().is_tensor() || rng() % 3 == 0) {
      p->clear_sharding();
      continue;
    }
    p->set_sharding(RandomSharding(mesh(), p->type().rank(), rng));
  }
  for (const auto& op : fn.ops()) {
    if (op->kind() != OpKind::kShard) continue;
    op->SetAttr("sharding", Attribute(RandomSharding(mesh(), op->input(0)->type().rank(), rng)));
    op->SetAttr("for_users", Attribute(int64_t{static_cast<int64_t>(rng() % 2)}));
  }
  Status s = VerifyModule(m);
  if (s.ok()) s = PropagateShardings(m, fn.name());
  if (s.ok()) s = MaterializeShardings(m, m.entry()->name());
  if (!s.ok()) {
    if (std::getenv("DISTIR_FUZZ_VERBOSE") != nullptr) std::cout << s.ToString() << "\n";
    ++outcome.errors;
    return;
  }
  // Half the cases also run every clean-up, which must keep the numerics.
  if (rng() % 2 == 0) RunCleanup(m, m.entry()->name());
  // Nothing annotated: propagation leaves the program alone.
  if (m.entry()->num_params() > 0 && m.entry()->param(0)->sharding() == nullptr) return;
  StatusOr<Module> copy = ParseModule(PrintModule(m), "materialized");
  ASSERT_TRUE(copy.ok()) << copy.status().ToString() << "\n" << PrintModule(m);
  Status parted = PartitionShardings(*copy, m.entry()->name());
  if (!parted.ok()) {
    EXPECT_NE(parted.code(), StatusCode::kInternal) << parted.ToString() << "\n" << PrintModule(m);
    ++outcome.errors;
    return;
  }
  StatusOr<EquivalenceReport> r = CheckPartitionEquivalence(m, *copy, m.entry()->name(), rng());
  ASSERT_TRUE(r.ok()) << r.status().ToString() << "\n" << PrintModule(m);
  ++outcome.equal;
}

TEST(ShardingFuzzTest, RandomShardingsOfTheGoldensPartitionExactly) {
  std::mt19937 rng(20261125);
  Outcome outcome;
  for (const std::string& text : GoldenPrograms()) {
    for (int i = 0; i < kCasesPerProgram; ++i) {
      RunCase(text, rng, outcome);
      if (HasFatalFailure()) return;
    }
  }
  // Most random shardings are valid and must partition; errors are clean.
  EXPECT_GT(outcome.equal, outcome.errors);
  std::cout << "[ fuzz ] " << outcome.equal << " random shardings partitioned and equal, "
            << outcome.errors << " refused with a clean error\n";
  RecordProperty("equal", outcome.equal);
  RecordProperty("errors", outcome.errors);
}

TEST(ShardingFuzzTest, MutatedShardingTextNeverCrashes) {
  const std::string base = R"(mesh @m = <[a = 2, b = 4]>
func @f(%x: tensor<8x16xf32> <@m, [{a}, {b}], offsets = [{0, 3, 8}, {}]>, %p: tensor<8xf32> <@m, [{}], partial = sum[a, b]>) {
  %y = Shard(%x) {for_users = 1, sharding = <@m, [{}, {a, b}]>}
  return %y, %p
}
)";
  const std::string alphabet = "<>[]{},=@%abmxd0123456789 -partialsumoffsets\n";
  std::mt19937 rng(7);
  int parsed = 0;
  for (int i = 0; i < kTextMutations; ++i) {
    std::string text = base;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % text.size();
      switch (rng() % 3) {
        case 0: text.erase(pos, 1); break;
        case 1: text.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
        default: text[pos] = alphabet[rng() % alphabet.size()]; break;
      }
    }
    StatusOr<Module> m = ParseModule(text, "mutated");
    if (!m.ok()) {
      EXPECT_FALSE(m.status().message().empty());
      continue;
    }
    if (!VerifyModule(*m).ok()) continue;
    ++parsed;
    // Whatever parses and verifies prints back to text that parses the same.
    std::string printed = PrintModule(*m);
    StatusOr<Module> again = ParseModule(printed, "printed");
    ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << printed;
    EXPECT_EQ(PrintModule(*again), printed);
    if (InferTypes(*m).ok()) (void)PropagateShardings(*m, m->entry()->name());
  }
  EXPECT_GT(parsed, 0);
  std::cout << "[ fuzz ] " << kTextMutations << " mutated texts, " << parsed
            << " parsed and verified\n";
}

}  // namespace
}  // namespace distir::sharding
