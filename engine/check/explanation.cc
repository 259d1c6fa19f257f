#include "engine/check/explanation.h"

#include <algorithm>

#include "absl/hash/hash.h"

namespace dualswarm::check {

void Explanation::EnsureChannels(size_t n) {
  if (consumed.size() < n) consumed.resize(n, 0);
  if (owed.size() < n) owed.resize(n);
}

uint64_t Explanation::StateHash() const {
  uint64_t h = 0x51ed270b27e5f6f5ull;
  for (const auto& g : *globals) h = absl::HashOf(h, g.Hash());
  std::vector<uint64_t> pch;
  pch.reserve(pc.size());
  for (const auto& c : pc) pch.push_back(c->hash);
  std::sort(pch.begin(), pch.end());
  return absl::HashOf(h, pch);
}

std::vector<int64_t> Explanation::ServerOrder(size_t limit) const {
  std::vector<int64_t> out;
  for (const History* p = history.get(); p && out.size() < limit; p = p->prev.get())
    out.push_back(p->label);
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace dualswarm::check
