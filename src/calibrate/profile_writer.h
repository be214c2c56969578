// Writing a hardware profile back as YAML, in the format LoadHardwareProfile()
// reads (docs/configs.md, "Hardware profiles").
//
// `distir calibrate` builds a sim::HardwareProfile from its fits and writes it
// with this, so every value carries an explicit unit and the file loads back
// through the same loader as the shipped profiles (a test checks the round
// trip). Comments (the provenance of each fitted number, the fit quality) go at
// the top of the file, one `# ` line each.

#pragma once

#include <string>
#include <vector>

#include "sim/hardware_profile.h"

namespace distir::calibrate {

/// The YAML text of `hw`, preceded by `header` as comment lines. Numbers are
/// written with 7 significant digits; `num_nodes` 0 is written `any`; the
/// inter_node link is written only when num_nodes != 1; peak_flops.bf16 and
/// .f64 only when non-zero; matmul_regression and calibrated_on only when present.
std::string EmitHardwareProfileYaml(const sim::HardwareProfile& hw,
                                    const std::vector<std::string>& header);

}  // namespace distir::calibrate
