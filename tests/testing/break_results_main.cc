// distir-break-results DEFECT FILE: writes a results file with one defect
// (testing/broken_results_file.h) for the lit tests of the readers. Exit 0 on
// success, 2 for a usage error, 1 when writing fails.

#include <iostream>
#include <string>

#include "testing/broken_results_file.h"

int main(int argc, char** argv) {
  using distir::testing::ParseResultsDefect;
  const auto defect = argc == 3 ? ParseResultsDefect(argv[1]) : std::nullopt;
  if (!defect) {
    std::cerr << "usage: distir-break-results DEFECT FILE; DEFECT is one of:";
    for (auto d : distir::testing::AllResultsDefects()) {
      std::cerr << " " << distir::testing::ResultsDefectName(d);
    }
    std::cerr << "\n";
    return 2;
  }
  const distir::Status written = distir::testing::WriteBrokenResultsFile(argv[2], *defect);
  if (!written.ok()) {
    std::cerr << "distir-break-results: " << written.ToString() << "\n";
    return 1;
  }
  return 0;
}
