// Device meshes.
//
// A mesh is a named N-D array of devices with named axes, declared at module
// level (`mesh @m = <[dp = 2, tp = 4]>`). Shardings (sharding.h) split tensor
// dimensions over its axes. The devices default to d0 .. d(N-1) in row-major
// order (the last axis varies fastest); an explicit list
// (`mesh @stage1 = <[tp = 2], devices = [d4, d5]>`) makes a mesh a sub-mesh of
// the machine, which is how pipeline stages live on disjoint devices. Meshes are
// small immutable values (XLA's HloSharding, Shardy's MeshAttr).

#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/device.h"
#include "support/status.h"

namespace distir {

struct MeshAxis {
  std::string name;
  int64_t size = 1;
  bool operator==(const MeshAxis&) const = default;
};

class Mesh {
 public:
  Mesh() = default;
  /// `devices` empty means d0 .. d(N-1). Not validated: see Validate().
  Mesh(std::string name, std::vector<MeshAxis> axes, std::vector<DeviceId> devices = {},
       SourceLoc loc = {});

  /// Name without the '@' sigil.
  const std::string& name() const { return name_; }
  const std::vector<MeshAxis>& axes() const { return axes_; }
  int num_axes() const { return static_cast<int>(axes_.size()); }
  /// Product of the axis sizes (1 for a mesh without axes).
  int64_t num_devices() const { return num_devices_; }
  /// The devices in row-major order (explicit or the default d0 ..).
  const std::vector<DeviceId>& devices() const { return devices_; }
  /// True when the devices were written out (printed only then).
  bool explicit_devices() const { return explicit_devices_; }
  const SourceLoc& loc() const { return loc_; }

  /// Index of the axis called `name`, or -1.
  int AxisIndex(const std::string& name) const;
  /// Size of axis `name`. REQUIRES: AxisIndex(name) >= 0.
  int64_t AxisSize(const std::string& name) const;
  /// The coordinates of the device at row-major position `linear`.
  std::vector<int64_t> Coords(int64_t linear) const;
  /// Row-major position of `coords`. REQUIRES: one in-range coordinate per axis.
  int64_t Linear(const std::vector<int64_t>& coords) const;
  /// The device at `coords`.
  DeviceId DeviceAt(const std::vector<int64_t>& coords) const { return devices_[Linear(coords)]; }

  /// InvalidArgument naming the mesh: an axis name used twice, an axis size
  /// < 1, more than 2^20 devices, an explicit device list whose length differs
  /// from the product of the axis sizes, or a device listed twice.
  Status Validate() const;

  /// `mesh @m = <[a = 2, b = 4]>` or `..., devices = [d4, d5]>`.
  std::string ToString() const;

  bool operator==(const Mesh& other) const {
    return name_ == other.name_ && axes_ == other.axes_ && devices_ == other.devices_;
  }

 private:
  std::string name_;
  std::vector<MeshAxis> axes_;
  /// num_devices(), computed once: the partitioner asks per op and device.
  int64_t num_devices_ = 1;
  std::vector<DeviceId> devices_;
  bool explicit_devices_ = false;
  SourceLoc loc_;
};

}  // namespace distir
