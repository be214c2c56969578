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

// An ok Status is one pointer; errors survive copies and moves intact, and a
// moved-from Status is ok.
TEST(StatusTest, OkIsOnePointerAndErrorsCopyAndMoveWhole) {
  static_assert(sizeof(Status) == sizeof(void*));
  Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.code(), StatusCode::kOk);
  EXPECT_EQ(ok.message(), "");
  EXPECT_TRUE(ok.loc().empty());
  EXPECT_TRUE(ok.notes().empty());
  EXPECT_TRUE(ok.WithLocIfMissing(SourceLoc{"f", 1, 1, ""}).loc().empty());
  EXPECT_EQ(ok.ToString(), "ok");
  Status e = NotFound(SourceLoc{"f.distir", 2, 3, ""}) << "no @g";
  e.AddNote("defined: @f");
  Status copy = e;
  EXPECT_EQ(copy.ToString(), "f.distir:2:3: error: no @g\nnote: defined: @f");
  copy.Prefix("in @main: ");
  EXPECT_EQ(e.message(), "no @g");  // a deep copy
  Status moved = std::move(e);
  EXPECT_EQ(moved.code(), StatusCode::kNotFound);
  EXPECT_TRUE(e.ok());  // NOLINT(bugprone-use-after-move): documented state
  copy = moved;
  EXPECT_EQ(copy.message(), "no @g");
  copy = Status::Ok();
  EXPECT_TRUE(copy.ok());
}

}  // namespace
}  // namespace distir
