// ParallelFor: runs f(0) ... f(n - 1) at once, each on its own thread
// (f(0) on the caller's), and returns when all have. For a handful of
// calls that mostly wait — shrinking reruns against fresh SUTs — not for
// CPU-bound loops (no pool, no bound on n: callers keep n small).
#ifndef DUALSWARM_ENGINE_HARNESS_PARALLEL_FOR_H_
#define DUALSWARM_ENGINE_HARNESS_PARALLEL_FOR_H_

#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace dualswarm::harness {

inline void ParallelFor(size_t n, const std::function<void(size_t)>& f) {
  std::vector<std::thread> threads;
  for (size_t i = 1; i < n; ++i) threads.emplace_back(f, i);
  if (n > 0) f(0);
  for (auto& t : threads) t.join();
}

// f(0) ... f(n - 1), at most `width` at once (in waves of `width`).
inline void ParallelForInWaves(size_t n, size_t width, const std::function<void(size_t)>& f) {
  width = width < 1 ? 1 : width;
  for (size_t wave = 0; wave < n; wave += width)
    ParallelFor(n - wave < width ? n - wave : width, [&](size_t i) { f(wave + i); });
}

}  // namespace dualswarm::harness

#endif  // DUALSWARM_ENGINE_HARNESS_PARALLEL_FOR_H_
