#include "engine/check/memo.h"

#include <algorithm>
#include <utility>

namespace dualswarm::check {
namespace {

// a ⊆ b, both sorted multisets.
bool IsSubset(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  return a.size() <= b.size() && std::includes(b.begin(), b.end(), a.begin(), a.end());
}

}  // namespace

bool ExplanationMemo::SeenOrInsert(MemoKey key) {
  SettledSets& sets = by_base_[key.base];
  for (const auto& s : sets)
    if (IsSubset(s, key.settled)) return true;
  // The new set dominates every stored superset of it: drop those, so the
  // list stays an antichain and short.
  size_t before = sets.size();
  sets.erase(std::remove_if(sets.begin(), sets.end(),
                            [&](const std::vector<uint64_t>& s) { return IsSubset(key.settled, s); }),
             sets.end());
  entries_ -= before - sets.size();
  if (!sets.empty()) ++incomparable_inserts_;
  sets.push_back(std::move(key.settled));
  if (++entries_ > max_entries_) {
    by_base_.clear();
    entries_ = 0;
    ++resets_;
  }
  return false;
}

}  // namespace dualswarm::check
