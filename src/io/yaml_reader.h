// Located reading of YAML documents: the one place that turns yaml-cpp's marks
// into `file:line:col` and checks the keys of a map, shared by the readers of
// hardware profiles (sim/hardware_profile.cc) and of experiments
// (search/experiment.cc), so that both say "unknown key 'x' in device;
// expected one of: ..." at the same place and in the same words.
//
// It lives in distir_io, which depends on distir_support only, so that
// distir_sim (below distir_search) can use it as well; see STYLE.md §1, which
// puts the YAML layer in src/io.

#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "support/status.h"

namespace distir::io {

/// Locates the nodes of one YAML document read from `file`. Cheap to copy;
/// holds no node.
class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }

  /// yaml-cpp marks are 0-based; ours are 1-based. A null mark (the root of an
  /// empty document, an error at the end of the input) is the file's start,
  /// so that every error reads file:line:col.
  SourceLoc Loc(const YAML::Mark& mark) const;
  /// The node's mark; file:1:1 for a node looked up under a missing key
  /// (undefined), whose Mark() would throw.
  SourceLoc Loc(const YAML::Node& node) const;

  /// Checks the keys of the map `node`, whose entity name for messages is
  /// `what` (e.g. "device.gemm", "space"), against `allowed`. Errors
  /// (InvalidArgument, at the key):
  ///   "keys of <what> must be plain words" (a key that is a list or a map);
  ///   "unknown key '<k>' in <what>; expected one of: <allowed, in order>";
  ///   "duplicate key '<k>' in <what>".
  /// REQUIRES: node.IsMap(); callers report a non-map in their own words.
  Status CheckKeys(const YAML::Node& node, const std::string& what,
                   std::initializer_list<std::string_view> allowed) const;

 private:
  std::string file_;
};

/// What a node is, for messages: "a map", "a list", "nothing" (null or
/// undefined) or the scalar quoted ("'abc'").
std::string DescribeYamlNode(const YAML::Node& node);

}  // namespace distir::io
