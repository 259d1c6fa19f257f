// ds-lib-heap: a persistent binary min-heap of ints (each operation returns
// a new heap), the reference library for specs/heap.dspec, served over the
// library protocol by the C++ shim (shims/cpp/dualswarm_shim.h).
//
//   ds-lib-heap --port N [--arg mutant=M]
//
// Mutants (MUTANTS.md):
//   1  sifting up stops at position 1 (`while (i > 1)`), so a new minimum
//      that reaches position 1 (the root's left child) never becomes the root
//   2  sifting down follows the larger child
//   3  deleting the last element leaves the size at 1
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "shims/cpp/dualswarm_shim.h"

namespace {

int mutant = 0;

class Heap {
 public:
  Heap Insert(int64_t x) const {
    Heap h = *this;
    h.a_.push_back(x);
    size_t i = h.a_.size() - 1;
    while (i > (mutant == 1 ? 1u : 0u)) {
      const size_t parent = (i - 1) / 2;
      if (h.a_[parent] <= h.a_[i]) break;
      std::swap(h.a_[parent], h.a_[i]);
      i = parent;
    }
    return h;
  }
  int64_t Min() const {
    if (a_.empty()) throw std::out_of_range("find_min of an empty heap");
    return a_[0];
  }
  Heap DeleteMin() const {
    if (a_.empty()) throw std::out_of_range("delete_min of an empty heap");
    Heap h = *this;
    h.a_[0] = h.a_.back();
    h.a_.pop_back();
    if (mutant == 3 && h.a_.empty()) h.ghost_ = true;
    size_t i = 0;
    while (true) {
      const size_t l = 2 * i + 1, r = l + 1;
      size_t pick = i;
      if (mutant == 2) {
        if (l < h.a_.size() && r < h.a_.size())
          pick = h.a_[l] >= h.a_[r] ? l : r;
        else if (l < h.a_.size())
          pick = l;
        if (pick != i && h.a_[pick] >= h.a_[i]) pick = i;
      } else {
        if (l < h.a_.size() && h.a_[l] < h.a_[pick]) pick = l;
        if (r < h.a_.size() && h.a_[r] < h.a_[pick]) pick = r;
      }
      if (pick == i) break;
      std::swap(h.a_[i], h.a_[pick]);
      i = pick;
    }
    return h;
  }
  int64_t Size() const { return static_cast<int64_t>(a_.size()) + (ghost_ && a_.empty() ? 1 : 0); }

 private:
  std::vector<int64_t> a_;
  bool ghost_ = false;  // mutant 3
};

}  // namespace

int main(int argc, char** argv) {
  const int port = dualswarm_shim::ParseArgsOrExit(argc, argv);
  mutant = std::atoi(dualswarm_shim::Args()["mutant"].c_str());
  dualswarm_shim::Library lib;
  lib.Type<Heap>("heap");
  lib.Op("empty", [] { return Heap(); });
  lib.Op("insert", [](const Heap& h, int64_t x) { return h.Insert(x); });
  lib.Op("find_min", [](const Heap& h) { return h.Min(); });
  lib.Op("delete_min", [](const Heap& h) { return h.DeleteMin(); });
  lib.Op("size", [](const Heap& h) { return h.Size(); });
  lib.Op("drain", [](const Heap& h) {
    std::vector<int64_t> out;
    for (Heap rest = h; rest.Size() > 0 && out.size() < 100000; rest = rest.DeleteMin()) out.push_back(rest.Min());
    return out;
  });
  return dualswarm_shim::Serve(port, lib);
}
