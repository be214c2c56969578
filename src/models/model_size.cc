#include "models/model_size.h"

#include "support/checked_math.h"

namespace distir {
namespace {

// product(dims) * width, or nullopt when it overflows or exceeds kMaxModelBytes.
std::optional<int64_t> TensorBytes(std::initializer_list<int64_t> dims, int64_t width) {
  std::optional<int64_t> bytes = width;
  for (int64_t d : dims) {
    if (bytes) bytes = CheckedMul(*bytes, d);
  }
  if (!bytes || *bytes > kMaxModelBytes) return std::nullopt;
  return bytes;
}

}  // namespace

void ModelSizeCheck::AddTensors(std::optional<int64_t> count, std::initializer_list<int64_t> dims,
                                int64_t width, std::string_view what, const char* option,
                                int64_t value) {
  if (too_large_) return;
  Blame blame{option, value, std::string(what)};
  const std::optional<int64_t> one = TensorBytes(dims, width);
  if (!one) {
    too_large_ = std::move(blame);
    return;
  }
  const std::optional<int64_t> kind = count ? CheckedMul(*count, *one) : std::nullopt;
  const std::optional<int64_t> total = kind ? CheckedAdd(total_, *kind) : std::nullopt;
  total_overflows_ = total_overflows_ || !total;
  if (total) total_ = *total;
  const int64_t kind_bytes = kind ? *kind : INT64_MAX;
  if (kind_bytes > largest_kind_) {
    largest_kind_ = kind_bytes;
    largest_ = std::move(blame);
  }
}

Status ModelSizeCheck::Error(const Blame& blame, const std::string& why,
                             std::string* culprit) const {
  if (culprit != nullptr) *culprit = blame.option;
  return InvalidArgument() << family_ << " option " << blame.option << " " << blame.value
                           << " is too large: " << why;
}

Status ModelSizeCheck::Finish(std::optional<int64_t> ops, const char* ops_option, int64_t ops_value,
                              std::string* culprit) const {
  if (too_large_) {
    return Error(*too_large_,
                 too_large_->what +
                     " would take more than 1 EiB (2^60 bytes), the most the simulator accepts",
                 culprit);
  }
  if (!ops || *ops > kMaxModelOps) {
    const std::string count = ops ? std::to_string(*ops) : "more than 2^63";
    return Error(Blame{ops_option, ops_value, ""},
                 "the model would have " + count + " ops, more than the " +
                     std::to_string(kMaxModelOps) + " the simulator accepts",
                 culprit);
  }
  if (total_overflows_ || total_ > kMaxModelBytes) {
    return Error(largest_,
                 "the model's tensors would take more than 1 EiB (2^60 bytes) in all, the most "
                 "the simulator accepts (most of it: " +
                     largest_.what + ", and others like it)",
                 culprit);
  }
  return Status::Ok();
}

}  // namespace distir
