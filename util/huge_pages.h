// UseHugePagesForTheHeap: asks the kernel to back the heap with transparent
// huge pages (2 MiB) where it offers them only on request
// (/sys/kernel/mm/transparent_hugepage/enabled = madvise, Debian's
// default). The checker's search grows its heap by tens of MiB on long
// concurrent histories (work lists, states, memo); with 4 KiB pages each
// first touch of a page is a page fault, and on a virtual machine those
// cost ~16 % of the checker's time on the 8-connection queue history of
// bench/ (bench/RESULTS.md, "Huge pages for the heap"). The programs that
// run the checker call it first thing in main(). It does nothing unless
// the program is built with DS_TCMALLOC (CMakeLists.txt: DS_MALLOC), whose system
// allocator it wraps, and nothing when DUALSWARM_HUGE_PAGES=0 (e.g. where
// memory is fragmented and the kernel's compaction for huge pages stalls).
#ifndef DUALSWARM_UTIL_HUGE_PAGES_H_
#define DUALSWARM_UTIL_HUGE_PAGES_H_

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#ifdef DS_TCMALLOC
#include <gperftools/malloc_extension.h>
#include <sys/mman.h>
#endif

namespace dualswarm {

#ifdef DS_TCMALLOC
namespace huge_pages_internal {

constexpr size_t kHugePage = size_t{2} << 20;

// tcmalloc's system allocator, asked for whole, aligned huge pages which are
// then marked MADV_HUGEPAGE (a failed madvise only leaves small pages).
class HugePageSysAllocator : public SysAllocator {
 public:
  explicit HugePageSysAllocator(SysAllocator* next) : next_(next) {}
  void* Alloc(size_t size, size_t* actual_size, size_t alignment) override {
    if (size > SIZE_MAX - (kHugePage - 1)) return nullptr;  // rounding up would wrap
    size = (size + kHugePage - 1) / kHugePage * kHugePage;
    if (alignment < kHugePage) alignment = kHugePage;
    void* p = next_->Alloc(size, actual_size, alignment);
    if (p != nullptr) madvise(p, actual_size != nullptr ? *actual_size : size, MADV_HUGEPAGE);
    return p;
  }

 private:
  SysAllocator* next_;  // tcmalloc's own
};

}  // namespace huge_pages_internal
#endif

// Call once, before threads start. Idempotent.
inline void UseHugePagesForTheHeap() {
#ifdef DS_TCMALLOC
  using huge_pages_internal::HugePageSysAllocator;
  if (const char* v = std::getenv("DUALSWARM_HUGE_PAGES"); v != nullptr && std::strcmp(v, "0") == 0) return;
  static bool installed = false;
  if (installed) return;
  installed = true;
  MallocExtension* ext = MallocExtension::instance();
  // Lives for the whole process (tcmalloc keeps using it): never destroyed.
  alignas(HugePageSysAllocator) static unsigned char storage[sizeof(HugePageSysAllocator)];
  ext->SetSystemAllocator(new (storage) HugePageSysAllocator(ext->GetSystemAllocator()));
#endif
}

}  // namespace dualswarm

#endif  // DUALSWARM_UTIL_HUGE_PAGES_H_
