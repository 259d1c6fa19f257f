#include "engine/check/memo.h"

#include <algorithm>
#include <utility>

namespace dualswarm::check {
namespace {

size_t Count(const SettledNames& s) { return s == nullptr ? 0 : s->size(); }

// a ⊆ b, both sorted multisets.
bool IsSubset(const SettledNames& a, const SettledNames& b) {
  if (Count(a) == 0 || a == b) return true;
  return Count(a) <= Count(b) && std::includes(b->begin(), b->end(), a->begin(), a->end());
}

}  // namespace

bool SameNames(const SettledNames& a, const SettledNames& b) {
  if (a == b) return true;
  if (Count(a) != Count(b)) return false;
  return Count(a) == 0 || *a == *b;
}

bool ExplanationMemo::Dominated(const SettledSets& sets, const SettledNames& settled) {
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
  sets.erase(std::remove_if(sets.begin(), sets.end(), [&](const SettledNames& s) { return IsSubset(key.settled, s); }),
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
    auto s =
        std::find_if(sets.begin(), sets.end(), [&](const SettledNames& x) { return SameNames(x, log_[k].settled); });
    if (s == sets.end()) continue;  // displaced by a later key, also forgotten
    sets.erase(s);
    --entries_;
    if (sets.empty()) by_base_.erase(it);
  }
  if (keep < log_.size()) log_.resize(keep);
  inserted_ = log_starts_at_ + log_.size();  // marks below it stay valid
}

}  // namespace dualswarm::check
