// ds-lib-union-find: union-find over the elements 0..15 with path
// compression and union by rank (union returns a new structure; find
// compresses paths in place, which a correct find may), the reference
// library for specs/union_find.dspec, served by the C++ shim
// (shims/cpp/dualswarm_shim.h).
//
//   ds-lib-union-find --port N [--arg mutant=M]
//
// Mutants (MUTANTS.md):
//   1  `same` compresses the second element's path onto the first one's
//      root, joining their classes
//   2  union of two elements already together still counts a class less
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "shims/cpp/dualswarm_shim.h"

namespace {

int mutant = 0;
constexpr int64_t kElements = 16;

class UnionFind {
 public:
  UnionFind() : parent_(kElements), rank_(kElements, 0), classes_(kElements) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  UnionFind Union(int64_t a, int64_t b) const {
    UnionFind u = *this;
    int64_t ra = u.Find(Check(a)), rb = u.Find(Check(b));
    if (ra == rb) {
      if (mutant == 2) --u.classes_;
      return u;
    }
    if (u.rank_[ra] < u.rank_[rb]) std::swap(ra, rb);
    u.parent_[rb] = ra;
    if (u.rank_[ra] == u.rank_[rb]) ++u.rank_[ra];
    --u.classes_;
    return u;
  }
  bool Same(int64_t a, int64_t b) const {
    const int64_t ra = Find(Check(a));
    if (mutant == 1) Compress(Check(b), ra);
    return ra == Find(Check(b));
  }
  int64_t Classes() const { return classes_; }

 private:
  static int64_t Check(int64_t x) {
    if (x < 0 || x >= kElements) throw std::out_of_range("no element " + std::to_string(x));
    return x;
  }
  int64_t Find(int64_t x) const {
    int64_t root = x;
    while (parent_[root] != root) root = parent_[root];
    Compress(x, root);
    return root;
  }
  void Compress(int64_t x, int64_t root) const {
    while (parent_[x] != x) {
      const int64_t next = parent_[x];
      parent_[x] = root;
      x = next;
    }
    if (x != root) parent_[x] = root;
  }
  mutable std::vector<int64_t> parent_;
  std::vector<int64_t> rank_;
  int64_t classes_;
};

}  // namespace

int main(int argc, char** argv) {
  const int port = dualswarm_shim::ParseArgsOrExit(argc, argv);
  mutant = std::atoi(dualswarm_shim::Args()["mutant"].c_str());
  dualswarm_shim::Library lib;
  lib.Type<UnionFind>("uf");
  lib.Op("make", [] { return UnionFind(); });
  lib.Op("union", [](const UnionFind& u, int64_t a, int64_t b) { return u.Union(a, b); });
  lib.Op("same", [](const UnionFind& u, int64_t a, int64_t b) { return u.Same(a, b); });
  lib.Op("classes", [](const UnionFind& u) { return u.Classes(); });
  return dualswarm_shim::Serve(port, lib);
}
