// What a buffer holds, for the simulator's memory breakdown: weights,
// gradients, optimizer state, activations, inputs or other. The simulator
// knows nothing of any model's naming: a client that knows (the transformer's
// value names, models/transformer_memory.h) passes a MemoryClassifier in
// SimulateOptions, and memory_tracker.h then keeps live bytes per kind and
// the kinds at each device's peak. Rules in docs/cost_model.md §4.

#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string_view>

#include "ir/value.h"

namespace distir::sim {

enum class MemoryKind : uint8_t {
  kWeights,         ///< model weights, low-precision compute copies included
  kGradients,       ///< weight gradients (main gradients included)
  kOptimizerState,  ///< master weights, optimizer moments
  kActivations,     ///< values computed by the forward and backward passes
  kInputs,          ///< the step's data (tokens, labels)
  kOther,           ///< constants, callee scratch, anything unclassified
};

inline constexpr int kNumMemoryKinds = 6;

/// Bytes per kind, indexed by static_cast<int>(MemoryKind).
using MemoryByKind = std::array<int64_t, kNumMemoryKinds>;

/// "weights", "gradients", "optimizer_state", "activations", "inputs", "other".
std::string_view MemoryKindName(MemoryKind kind);

/// Maps a value to the kind of the buffers it allocates. A buffer takes the
/// kind of the value that allocates it (views and in-place updates keep their
/// source's kind; a call's scratch is kOther).
using MemoryClassifier = std::function<MemoryKind(const Value&)>;

}  // namespace distir::sim
