// io/yaml_reader.h: locations (1-based, file:1:1 for a null mark or an
// undefined node) and the key checks that hardware profiles and experiments
// share, with their exact messages.

#include "io/yaml_reader.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace distir::io {
namespace {

using ::distir::testing::StatusIs;

TEST(YamlReaderTest, LocationsAreOneBasedAndNameTheFile) {
  const YAML::Node root = YAML::Load("a: 1\nb:\n  c: 2\n");
  const YamlReader r("x.yaml");
  const SourceLoc loc = r.Loc(root["b"]["c"]);
  EXPECT_EQ(loc.file, "x.yaml");
  EXPECT_EQ(loc.line, 3);
  EXPECT_EQ(loc.col, 6);
  // A key that is not there: the file's start, not a throw.
  const SourceLoc missing = r.Loc(root["b"]["nope"]);
  EXPECT_EQ(missing.line, 1);
  EXPECT_EQ(missing.col, 1);
  EXPECT_EQ(r.Loc(YAML::Mark::null_mark()).line, 1);
}

TEST(YamlReaderTest, AcceptsAllowedKeys) {
  const YAML::Node root = YAML::Load("name: x\nsize: 2\n");
  EXPECT_OK(YamlReader("x.yaml").CheckKeys(root, "thing", {"name", "size", "other"}));
}

TEST(YamlReaderTest, UnknownKeyListsTheAllowedOnesAtTheKey) {
  const YAML::Node root = YAML::Load("name: x\nsise: 2\n");
  const Status s = YamlReader("x.yaml").CheckKeys(root, "device", {"name", "size"});
  EXPECT_THAT(s, StatusIs(StatusCode::kInvalidArgument,
                          "unknown key 'sise' in device; expected one of: name, size"));
  EXPECT_EQ(s.loc().line, 2);
  EXPECT_EQ(s.loc().col, 1);
}

TEST(YamlReaderTest, DuplicateKeyIsAnErrorAtTheSecond) {
  const YAML::Node root = YAML::Load("name: x\nname: y\n");
  const Status s = YamlReader("x.yaml").CheckKeys(root, "space", {"name"});
  EXPECT_THAT(s, StatusIs(StatusCode::kInvalidArgument, "duplicate key 'name' in space"));
  EXPECT_EQ(s.loc().line, 2);
}

TEST(YamlReaderTest, KeyThatIsAListIsNotAWord) {
  const YAML::Node root = YAML::Load("[a, b]: 1\n");
  EXPECT_THAT(YamlReader("x.yaml").CheckKeys(root, "model", {"a"}),
              StatusIs(StatusCode::kInvalidArgument, "keys of model must be plain words"));
}

TEST(YamlReaderTest, DescribesNodesForMessages) {
  EXPECT_EQ(DescribeYamlNode(YAML::Load("{a: 1}")), "a map");
  EXPECT_EQ(DescribeYamlNode(YAML::Load("[1]")), "a list");
  EXPECT_EQ(DescribeYamlNode(YAML::Load("abc")), "'abc'");
  EXPECT_EQ(DescribeYamlNode(YAML::Load("~")), "nothing");
  EXPECT_EQ(DescribeYamlNode(YAML::Load("a: 1")["b"]), "nothing");
}

}  // namespace
}  // namespace distir::io
