// Size limits of the built-in models, checked before a model is built.
//
// Tensor sizes, and the sums of a program's tensors per device, are int64 bytes
// downstream (types, the memory tracker, the collectives' buffers). Options come
// from experiment files and the command line and may be anything up to
// 2^63 - 1, so the products they form (d_model x d_model, batch x seq_len x
// vocab) are computed here with checked arithmetic and bounded before any type
// is built from them; a size that does not fit is an error naming the option,
// never a wrapped value. The bound, 1 EiB for all of a model's tensors, keeps
// the distributed program's per-device sums (a replica's weights plus
// communication buffers plus activations) several times below 2^63.

#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "support/status.h"

namespace distir {

/// The most bytes all the tensors of one sequential model may take: 1 EiB.
inline constexpr int64_t kMaxModelBytes = int64_t{1} << 60;

/// The most ops a program the simulator builds may have, sequential or
/// distributed (about 110 GiB of IR at some 850 bytes per op).
inline constexpr int64_t kMaxModelOps = int64_t{1} << 27;

/// Adds up the bytes of a model's tensors, by kinds of tensor, with checked
/// arithmetic, and says which option is to blame when they do not fit.
class ModelSizeCheck {
 public:
  /// `family` starts the messages: "mlp", "gpt2".
  explicit ModelSizeCheck(std::string family) : family_(std::move(family)) {}

  /// Adds `count` tensors of product(`dims`) elements of `width` bytes each
  /// (nullopt `count`: more than int64 holds). `what` describes one of them,
  /// e.g. "a d_model x d_model weight of f32"; `option` = `value` is the option
  /// blamed when one alone takes more than kMaxModelBytes or when this kind
  /// takes the most bytes of a total that does. Does nothing after an error.
  void AddTensors(std::optional<int64_t> count, std::initializer_list<int64_t> dims, int64_t width,
                  std::string_view what, const char* option, int64_t value);

  /// Ok when every tensor fits, the model has at most kMaxModelOps ops (`ops`;
  /// nullopt: more than int64 holds; too many blames `ops_option` =
  /// `ops_value`) and its tensors at most kMaxModelBytes in all. Otherwise
  /// InvalidArgument naming the option, which is also stored in `*culprit`
  /// when `culprit` is not null.
  Status Finish(std::optional<int64_t> ops, const char* ops_option, int64_t ops_value,
                std::string* culprit) const;

 private:
  struct Blame {
    std::string option;
    int64_t value = 0;
    std::string what;
  };
  Status Error(const Blame& blame, const std::string& why, std::string* culprit) const;

  std::string family_;
  std::optional<Blame> too_large_;  // the first tensor that alone does not fit
  int64_t total_ = 0;
  bool total_overflows_ = false;
  int64_t largest_kind_ = -1;  // bytes of the kind of tensor that takes the most
  Blame largest_;
};

}  // namespace distir
