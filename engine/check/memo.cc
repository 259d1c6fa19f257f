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

bool ExplanationMemo::Dominated(const SettledSets& sets, const std::vector<uint64_t>& settled) {
  for (const auto& s : sets)
    if (IsSubset(s, settled)) return true;
  return false;
}

bool ExplanationMemo::SeenOrInsert(MemoKey key) {
  SettledSets& sets = by_base_[key.base];
  if (Dominated(sets, key.settled)) return true;
  // The new set dominates every stored superset of it: drop those, so the
  // list stays an antichain and short.
  size_t before = sets.size();
  sets.erase(std::remove_if(sets.begin(), sets.end(),
                            [&](const std::vector<uint64_t>& s) { return IsSubset(key.settled, s); }),
             sets.end());
  entries_ -= before - sets.size();
  if (!sets.empty()) ++incomparable_inserts_;
  sets.push_back(key.settled);
  log_.push_back(std::move(key));
  ++inserted_;
  if (++entries_ > max_entries_) {
    by_base_.clear();
    log_.clear();
    log_starts_at_ = inserted_;
    entries_ = 0;
    ++resets_;
  }
  return false;
}

bool ExplanationMemo::Contains(const MemoKey& key) const {
  auto it = by_base_.find(key.base);
  return it != by_base_.end() && Dominated(it->second, key.settled);
}

void ExplanationMemo::ForgetSince(uint64_t mark) {
  const size_t keep = mark <= log_starts_at_ ? 0 : static_cast<size_t>(mark - log_starts_at_);
  for (size_t k = keep; k < log_.size(); ++k) {
    auto it = by_base_.find(log_[k].base);
    if (it == by_base_.end()) continue;
    SettledSets& sets = it->second;
    auto s = std::find(sets.begin(), sets.end(), log_[k].settled);
    if (s == sets.end()) continue;  // displaced by a later key, also forgotten
    sets.erase(s);
    --entries_;
    if (sets.empty()) by_base_.erase(it);
  }
  if (keep < log_.size()) log_.resize(keep);
  inserted_ = log_starts_at_ + log_.size();  // marks below it stay valid
}

}  // namespace dualswarm::check
