#include "backend/gpu/cublas_library.h"

#include <dlfcn.h>

#include <string>

namespace distir::gpu {
namespace {

// Binds `fn` to the library's symbol `name`.
template <typename Fn>
Status Bind(void* library, const char* name, Fn& fn) {
  void* symbol = dlsym(library, name);
  if (symbol == nullptr)
    return FailedPrecondition() << "cuBLAS has no function " << name << ": " << dlerror();
  fn = reinterpret_cast<Fn>(symbol);
  return Status::Ok();
}

StatusOr<CublasLibrary> Load() {
  const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  void* library = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string error = library == nullptr ? dlerror() : "";
#ifdef DISTIR_CUBLAS_LIBRARY
  if (library == nullptr) library = dlopen(DISTIR_CUBLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
#endif
  if (library == nullptr) return FailedPrecondition() << "cannot load " << soname << ": " << error;
  // Kept loaded: handles made from it live until the process ends.
  CublasLibrary lib;
  DISTIR_RETURN_IF_ERROR(Bind(library, "cublasCreate_v2", lib.create));
  DISTIR_RETURN_IF_ERROR(Bind(library, "cublasDestroy_v2", lib.destroy));
  DISTIR_RETURN_IF_ERROR(Bind(library, "cublasSetStream_v2", lib.set_stream));
  DISTIR_RETURN_IF_ERROR(Bind(library, "cublasGemmEx", lib.gemm_ex));
  DISTIR_RETURN_IF_ERROR(Bind(library, "cublasGemmStridedBatchedEx", lib.gemm_strided_batched_ex));
  return lib;
}

}  // namespace

StatusOr<const CublasLibrary*> LoadCublas() {
  static const StatusOr<CublasLibrary> loaded = Load();
  if (!loaded.ok()) return loaded.status();
  return &loaded.value();
}

}  // namespace distir::gpu
