#include "support/status.h"

#include <gtest/gtest.h>

#include "support/status_or.h"

namespace distir {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgument(SourceLoc{"f.distir", 3, 7, ""}) << x << " is odd";
  return x / 2;
}

Status Quarter(int x, int* out) {
  DISTIR_ASSIGN_OR_RETURN(int half, Half(x));
  DISTIR_ASSIGN_OR_RETURN(*out, Half(half));
  return Status::Ok();
}

// A helper that starts a message and returns the builder by value: what the
// caller streams into the copy is appended, not written over the start.
StatusBuilder Unsupported(const std::string& op) {
  return Unimplemented() << "no kernel for " << op;
}

TEST(StatusTest, CopiedBuilderAppendsToTheMessage) {
  StatusBuilder copy = Unsupported("Constant");
  Status s = copy << " on the GPU";
  EXPECT_EQ(s.message(), "no kernel for Constant on the GPU");
}

TEST(StatusTest, RendersLocationAndMessage) {
  Status s = InvalidArgument(SourceLoc{"a.distir", 4, 12, ""}) << "undefined value %x";
  EXPECT_EQ(s.ToString(), "a.distir:4:12: error: undefined value %x");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

TEST(StatusTest, SymbolicLocationAndNotes) {
  Status s = Unimplemented(SourceLoc{"", 0, 0, "onnx node 'MatMul_12' (MatMul)"}) << "no rule";
  s.AddNote("supported: Add, Mul");
  EXPECT_EQ(s.ToString(), "onnx node 'MatMul_12' (MatMul): error: no rule\nnote: supported: Add, Mul");
}

TEST(StatusTest, AssignOrReturnPropagatesTheFirstError) {
  int out = 0;
  EXPECT_TRUE(Quarter(8, &out).ok());
  EXPECT_EQ(out, 2);
  Status s = Quarter(6, &out);
  EXPECT_EQ(s.ToString(), "f.distir:3:7: error: 3 is odd");
}

TEST(StatusTest, WithLocIfMissingKeepsTheInnermostLocation) {
  Status s = InvalidArgument(SourceLoc{"inner", 1, 2, ""}) << "x";
  s.WithLocIfMissing(SourceLoc{"outer", 9, 9, ""});
  EXPECT_EQ(s.loc().file, "inner");
  Status t = InvalidArgument() << "y";
  t.WithLocIfMissing(SourceLoc{"outer", 9, 9, ""});
  EXPECT_EQ(t.loc().ToString(), "outer:9:9");
}

}  // namespace
}  // namespace distir
