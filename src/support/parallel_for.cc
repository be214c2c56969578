#include "support/parallel_for.h"

#include <sched.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "support/check.h"

namespace distir {

int64_t UsableCores() {
  // mpirun binds each rank to one core by default (OpenMPI: --bind-to core for
  // up to two ranks), and threads beyond the cores a process may run on only
  // take turns on them: count the affinity mask, not the machine.
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max<int64_t>(1, std::thread::hardware_concurrency());
}

void ParallelFor(int64_t n, int64_t min_chunk, const std::function<void(int64_t, int64_t)>& body) {
  DISTIR_CHECK(n >= 0 && min_chunk >= 1) << "ParallelFor(" << n << ", " << min_chunk << ")";
  const int64_t cores = UsableCores();
  const int64_t chunks = std::min(cores, std::max<int64_t>(1, n / min_chunk));
  if (chunks <= 1) {
    if (n > 0) body(0, n);
    return;
  }
  const int64_t size = (n + chunks - 1) / chunks;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(chunks - 1));
  for (int64_t begin = size; begin < n; begin += size) {
    threads.emplace_back(body, begin, std::min(n, begin + size));
  }
  body(0, std::min(n, size));
  for (std::thread& t : threads) t.join();
}

}  // namespace distir
