#include "support/parallel_for.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "support/check.h"

namespace distir {

void ParallelFor(int64_t n, int64_t min_chunk, const std::function<void(int64_t, int64_t)>& body) {
  DISTIR_CHECK(n >= 0 && min_chunk >= 1) << "ParallelFor(" << n << ", " << min_chunk << ")";
  const int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
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
