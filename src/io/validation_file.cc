#include "io/validation_file.h"

#include <hdf5.h>

#include <cstdio>
#include <filesystem>
#include <system_error>

#include "io/hdf5_handle.h"
#include "io/hdf5_reader.h"

namespace distir::io {
namespace {

constexpr const char* kGroup = "/validation";

using Handle = Hdf5Handle;

template <typename T>
bool WriteAttr(hid_t where, const char* name, hid_t type, T value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(H5Acreate2(where, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  return a.ok() && H5Awrite(a.get(), type, &value) >= 0;
}

bool WriteText(hid_t where, const char* name, const std::string& text) {
  Handle type = Utf8StringType();
  return WriteAttr(where, name, type.get(), text.c_str());
}

bool WriteRankStats(hid_t g, const ValidationRecord& r) {
  const hid_t i64 = H5T_NATIVE_INT64, f64 = H5T_NATIVE_DOUBLE;
  return WriteText(g, "rank_undefined_reason", r.rank_undefined_reason) &&
         WriteAttr(g, "spearman_rho", f64, r.spearman_rho) &&
         WriteAttr(g, "spearman_p", f64, r.spearman_p) &&
         WriteAttr(g, "kendall_tau", f64, r.kendall_tau) &&
         WriteAttr(g, "rho_ci_low", f64, r.rho_ci_low) &&
         WriteAttr(g, "rho_ci_high", f64, r.rho_ci_high) &&
         WriteAttr(g, "rho_ci_confidence", f64, r.rho_ci_confidence) &&
         WriteAttr(g, "bootstrap_resamples", i64, r.bootstrap_resamples) &&
         WriteAttr(g, "bootstrap_seed", i64, r.bootstrap_seed) &&
         WriteAttr(g, "bootstrap_undefined", i64, r.bootstrap_undefined) &&
         WriteAttr(g, "pairs", i64, r.pairs) &&
         WriteAttr(g, "near_tie_pairs", i64, r.near_tie_pairs) &&
         WriteAttr(g, "simulated_tie_pairs", i64, r.simulated_tie_pairs) &&
         WriteAttr(g, "measured_tie_pairs", i64, r.measured_tie_pairs) &&
         WriteAttr(g, "discordant_pairs", i64, r.discordant_pairs) &&
         WriteAttr(g, "discordant_beyond_noise", i64, r.discordant_beyond_noise);
}

// Writes the group into an open file, replacing an earlier one. Deleting the old
// group first keeps the attribute set exactly the documented one.
bool WriteGroup(hid_t file, const ValidationRecord& r) {
  if (H5Lexists(file, kGroup, H5P_DEFAULT) > 0 && H5Ldelete(file, kGroup, H5P_DEFAULT) < 0) {
    return false;
  }
  Handle g(H5Gcreate2(file, kGroup, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!g.ok()) return false;
  const hid_t i64 = H5T_NATIVE_INT64, f64 = H5T_NATIVE_DOUBLE;
  return WriteAttr(g.get(), "n", i64, r.n) && WriteRankStats(g.get(), r) &&
         WriteAttr(g.get(), "mape_iteration_time", f64, r.mape_iteration_time) &&
         WriteAttr(g.get(), "top1_match", H5T_NATIVE_INT8, static_cast<int8_t>(r.top1_match)) &&
         WriteAttr(g.get(), "simulated_top1_config", i64, r.simulated_top1_config) &&
         WriteAttr(g.get(), "measured_top1_config", i64, r.measured_top1_config) &&
         WriteText(g.get(), "calibration_warning", r.calibration_warning);
}

Status ReadRankStats(const Hdf5Reader& r, ValidationRecord& v) {
  DISTIR_ASSIGN_OR_RETURN(v.rank_undefined_reason, r.ReadTextAttr(kGroup, "rank_undefined_reason"));
  DISTIR_ASSIGN_OR_RETURN(v.spearman_rho, r.ReadDoubleAttr(kGroup, "spearman_rho"));
  DISTIR_ASSIGN_OR_RETURN(v.spearman_p, r.ReadDoubleAttr(kGroup, "spearman_p"));
  DISTIR_ASSIGN_OR_RETURN(v.kendall_tau, r.ReadDoubleAttr(kGroup, "kendall_tau"));
  DISTIR_ASSIGN_OR_RETURN(v.rho_ci_low, r.ReadDoubleAttr(kGroup, "rho_ci_low"));
  DISTIR_ASSIGN_OR_RETURN(v.rho_ci_high, r.ReadDoubleAttr(kGroup, "rho_ci_high"));
  DISTIR_ASSIGN_OR_RETURN(v.rho_ci_confidence, r.ReadDoubleAttr(kGroup, "rho_ci_confidence"));
  DISTIR_ASSIGN_OR_RETURN(v.bootstrap_resamples, r.ReadIntAttr(kGroup, "bootstrap_resamples"));
  DISTIR_ASSIGN_OR_RETURN(v.bootstrap_seed, r.ReadIntAttr(kGroup, "bootstrap_seed"));
  DISTIR_ASSIGN_OR_RETURN(v.bootstrap_undefined, r.ReadIntAttr(kGroup, "bootstrap_undefined"));
  DISTIR_ASSIGN_OR_RETURN(v.pairs, r.ReadIntAttr(kGroup, "pairs"));
  DISTIR_ASSIGN_OR_RETURN(v.near_tie_pairs, r.ReadIntAttr(kGroup, "near_tie_pairs"));
  DISTIR_ASSIGN_OR_RETURN(v.simulated_tie_pairs, r.ReadIntAttr(kGroup, "simulated_tie_pairs"));
  DISTIR_ASSIGN_OR_RETURN(v.measured_tie_pairs, r.ReadIntAttr(kGroup, "measured_tie_pairs"));
  DISTIR_ASSIGN_OR_RETURN(v.discordant_pairs, r.ReadIntAttr(kGroup, "discordant_pairs"));
  DISTIR_ASSIGN_OR_RETURN(v.discordant_beyond_noise,
                          r.ReadIntAttr(kGroup, "discordant_beyond_noise"));
  return Status::Ok();
}

Status Discard(const std::string& tmp, Status status) {
  std::remove(tmp.c_str());
  return status;
}

}  // namespace

Status WriteValidation(const std::string& path, const ValidationRecord& record) {
  QuietHdf5 quiet;
  {
    // Checked before copying so that a wrong path is a NotFound, not a failed copy.
    Handle probe(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    if (!probe.ok()) return NotFound() << "cannot open '" << path << "' as an HDF5 file";
  }
  const std::string tmp = path + ".tmp";
  std::error_code ec;
  std::filesystem::copy_file(path, tmp, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec)
    return Discard(tmp, Internal()
                            << "cannot copy '" << path << "' to '" << tmp << "': " << ec.message());
  hid_t file = H5Fopen(tmp.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (file < 0) return Discard(tmp, Internal() << "cannot open '" << tmp << "' for writing");
  const bool written = WriteGroup(file, record);
  if (H5Fclose(file) < 0 || !written) {
    return Discard(tmp, Internal() << "writing /validation to '" << tmp << "' failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Discard(tmp, Internal() << "cannot rename '" << tmp << "' to '" << path << "'");
  }
  return Status::Ok();
}

StatusOr<ValidationRecord> ReadValidation(const std::string& path) {
  DISTIR_ASSIGN_OR_RETURN(Hdf5Reader r, Hdf5Reader::Open(path));
  if (!r.Has(kGroup)) {
    return NotFound() << "'" << path << "' has no /validation group; run 'distir validate' first";
  }
  ValidationRecord v;
  DISTIR_ASSIGN_OR_RETURN(v.n, r.ReadIntAttr(kGroup, "n"));
  DISTIR_RETURN_IF_ERROR(ReadRankStats(r, v));
  DISTIR_ASSIGN_OR_RETURN(v.mape_iteration_time, r.ReadDoubleAttr(kGroup, "mape_iteration_time"));
  DISTIR_ASSIGN_OR_RETURN(int64_t match, r.ReadIntAttr(kGroup, "top1_match"));
  v.top1_match = match != 0;
  DISTIR_ASSIGN_OR_RETURN(v.simulated_top1_config, r.ReadIntAttr(kGroup, "simulated_top1_config"));
  DISTIR_ASSIGN_OR_RETURN(v.measured_top1_config, r.ReadIntAttr(kGroup, "measured_top1_config"));
  DISTIR_ASSIGN_OR_RETURN(v.calibration_warning, r.ReadTextAttr(kGroup, "calibration_warning"));
  return v;
}

}  // namespace distir::io
