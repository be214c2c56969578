// Scoped helpers for the HDF5 C API, shared by the readers and writers of
// src/io: an owning handle that closes an HDF5 id, the string type the writers
// store, and a guard that silences HDF5's printing of its error stack (the one
// place that calls H5Eset_auto).
//
// HDF5 reports a failure twice: by the return value, which src/io checks and
// turns into a Status, and by printing its error stack to stderr, which a
// missing optional group (an answer, not a failure) must not do. The guard
// restores the previous setting, so a program that wants HDF5's printing
// elsewhere keeps it.

#pragma once

#include <hdf5.h>

namespace distir::io {

/// Owns an HDF5 id (file, group, dataset, dataspace, datatype, attribute or
/// property list) and closes it with the matching H5?close function on
/// destruction. An id < 0 (a failed call) is held as "not ok" and not closed.
class Hdf5Handle {
 public:
  Hdf5Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Hdf5Handle(const Hdf5Handle&) = delete;
  Hdf5Handle& operator=(const Hdf5Handle&) = delete;
  /// Leaves `other` not ok.
  Hdf5Handle(Hdf5Handle&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  Hdf5Handle& operator=(Hdf5Handle&&) = delete;
  ~Hdf5Handle() {
    if (id_ >= 0) close_(id_);
  }

  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

/// The memory and file type of the variable-length UTF-8 strings the writers
/// of src/io store (datasets and attributes alike).
inline Hdf5Handle Utf8StringType() {
  Hdf5Handle t(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(t.get(), H5T_VARIABLE);
  H5Tset_cset(t.get(), H5T_CSET_UTF8);
  return t;
}

/// Silences HDF5's automatic error-stack printing (default error stack) for
/// the guard's lifetime and restores the previous handler afterwards. Not
/// thread-safe: HDF5's error settings are per thread in thread-safe builds,
/// global otherwise; src/io uses HDF5 from one thread.
class QuietHdf5 {
 public:
  QuietHdf5() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  QuietHdf5(const QuietHdf5&) = delete;
  QuietHdf5& operator=(const QuietHdf5&) = delete;
  ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

}  // namespace distir::io
