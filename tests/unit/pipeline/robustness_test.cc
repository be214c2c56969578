// No input makes the front end (parse, verify, infer) crash: every prefix and
// thousands of seeded mutations of every example either succeed or fail with a
// located error. Run under ASan/UBSan in CI, this is our fuzz test of `distir opt`.

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "interp/infer_types.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "support/str_util.h"
#include "testing/test_util.h"

namespace distir {
namespace {

std::vector<std::string> ExampleTexts() {
  std::vector<std::string> texts;
  std::filesystem::path dir = testing::SourcePath("data/examples");
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".distir") continue;
    std::string text;
    if (ReadFileToString(entry.path().string(), &text)) texts.push_back(text);
  }
  return texts;
}

// Runs the whole front end; returns the failing Status or ok.
Status FrontEnd(const std::string& text) {
  StatusOr<Module> m = ParseModule(text, "fuzz.distir");
  if (!m.ok()) return m.status();
  DISTIR_RETURN_IF_ERROR(VerifyModule(*m));
  DISTIR_RETURN_IF_ERROR(InferTypes(*m));
  // A program that made it through must print and re-parse.
  StatusOr<Module> again = ParseModule(PrintModule(*m), "printed.distir");
  return again.ok() ? Status::Ok() : again.status();
}

void ExpectCleanOutcome(const std::string& text) {
  Status s = FrontEnd(text);
  if (s.ok()) return;
  // Every error carries a location: a line in the text, or a symbolic place.
  EXPECT_FALSE(s.loc().empty()) << s.ToString() << "\n--- input ---\n" << text;
  EXPECT_FALSE(s.message().empty());
}

TEST(RobustnessTest, ExamplesExist) { EXPECT_GE(ExampleTexts().size(), 5u); }

TEST(RobustnessTest, EveryPrefixOfEveryExampleFailsCleanly) {
  for (const std::string& text : ExampleTexts()) {
    for (size_t n = 0; n < text.size(); n += 3) ExpectCleanOutcome(text.substr(0, n));
  }
}

TEST(RobustnessTest, SeededMutationsFailCleanly) {
  std::mt19937 rng(20261122);
  const std::string alphabet = "%@(){}[]<>,:=x?_-.0123456789adefilnrstuv \n\"/";
  for (const std::string& text : ExampleTexts()) {
    for (int trial = 0; trial < 300; ++trial) {
      std::string mutated = text;
      int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits && !mutated.empty(); ++e) {
        size_t pos = rng() % mutated.size();
        switch (rng() % 3) {
          case 0: mutated[pos] = alphabet[rng() % alphabet.size()]; break;
          case 1: mutated.erase(pos, 1 + rng() % 8); break;
          default: mutated.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
        }
      }
      ExpectCleanOutcome(mutated);
    }
  }
}

TEST(RobustnessTest, HostileInputsFailCleanly) {
  std::vector<std::string> inputs = {
      "",
      "func",
      "func @f(",
      "func @f(%x: tensor<99999999999999999999999xf32, d0>) {\n  return %x\n}\n",
      "func @f(%x: tensor<4xf32, d99999999999>) {\n  return %x\n}\n",
      "func @f(%x: " + std::string(5000, '(') + ")",
      "func @f(%x: " + std::string(2000, 't') + ")",
      "func @f(%x: tuple<" + [] {
        std::string s;
        for (int i = 0; i < 3000; ++i) s += "tuple<";
        return s;
      }() + ">) {}",
      std::string("func @f() {\n  %c = Constant() {value = dense<3xi64>[1, 2]}\n  return %c\n}\n"),
      std::string("func @f(%x: tensor<4x4xf32, d0>) {\n  %y = Reshape(%x, %x)\n  return %y\n}\n"),
      std::string(1, '\0') + "func",
      "func @f(%x: tensor<4xf32, d0>) {\n  %y = Split(%x) {axis = 7}\n  return %y\n}\n",
  };
  for (const std::string& text : inputs) ExpectCleanOutcome(text);
}

}  // namespace
}  // namespace distir
