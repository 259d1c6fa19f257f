#include "engine/check/explanation.h"

#include <algorithm>

#include "absl/hash/hash.h"

namespace dualswarm::check {

size_t OwedQueues::Count(size_t ch) const {
  size_t n = 0;
  for (const auto& e : entries_) n += e.ch == ch;
  return n;
}

const Owed& OwedQueues::Front(size_t ch) const {
  return std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.ch == ch; })->owed;
}

const Owed& OwedQueues::Back(size_t ch) const {
  return std::find_if(entries_.rbegin(), entries_.rend(), [&](const Entry& e) { return e.ch == ch; })->owed;
}

Owed OwedQueues::PopFront(size_t ch) {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.ch == ch; });
  Owed o = std::move(it->owed);
  entries_.erase(it);
  return o;
}

void OwedQueues::Clear(size_t ch) {
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.ch == ch; }),
                 entries_.end());
}

void Explanation::EnsureChannels(size_t n) {
  if (consumed.size() < n) consumed.resize(n, 0);
}

uint64_t StateHashOf(const std::vector<ir::Value>& globals, const std::vector<sym::TermRef>& pc) {
  uint64_t h = 0x51ed270b27e5f6f5ull;
  for (const auto& g : globals) h = absl::HashOf(h, g.Hash());
  std::vector<uint64_t> pch;
  pch.reserve(pc.size());
  for (const auto& c : pc) pch.push_back(c->hash);
  std::sort(pch.begin(), pch.end());
  return absl::HashOf(h, pch);
}

std::vector<int64_t> Explanation::ServerOrder(size_t limit) const {
  std::vector<int64_t> out;
  for (const History* p = history.get(); p && out.size() < limit; p = p->prev.get()) out.push_back(p->label);
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace dualswarm::check
