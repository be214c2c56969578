#include "io/hdf5_reader.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <sstream>
#include <system_error>
#include <utility>

namespace distir::io {
namespace {

// What a datatype holds, in the words of the messages ("holds floats").
std::string DescribeType(hid_t type) {
  switch (H5Tget_class(type)) {
    case H5T_INTEGER:
      return "integers";
    case H5T_FLOAT:
      return "floats";
    case H5T_STRING:
      return H5Tis_variable_str(type) > 0 ? "variable-length strings" : "fixed-length strings";
    case H5T_ENUM:
      return "enums";
    case H5T_COMPOUND:
      return "compound values";
    case H5T_ARRAY:
      return "arrays";
    case H5T_VLEN:
      return "variable-length sequences";
    case H5T_BITFIELD:
      return "bitfields";
    case H5T_OPAQUE:
      return "opaque values";
    case H5T_REFERENCE:
      return "references";
    default:
      return "values of an unknown type";
  }
}

const char* DescribeClass(H5T_class_t element) {
  switch (element) {
    case H5T_INTEGER:
      return "integers";
    case H5T_FLOAT:
      return "floats";
    default:
      return "variable-length strings";
  }
}

// Strings must be variable-length: HDF5 does not convert fixed-length strings
// to the variable-length memory type we read them as.
bool TypeMatches(hid_t type, H5T_class_t element) {
  if (H5Tget_class(type) != element) return false;
  return element != H5T_STRING || H5Tis_variable_str(type) > 0;
}

Hdf5Handle VariableString() {
  Hdf5Handle t(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(t.get(), H5T_VARIABLE);
  H5Tset_cset(t.get(), H5T_CSET_UTF8);
  return t;
}

// The extent of `space` for messages: "scalar", "empty" or "4 x 2".
std::string DescribeExtent(hid_t space) {
  if (H5Sget_simple_extent_type(space) == H5S_SCALAR) return "scalar";
  if (H5Sget_simple_extent_type(space) != H5S_SIMPLE) return "empty";
  hsize_t dims[H5S_MAX_RANK];
  const int rank = H5Sget_simple_extent_dims(space, dims, nullptr);
  std::ostringstream out;
  for (int i = 0; i < rank; ++i) out << (i > 0 ? " x " : "") << dims[i];
  return out.str();
}

// The number of elements of `space` when it has rank `rank` (0: a scalar);
// nullopt otherwise. Checked before the dims are read: a buffer for one
// extent receives as many extents as the space has dimensions.
std::optional<hsize_t> ElementsOfRank(hid_t space, int rank) {
  const H5S_class_t kind = H5Sget_simple_extent_type(space);
  if (rank == 0) return kind == H5S_SCALAR ? std::optional<hsize_t>(1) : std::nullopt;
  if (kind != H5S_SIMPLE || H5Sget_simple_extent_ndims(space) != 1) return std::nullopt;
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space, &n, nullptr);
  return n;
}

// True when the dataset's data passes through filters (compression), so that
// its declared size may exceed what it stores.
bool IsFiltered(hid_t set) {
  Hdf5Handle plist(H5Dget_create_plist(set), H5Pclose);
  return plist.ok() && H5Pget_nfilters(plist.get()) > 0;
}

}  // namespace

StatusOr<Hdf5Reader> Hdf5Reader::Open(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // HDF5 would block on a FIFO and read a device: only a regular file is a results file.
  const fs::file_status status = fs::status(path, ec);
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    return InvalidArgument() << "'" << path << "' is not a regular file";
  }
  QuietHdf5 quiet;
  Hdf5Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) return NotFound() << "cannot open '" << path << "' as an HDF5 file";
  // The size on disk, not H5Fget_filesize: that may report the end of the
  // address space the superblock claims, which a corrupt file sets at will.
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) return Internal() << "cannot read the size of '" << path << "': " << ec.message();
  return Hdf5Reader(path, std::move(file), static_cast<int64_t>(size));
}

bool Hdf5Reader::Has(const std::string& object) const {
  if (object == "/") return true;  // H5Lexists names links, and the root has none
  QuietHdf5 quiet;
  return H5Lexists(file_.get(), object.c_str(), H5P_DEFAULT) > 0;
}

bool Hdf5Reader::HasAttr(const std::string& object, const std::string& name) const {
  QuietHdf5 quiet;
  return Has(object) &&
         H5Aexists_by_name(file_.get(), object.c_str(), name.c_str(), H5P_DEFAULT) > 0;
}

StatusOr<hsize_t> Hdf5Reader::CheckLayout(const std::string& what, hid_t space, hid_t type,
                                          int rank, H5T_class_t element, bool filtered) const {
  const std::optional<hsize_t> n = ElementsOfRank(space, rank);
  if (!n) {
    return InvalidArgument() << "'" << path_ << "': " << what << " has extent "
                             << DescribeExtent(space) << "; the layout has "
                             << (rank == 0 ? "a scalar" : "a 1-D column");
  }
  if (!TypeMatches(type, element)) {
    return InvalidArgument() << "'" << path_ << "': " << what << " holds " << DescribeType(type)
                             << "; the layout has " << DescribeClass(element);
  }
  const hsize_t width = std::max<size_t>(H5Tget_size(type), 1);
  const hsize_t limit =
      static_cast<hsize_t>(file_size_) * (filtered ? kMaxHdf5CompressionRatio : 1);
  if (*n > limit / width) {
    return InvalidArgument() << "'" << path_ << "': " << what << " declares " << *n
                             << " elements of " << width << " bytes, more than the file ("
                             << file_size_ << " bytes) can hold";
  }
  return *n;
}

StatusOr<Hdf5Handle> Hdf5Reader::OpenDataset(const std::string& dataset, int rank,
                                             H5T_class_t element, hsize_t* elements) const {
  Hdf5Handle set(H5Dopen2(file_.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (!set.ok()) return InvalidArgument() << "'" << path_ << "' lacks dataset " << dataset;
  Hdf5Handle space(H5Dget_space(set.get()), H5Sclose);
  Hdf5Handle type(H5Dget_type(set.get()), H5Tclose);
  if (!space.ok() || !type.ok()) {
    return InvalidArgument() << "'" << path_ << "': cannot read the layout of dataset " << dataset;
  }
  DISTIR_ASSIGN_OR_RETURN(*elements, CheckLayout("dataset " + dataset, space.get(), type.get(),
                                                 rank, element, IsFiltered(set.get())));
  return set;
}

StatusOr<Hdf5Handle> Hdf5Reader::OpenAttr(const std::string& object, const std::string& name,
                                          H5T_class_t element) const {
  const std::string what = "attribute " + name + " of " + object;
  if (!HasAttr(object, name)) return InvalidArgument() << "'" << path_ << "' lacks " << what;
  Hdf5Handle attr(
      H5Aopen_by_name(file_.get(), object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose);
  Hdf5Handle space(H5Aget_space(attr.get()), H5Sclose);
  Hdf5Handle type(H5Aget_type(attr.get()), H5Tclose);
  if (!attr.ok() || !space.ok() || !type.ok()) {
    return InvalidArgument() << "'" << path_ << "': cannot read the layout of " << what;
  }
  DISTIR_RETURN_IF_ERROR(CheckLayout(what, space.get(), type.get(), 0, element, false).status());
  return attr;
}

template <typename T>
StatusOr<std::vector<T>> Hdf5Reader::ReadColumn(const std::string& dataset, H5T_class_t element,
                                                hid_t memory_type) const {
  QuietHdf5 quiet;
  hsize_t n = 0;
  DISTIR_ASSIGN_OR_RETURN(Hdf5Handle set, OpenDataset(dataset, 1, element, &n));
  std::vector<T> out(n);
  if (n > 0 && H5Dread(set.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0) {
    return InvalidArgument() << "'" << path_ << "': cannot read dataset " << dataset;
  }
  return out;
}

StatusOr<std::vector<int64_t>> Hdf5Reader::ReadInts(const std::string& dataset) const {
  return ReadColumn<int64_t>(dataset, H5T_INTEGER, H5T_NATIVE_INT64);
}

StatusOr<std::vector<int8_t>> Hdf5Reader::ReadInt8s(const std::string& dataset) const {
  return ReadColumn<int8_t>(dataset, H5T_INTEGER, H5T_NATIVE_INT8);
}

StatusOr<std::vector<int32_t>> Hdf5Reader::ReadInt32s(const std::string& dataset) const {
  return ReadColumn<int32_t>(dataset, H5T_INTEGER, H5T_NATIVE_INT32);
}

StatusOr<std::vector<double>> Hdf5Reader::ReadDoubles(const std::string& dataset) const {
  return ReadColumn<double>(dataset, H5T_FLOAT, H5T_NATIVE_DOUBLE);
}

StatusOr<std::vector<std::string>> Hdf5Reader::ReadStrings(const std::string& dataset) const {
  QuietHdf5 quiet;
  hsize_t n = 0;
  DISTIR_ASSIGN_OR_RETURN(Hdf5Handle set, OpenDataset(dataset, 1, H5T_STRING, &n));
  if (n == 0) return std::vector<std::string>{};
  Hdf5Handle type = VariableString();
  std::vector<char*> ptrs(n, nullptr);
  if (H5Dread(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()) < 0) {
    return InvalidArgument() << "'" << path_ << "': cannot read dataset " << dataset;
  }
  std::vector<std::string> out;
  out.reserve(n);
  for (const char* p : ptrs) out.emplace_back(p != nullptr ? p : "");
  // The strings were allocated by HDF5; it frees them with its own allocator.
  Hdf5Handle space(H5Dget_space(set.get()), H5Sclose);
  H5Dvlen_reclaim(type.get(), space.get(), H5P_DEFAULT, ptrs.data());
  return out;
}

StatusOr<std::string> Hdf5Reader::ReadText(const std::string& dataset) const {
  QuietHdf5 quiet;
  hsize_t n = 0;
  DISTIR_ASSIGN_OR_RETURN(Hdf5Handle set, OpenDataset(dataset, 0, H5T_STRING, &n));
  Hdf5Handle type = VariableString();
  char* p = nullptr;
  if (H5Dread(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &p) < 0) {
    return InvalidArgument() << "'" << path_ << "': cannot read dataset " << dataset;
  }
  std::string out = p != nullptr ? p : "";
  H5free_memory(p);
  return out;
}

StatusOr<std::vector<std::string>> Hdf5Reader::Children(const std::string& group) const {
  QuietHdf5 quiet;
  Hdf5Handle g(H5Gopen2(file_.get(), group.c_str(), H5P_DEFAULT), H5Gclose);
  H5G_info_t info{};
  if (!g.ok() || H5Gget_info(g.get(), &info) < 0) {
    return InvalidArgument() << "'" << path_ << "' lacks group " << group;
  }
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t size =
        H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    std::string name(size > 0 ? static_cast<size_t>(size) : 0, '\0');
    if (size < 0 || H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(),
                                       name.size() + 1, H5P_DEFAULT) < 0) {
      return InvalidArgument() << "'" << path_ << "': cannot read the members of group " << group;
    }
    names.push_back(std::move(name));
  }
  return names;
}

template <typename T>
StatusOr<T> Hdf5Reader::ReadScalarAttr(const std::string& object, const std::string& name,
                                       H5T_class_t element, hid_t memory_type) const {
  QuietHdf5 quiet;
  DISTIR_ASSIGN_OR_RETURN(Hdf5Handle attr, OpenAttr(object, name, element));
  T value{};
  if (H5Aread(attr.get(), memory_type, &value) < 0) {
    return InvalidArgument() << "'" << path_ << "': cannot read attribute " << name << " of "
                             << object;
  }
  return value;
}

StatusOr<int64_t> Hdf5Reader::ReadIntAttr(const std::string& object,
                                          const std::string& name) const {
  return ReadScalarAttr<int64_t>(object, name, H5T_INTEGER, H5T_NATIVE_INT64);
}

StatusOr<double> Hdf5Reader::ReadDoubleAttr(const std::string& object,
                                            const std::string& name) const {
  return ReadScalarAttr<double>(object, name, H5T_FLOAT, H5T_NATIVE_DOUBLE);
}

StatusOr<std::string> Hdf5Reader::ReadTextAttr(const std::string& object,
                                               const std::string& name) const {
  Hdf5Handle type = VariableString();
  DISTIR_ASSIGN_OR_RETURN(char* p, ReadScalarAttr<char*>(object, name, H5T_STRING, type.get()));
  std::string out = p != nullptr ? p : "";
  H5free_memory(p);
  return out;
}

}  // namespace distir::io
