// StackBudget: how much native stack a recursive evaluation may still use
// on the current thread. The interpreter's frames differ by build (a
// sanitizer build's are several times larger) and threads differ in stack
// size (main thread, gRPC threads, test threads), so the interpreter
// measures the stack instead of counting depth: at most kMaxEvalStackBytes,
// and never closer than kStackReserve to the end of this thread's stack.
#ifndef DUALSWARM_ENGINE_LANG_STACK_BUDGET_H_
#define DUALSWARM_ENGINE_LANG_STACK_BUDGET_H_

#include <pthread.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace dualswarm::lang {

// Left unused below an evaluation, for what runs on top of it (the SMT
// solver, printing, destructors of deep values).
inline constexpr size_t kStackReserve = 512 << 10;

// The lowest address of this thread's stack (0 when unknown), looked up
// once per thread.
inline uintptr_t ThreadStackLow() {
  thread_local uintptr_t low = [] {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return uintptr_t{0};
    void* addr = nullptr;
    size_t size = 0;
    uintptr_t result = pthread_attr_getstack(&attr, &addr, &size) == 0 ? reinterpret_cast<uintptr_t>(addr) : 0;
    pthread_attr_destroy(&attr);
    return result;
  }();
  return low;
}

// The stack bytes an evaluation starting at frame address `base` may use:
// at most `max_bytes`, fewer on a thread whose stack ends sooner.
inline size_t StackBudgetFrom(uintptr_t base, size_t max_bytes) {
  uintptr_t low = ThreadStackLow();
  if (low == 0 || base <= low + kStackReserve) return low == 0 ? max_bytes : 0;
  return std::min<size_t>(max_bytes, base - low - kStackReserve);
}

}  // namespace dualswarm::lang

#endif  // DUALSWARM_ENGINE_LANG_STACK_BUDGET_H_
