#include "lowering_test_util.h"

#include <fstream>
#include <sstream>

#include "testing/test_util.h"

namespace distir::testing {

std::string ReadExample(const std::string& name) {
  std::ifstream in(SourcePath("data/examples/" + name));
  EXPECT_TRUE(in.good()) << "cannot read " << name;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Module LoadExample(const std::string& name) { return ParseAndInferOrDie(ReadExample(name)); }

}  // namespace distir::testing
