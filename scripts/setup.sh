#!/usr/bin/env bash
# Installs every Debian package DistIR needs to build, test and run. Idempotent:
# when everything is already installed it changes nothing and touches no network.
# Usage: bash scripts/setup.sh
set -euo pipefail

PACKAGES=(
  build-essential cmake git ninja-build    # scripts/test.sh builds with Ninja
  libopenmpi-dev openmpi-bin                 # MPI: the search runs under mpirun
  libyaml-cpp-dev                            # experiments and hardware profiles
  libhdf5-dev hdf5-tools                     # results.h5 (serial HDF5: rank 0 writes)
  libonnx-dev libprotobuf-dev protobuf-compiler  # ONNX importer
  libboost-program-options-dev libboost-math-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  libfmt-dev nlohmann-json3-dev libeigen3-dev
  libopenblas-serial-dev                     # the CPU executor's BLAS, one thread per rank
  llvm-14-tools                              # lit and FileCheck for golden-text tests
  libmimalloc-dev                            # mimalloc: the search allocates millions of ops
  libabsl-dev                                # Abseil's flat_hash_map: the IR's name index
  python3-h5py python3-matplotlib python3-numpy  # scripts/ (plots, result analysis)
  python3-yaml                               # tests/fuzz (the fuzz campaign)
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
  --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
