// StatusOr<T>: a value or the Status explaining why there is none.
//
// The companion of status.h for functions that produce something. Accessing the
// value of an error StatusOr is a bug and fails a DISTIR_CHECK.

#pragma once

#include <optional>
#include <utility>

#include "support/check.h"
#include "support/status.h"

namespace distir {

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  /// REQUIRES: !status.ok(); an ok Status without a value is a bug.
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    DISTIR_CHECK(!status_.ok()) << "StatusOr built from an ok Status without a value";
  }
  StatusOr(const StatusBuilder& builder) : StatusOr(builder.Build()) {}  // NOLINT
  StatusOr(T value) : value_(std::move(value)) {}                    // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const& { return status_; }
  Status status() && { return std::move(status_); }

  /// REQUIRES: ok().
  const T& value() const& {
    DISTIR_CHECK(ok()) << "value() of an error StatusOr: " << status_.ToString();
    return *value_;
  }
  T& value() & {
    DISTIR_CHECK(ok()) << "value() of an error StatusOr: " << status_.ToString();
    return *value_;
  }
  T value() && {
    DISTIR_CHECK(ok()) << "value() of an error StatusOr: " << status_.ToString();
    return std::move(*value_);
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace distir
