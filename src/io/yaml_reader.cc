#include "io/yaml_reader.h"

#include <set>

namespace distir::io {
namespace {

std::string JoinKeys(std::initializer_list<std::string_view> keys) {
  std::string out;
  for (std::string_view k : keys) out += (out.empty() ? "" : ", ") + std::string(k);
  return out;
}

bool Contains(std::initializer_list<std::string_view> keys, std::string_view key) {
  for (std::string_view k : keys) {
    if (k == key) return true;
  }
  return false;
}

}  // namespace

SourceLoc YamlReader::Loc(const YAML::Mark& mark) const {
  if (mark.is_null()) return SourceLoc{file_, 1, 1, ""};
  return SourceLoc{file_, mark.line + 1, mark.column + 1, ""};
}

SourceLoc YamlReader::Loc(const YAML::Node& node) const {
  return node.IsDefined() ? Loc(node.Mark()) : SourceLoc{file_, 1, 1, ""};
}

Status YamlReader::CheckKeys(const YAML::Node& node, const std::string& what,
                             std::initializer_list<std::string_view> allowed) const {
  std::set<std::string> seen;
  for (const auto& entry : node) {
    const YAML::Node& key = entry.first;
    if (!key.IsScalar()) {
      return InvalidArgument(Loc(key)) << "keys of " << what << " must be plain words";
    }
    const std::string& name = key.Scalar();
    if (!Contains(allowed, name)) {
      return InvalidArgument(Loc(key)) << "unknown key '" << name << "' in " << what
                                       << "; expected one of: " << JoinKeys(allowed);
    }
    if (!seen.insert(name).second) {
      return InvalidArgument(Loc(key)) << "duplicate key '" << name << "' in " << what;
    }
  }
  return Status::Ok();
}

std::string DescribeYamlNode(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "'" + node.Scalar() + "'";
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing";
}

}  // namespace distir::io
