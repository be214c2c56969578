// Test helpers shared by every unit test (STYLE.md §7).
//
//   ASSERT_OK_AND_ASSIGN(Module m, ParseModule(text));
//   EXPECT_OK(VerifyModule(m));
//   EXPECT_THAT(status, StatusIs(StatusCode::kInvalidArgument, "contraction"));
//   Module m = ParseOrDie(R"(func @f(...) {...})");

#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "ir/function.h"
#include "support/status_or.h"

namespace distir::testing {

/// Parses `text` as a module or fails the test (and aborts the process).
Module ParseOrDie(std::string_view text);

/// Parses, verifies and infers types, or fails.
Module ParseAndInferOrDie(std::string_view text);

/// The type of the entry function's value %`name`, printed, or
/// "<no value %name>" when there is none (for EXPECT_EQ on builders' programs).
std::string EntryValueType(const Module& m, const std::string& name);

/// Path of a file in the source tree, from $DISTIR_SOURCE_DIR (set by CTest).
std::string SourcePath(const std::string& relative);

inline const Status& GetStatus(const Status& s) { return s; }
template <typename T>
const Status& GetStatus(const StatusOr<T>& s) {
  return s.status();
}

MATCHER_P2(StatusIs, code, substring,
           "status has code " + std::string(StatusCodeName(code)) + " and mentions '" +
               std::string(substring) + "'") {
  const Status& s = ::distir::testing::GetStatus(arg);
  *result_listener << "status is " << s.ToString();
  return s.code() == code && s.message().find(substring) != std::string::npos;
}

}  // namespace distir::testing

#define EXPECT_OK(expr)                                                      \
  do {                                                                       \
    const ::distir::Status _distir_s = ::distir::testing::GetStatus((expr)); \
    EXPECT_TRUE(_distir_s.ok()) << _distir_s.ToString();                     \
  } while (0)

#define ASSERT_OK(expr)                                                      \
  do {                                                                       \
    const ::distir::Status _distir_s = ::distir::testing::GetStatus((expr)); \
    ASSERT_TRUE(_distir_s.ok()) << _distir_s.ToString();                     \
  } while (0)

#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  ASSERT_OK_AND_ASSIGN_IMPL(DISTIR_STATUS_CONCAT(_distir_t_, __LINE__), lhs, expr)
#define ASSERT_OK_AND_ASSIGN_IMPL(tmp, lhs, expr)   \
  auto tmp = (expr);                                \
  ASSERT_TRUE(tmp.ok()) << tmp.status().ToString(); \
  lhs = std::move(tmp).value()
