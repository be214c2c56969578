#include "ir/mesh.h"

#include <set>
#include <sstream>

#include "support/check.h"

namespace distir {
namespace {

// A mesh larger than this is a typo, not a machine: it also keeps every
// product of axis sizes far from overflow.
constexpr int64_t kMaxMeshDevices = int64_t{1} << 20;

// The product of the axis sizes: 0 with an axis below 1; once above the limit,
// some value above it (it stops multiplying, so it cannot overflow).
int64_t DevicesOf(const std::vector<MeshAxis>& axes) {
  int64_t n = 1;
  for (const MeshAxis& a : axes) {
    if (a.size < 1) return 0;
    if (n > kMaxMeshDevices) return n;
    n *= a.size;
  }
  return n;
}

}  // namespace

Mesh::Mesh(std::string name, std::vector<MeshAxis> axes, std::vector<DeviceId> devices,
           SourceLoc loc)
    : name_(std::move(name)),
      axes_(std::move(axes)),
      devices_(std::move(devices)),
      explicit_devices_(!devices_.empty()),
      loc_(std::move(loc)) {
  num_devices_ = DevicesOf(axes_);
  if (explicit_devices_) return;
  int64_t n = num_devices();
  if (n < 1 || n > kMaxMeshDevices) return;  // Validate() reports it
  devices_.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) devices_.emplace_back(static_cast<int32_t>(i));
}

int Mesh::AxisIndex(const std::string& name) const {
  for (int i = 0; i < num_axes(); ++i) {
    if (axes_[i].name == name) return i;
  }
  return -1;
}

int64_t Mesh::AxisSize(const std::string& name) const {
  int i = AxisIndex(name);
  DISTIR_CHECK(i >= 0) << "mesh @" << name_ << " has no axis " << name;
  return axes_[i].size;
}

std::vector<int64_t> Mesh::Coords(int64_t linear) const {
  std::vector<int64_t> coords(axes_.size());
  for (int i = num_axes() - 1; i >= 0; --i) {
    coords[i] = linear % axes_[i].size;
    linear /= axes_[i].size;
  }
  return coords;
}

int64_t Mesh::Linear(const std::vector<int64_t>& coords) const {
  DISTIR_CHECK(coords.size() == axes_.size()) << "one coordinate per mesh axis";
  int64_t linear = 0;
  for (int i = 0; i < num_axes(); ++i) linear = linear * axes_[i].size + coords[i];
  return linear;
}

Status Mesh::Validate() const {
  std::set<std::string> seen;
  for (const MeshAxis& a : axes_) {
    if (!seen.insert(a.name).second)
      return InvalidArgument(loc_) << "mesh @" << name_ << " declares axis '" << a.name
                                   << "' twice";
    if (a.size < 1)
      return InvalidArgument(loc_) << "mesh @" << name_ << " axis '" << a.name
                                   << "' has size " << a.size << ", expected at least 1";
  }
  int64_t n = num_devices();
  if (n > kMaxMeshDevices)
    return InvalidArgument(loc_) << "mesh @" << name_ << " has more than " << kMaxMeshDevices
                                 << " devices";
  if (explicit_devices_ && static_cast<int64_t>(devices_.size()) != n)
    return InvalidArgument(loc_) << "mesh @" << name_ << " lists " << devices_.size()
                                 << " devices, but its axes multiply to " << n;
  std::set<DeviceId> devs(devices_.begin(), devices_.end());
  if (devs.size() != devices_.size())
    return InvalidArgument(loc_) << "mesh @" << name_ << " lists a device twice";
  return Status::Ok();
}

std::string Mesh::ToString() const {
  std::ostringstream os;
  os << "mesh @" << name_ << " = <[";
  for (size_t i = 0; i < axes_.size(); ++i) {
    if (i > 0) os << ", ";
    os << axes_[i].name << " = " << axes_[i].size;
  }
  os << "]";
  if (explicit_devices_) {
    os << ", devices = [";
    for (size_t i = 0; i < devices_.size(); ++i) os << (i > 0 ? ", " : "") << devices_[i];
    os << "]";
  }
  os << ">";
  return os.str();
}

}  // namespace distir
