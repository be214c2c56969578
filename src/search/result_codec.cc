#include "search/result_codec.h"

#include <cstdint>
#include <cstring>

namespace distir::search {
namespace {

constexpr size_t kFixedBytes = 8 + 1 + 1 + 8 + 8 + 8 + 8 + 8;
// After the reason: exposed communication, then the step figures.
constexpr size_t kTailBytes = 8 + 3 * 8 + io::kNumMemoryKindColumns * 8 + 1;

}  // namespace

void PackResult(const ConfigResult& r, std::vector<char>& out) {
  auto put = [&](const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    out.insert(out.end(), c, c + n);
  };
  const auto status = static_cast<int8_t>(r.status);
  const int8_t fits = r.fits ? 1 : 0;
  const auto len = static_cast<int64_t>(r.reason.size());
  put(&r.index, 8);
  put(&status, 1);
  put(&fits, 1);
  put(&r.iteration_time_s, 8);
  put(&r.throughput, 8);
  put(&r.peak_memory_bytes, 8);
  put(&r.num_ops, 8);
  put(&len, 8);
  put(r.reason.data(), r.reason.size());
  put(&r.exposed_communication_s, 8);
  put(&r.step.tokens_per_s, 8);
  put(&r.step.tflops_per_gpu, 8);
  put(&r.step.mfu, 8);
  for (const int64_t& bytes : r.step.memory_at_peak) put(&bytes, 8);
  const auto evaluation = static_cast<int8_t>(r.evaluation);
  put(&evaluation, 1);
}

std::optional<size_t> UnpackResult(const char* p, size_t size, ConfigResult& r) {
  if (size < kFixedBytes) return std::nullopt;
  size_t at = 0;
  auto get = [&](void* dst, size_t n) {
    std::memcpy(dst, p + at, n);
    at += n;
  };
  int8_t status = 0, fits = 0;
  int64_t len = 0;
  get(&r.index, 8);
  get(&status, 1);
  get(&fits, 1);
  get(&r.iteration_time_s, 8);
  get(&r.throughput, 8);
  get(&r.peak_memory_bytes, 8);
  get(&r.num_ops, 8);
  get(&len, 8);
  if (r.index < 0 || len < 0 || static_cast<uint64_t>(len) > size - at) return std::nullopt;
  if (size - at - static_cast<size_t>(len) < kTailBytes) return std::nullopt;
  if (status < 0 || status > static_cast<int8_t>(ConfigStatus::kSkipped)) return std::nullopt;
  r.status = static_cast<ConfigStatus>(status);
  r.fits = fits != 0;
  r.reason.assign(p + at, static_cast<size_t>(len));
  at += static_cast<size_t>(len);
  get(&r.exposed_communication_s, 8);
  get(&r.step.tokens_per_s, 8);
  get(&r.step.tflops_per_gpu, 8);
  get(&r.step.mfu, 8);
  for (int64_t& bytes : r.step.memory_at_peak) get(&bytes, 8);
  int8_t evaluation = 0;
  get(&evaluation, 1);
  if (evaluation < 0 || evaluation > static_cast<int8_t>(Evaluation::kRepresentativesExpanded))
    return std::nullopt;
  r.evaluation = static_cast<Evaluation>(evaluation);
  return at;
}

}  // namespace distir::search
