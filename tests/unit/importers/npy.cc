#include "npy.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

namespace distir::testing {
namespace {

// The value of `key` in the header dict, e.g. "'<f4'" or "(2, 8)".
std::string HeaderField(const std::string& header, const std::string& key) {
  const size_t at = header.find("'" + key + "':");
  if (at == std::string::npos) return "";
  size_t start = at + key.size() + 3;
  while (start < header.size() && header[start] == ' ') ++start;
  const char close = header[start] == '(' ? ')' : header[start] == '\'' ? '\'' : ',';
  const size_t end = header.find(close, start + 1);
  if (end == std::string::npos) return "";
  return header.substr(start, end - start + 1);
}

StatusOr<std::vector<int64_t>> ParseShape(const std::string& tuple, const std::string& path) {
  if (tuple.size() < 2 || tuple.front() != '(') {
    return InvalidArgument(SourceLoc{path, 0, 0, {}}) << "bad .npy shape " << tuple;
  }
  std::vector<int64_t> shape;
  std::stringstream in(tuple.substr(1, tuple.size() - 2));
  std::string part;
  while (std::getline(in, part, ',')) {
    if (part.find_first_not_of(' ') == std::string::npos) continue;
    shape.push_back(std::stoll(part));
  }
  return shape;
}

template <typename T>
void Decode(const std::string& data, std::vector<double>& out) {
  for (size_t i = 0; i + sizeof(T) <= data.size(); i += sizeof(T)) {
    T v;
    std::memcpy(&v, data.data() + i, sizeof v);
    out.push_back(static_cast<double>(v));
  }
}

}  // namespace

StatusOr<DenseTensor> ReadNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(SourceLoc{path, 0, 0, {}}) << "cannot open .npy file";
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string bytes = buffer.str();
  const SourceLoc loc{path, 0, 0, {}};
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    return InvalidArgument(loc) << "not a .npy file";
  }
  const int major = bytes[6];
  const size_t len_bytes = major == 1 ? 2 : 4;
  size_t header_len = 0;
  for (size_t i = 0; i < len_bytes; ++i) {
    header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  }
  const size_t data_at = 8 + len_bytes + header_len;
  if (data_at > bytes.size()) return InvalidArgument(loc) << "truncated .npy header";
  const std::string header = bytes.substr(8 + len_bytes, header_len);
  if (HeaderField(header, "fortran_order").rfind("False", 0) != 0) {
    return InvalidArgument(loc) << "only C-order .npy files are supported";
  }
  const std::string descr = HeaderField(header, "descr");
  DenseTensor t;
  DISTIR_ASSIGN_OR_RETURN(t.shape, ParseShape(HeaderField(header, "shape"), path));
  const std::string data = bytes.substr(data_at);
  if (descr == "'<f4'") {
    t.dtype = DType::kF32;
    Decode<float>(data, t.values);
  } else if (descr == "'<f8'") {
    t.dtype = DType::kF64;
    Decode<double>(data, t.values);
  } else if (descr == "'<i4'") {
    t.dtype = DType::kI32;
    Decode<int32_t>(data, t.values);
  } else if (descr == "'<i8'") {
    t.dtype = DType::kI64;
    Decode<int64_t>(data, t.values);
  } else if (descr == "'|b1'") {
    t.dtype = DType::kBool;
    Decode<uint8_t>(data, t.values);
  } else {
    return InvalidArgument(loc) << "unsupported .npy dtype " << descr;
  }
  if (!t.IsWellFormed()) {
    return InvalidArgument(loc) << ".npy data holds " << t.values.size()
                                << " elements, the shape needs " << t.NumElements();
  }
  return t;
}

}  // namespace distir::testing
