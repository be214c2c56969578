// Fuzz-style robustness of the ONNX importer: seeded truncations and byte
// mutations of real fixtures must give a Status (ok or a located error), never
// a crash, a hang or a sanitizer report (CI runs this under ASan + UBSan).

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "importers/onnx/onnx_importer.h"
#include "testing/test_util.h"

namespace distir::onnx_import {
namespace {

using ::distir::testing::SourcePath;

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Mutate(const std::string& bytes, std::mt19937_64& rng) {
  std::string out = bytes;
  std::uniform_int_distribution<size_t> pos(0, out.size() - 1);
  switch (rng() % 4) {
    case 0:  // truncate
      out.resize(pos(rng));
      break;
    case 1:  // flip a few bits
      for (int i = 0, n = 1 + static_cast<int>(rng() % 8); i < n; ++i) {
        out[pos(rng)] ^= static_cast<char>(1u << (rng() % 8));
      }
      break;
    case 2:  // overwrite a few bytes with random ones
      for (int i = 0, n = 1 + static_cast<int>(rng() % 8); i < n; ++i) {
        out[pos(rng)] = static_cast<char>(rng());
      }
      break;
    default:  // small varint-like values in the (dense) header and node area
      for (int i = 0, n = 1 + static_cast<int>(rng() % 4); i < n; ++i) {
        out[pos(rng) % std::min<size_t>(out.size(), 4096)] = static_cast<char>(rng() % 16);
      }
      break;
  }
  return out;
}

void Fuzz(const std::string& fixture, const ImportOptions& options, int iterations) {
  const std::string bytes = ReadBytes(SourcePath("data/onnx/" + fixture));
  ASSERT_FALSE(bytes.empty()) << fixture;
  ASSERT_TRUE(ImportOnnx(bytes, fixture, options).ok()) << "the unmutated fixture imports";
  std::mt19937_64 rng(20240601);
  int ok = 0;
  for (int i = 0; i < iterations; ++i) {
    StatusOr<ImportedModel> m = ImportOnnx(Mutate(bytes, rng), fixture, options);
    if (m.ok()) {
      ++ok;
    } else {
      EXPECT_FALSE(m.status().message().empty());
      EXPECT_NE(m.status().ToString().find(fixture), std::string::npos) << m.status().ToString();
    }
  }
  // Most mutations hit weight bytes and still import; the rest are errors.
  ::testing::Test::RecordProperty("imported", ok);
}

TEST(OnnxFuzzTest, MutatedMlpNeverCrashes) {
  ImportOptions o;
  o.input_shapes["x"] = {4, 16};
  o.load_weights = true;
  Fuzz("mlp.onnx", o, 2000);
}

TEST(OnnxFuzzTest, MutatedDynamicGpt2NeverCrashes) {
  ImportOptions o;
  o.input_shapes["input_ids"] = {2, 5};
  Fuzz("gpt2-tiny-op17-dyn.onnx", o, 600);
}

}  // namespace
}  // namespace distir::onnx_import
