// Reading an HDF5 file against a documented layout (docs/results_format.md).
//
// A dataspace is only a claim: h5py writes a 2-D column as readily as a 1-D
// one, and a dataset can declare 2^40 rows while storing none. Reading into a
// buffer sized for the documented shape overruns it when the rank differs, and
// sizing it by a huge extent fails allocation, so every dataset and attribute is
// checked before it is read: rank, extent (bounded by the file's own size) and
// the class of its element type. The results, measurements and validation
// readers (results_file.h, measurements.h, validation_file.h) read through it;
// its errors name the file and the dataset. The writers do not use it.

#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/hdf5_handle.h"
#include "support/status_or.h"

namespace distir::io {

/// The most a filtered (compressed) dataset may declare, as a multiple of the
/// file's size: deflate, the filter h5py offers by default, cannot compress
/// more than about 1032:1. An unfiltered dataset may declare at most the file's
/// size, since its data is stored in the file.
inline constexpr int64_t kMaxHdf5CompressionRatio = 1032;

/// An HDF5 file open for reading. Move-only; closes the file on destruction.
/// Each call silences HDF5's error printing while it runs (QuietHdf5).
///
/// Errors of the Read* functions are InvalidArgument, of the form
/// "'<path>': dataset /configs/dp has rank 2 (4 x 2); the layout has a 1-D column",
/// and name the file, the dataset (or attribute) and the rule broken:
///   * missing:   "'<path>' lacks dataset /ranking";
///   * rank:      a column must be 1-D, a text or attribute a scalar;
///   * type:      the element type's class must be the expected one (integers,
///                floats, variable-length strings); HDF5 converts between widths
///                and byte orders of one class (an int32 column reads as int64),
///                but an int column where floats are documented is an error;
///   * size:      the declared bytes must fit in the file (see
///                kMaxHdf5CompressionRatio for filtered datasets).
class Hdf5Reader {
 public:
  /// Opens `path` read-only. NotFound "cannot open '<path>' as an HDF5 file"
  /// when it does not exist or is not HDF5.
  static StatusOr<Hdf5Reader> Open(const std::string& path);

  const std::string& path() const { return path_; }
  hid_t file() const { return file_.get(); }

  /// True when the object at the absolute path `object` (e.g. "/measured") exists.
  bool Has(const std::string& object) const;
  /// True when the object `object` exists and has an attribute `name`.
  bool HasAttr(const std::string& object, const std::string& name) const;

  /// The 1-D dataset at the absolute path `dataset`, of integers, converted
  /// to int64 or int8 (out-of-range values saturate, as HDF5 converts).
  StatusOr<std::vector<int64_t>> ReadInts(const std::string& dataset) const;
  StatusOr<std::vector<int8_t>> ReadInt8s(const std::string& dataset) const;
  StatusOr<std::vector<int32_t>> ReadInt32s(const std::string& dataset) const;
  /// The 1-D dataset `dataset` of floats, as double.
  StatusOr<std::vector<double>> ReadDoubles(const std::string& dataset) const;
  /// The 1-D dataset `dataset` of variable-length strings.
  StatusOr<std::vector<std::string>> ReadStrings(const std::string& dataset) const;
  /// The scalar dataset `dataset` holding one variable-length string.
  StatusOr<std::string> ReadText(const std::string& dataset) const;

  /// The names of the links in the group `group` (e.g. "/traces"), in HDF5's
  /// name order (byte-wise: "10" before "2"). InvalidArgument when `group` is
  /// missing or not a group.
  StatusOr<std::vector<std::string>> Children(const std::string& group) const;

  /// The scalar attribute `name` of the object `object` ("/" for the root):
  /// an integer, a float or a variable-length string. Errors as above, with
  /// "attribute <name> of <object>".
  StatusOr<int64_t> ReadIntAttr(const std::string& object, const std::string& name) const;
  StatusOr<double> ReadDoubleAttr(const std::string& object, const std::string& name) const;
  StatusOr<std::string> ReadTextAttr(const std::string& object, const std::string& name) const;

 private:
  Hdf5Reader(std::string path, Hdf5Handle file, int64_t file_size)
      : path_(std::move(path)), file_(std::move(file)), file_size_(file_size) {}

  // The number of elements of a dataset or attribute (`what` names it) with
  // dataspace `space` and datatype `type`, when its layout is `rank` (0: a
  // scalar) elements of class `element`; otherwise the error.
  StatusOr<hsize_t> CheckLayout(const std::string& what, hid_t space, hid_t type, int rank,
                                H5T_class_t element, bool filtered) const;
  // Opens `dataset` and checks it with CheckLayout; sets *elements.
  StatusOr<Hdf5Handle> OpenDataset(const std::string& dataset, int rank, H5T_class_t element,
                                   hsize_t* elements) const;
  // Opens the scalar attribute `name` of `object`, checked likewise.
  StatusOr<Hdf5Handle> OpenAttr(const std::string& object, const std::string& name,
                                H5T_class_t element) const;
  template <typename T>
  StatusOr<std::vector<T>> ReadColumn(const std::string& dataset, H5T_class_t element,
                                      hid_t memory_type) const;
  template <typename T>
  StatusOr<T> ReadScalarAttr(const std::string& object, const std::string& name,
                             H5T_class_t element, hid_t memory_type) const;

  std::string path_;
  Hdf5Handle file_;
  int64_t file_size_;
};

}  // namespace distir::io
