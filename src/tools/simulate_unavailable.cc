// Placeholder linked only while src/sim is not part of the build.
#include <iostream>

#include "tools/commands.h"

namespace distir::tools {

int RunSimulate(int, char**) {
  std::cerr << "distir simulate: this build has no simulator library\n";
  return kExitUsage;
}

}  // namespace distir::tools
