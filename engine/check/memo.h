// The search's memo: every (observation, explanation) the checker has taken
// up, so that each is explored at most once however many server orders lead
// to it (Lowe's just-in-time linearization with state caching; Porcupine's
// cache of (linearized set, model state)).
//
// A key has two parts. `base` hashes everything that decides an
// explanation's future except one thing: which *optional* channels it has
// exhausted. A channel is optional once it is closed with requests left
// unanswered — their responses can never be observed, so the server may
// process them at any later point or never. `settled` lists the optional
// channels whose requests the explanation has all consumed, each named by
// its channel id, or — where requests are interchangeable (search.cc) — by
// the hash of its one unanswered request, so that consuming either of two
// equal requests of crashed clients gives the same key.
//
// Dominance: two explanations with the same base, where A's settled set is
// a subset of B's, differ only in requests A may still take and B may not.
// A can always decline them (where the network model lets a server leave a
// request unprocessed without holding up others), so every way B can
// explain the rest of the trace is open to A too: if A was taken up, B
// needs no exploring. The
// memo answers "seen" for a key equal to or dominated by one inserted
// before. docs/checker.md proves that this never changes a verdict.
#ifndef DUALSWARM_ENGINE_CHECK_MEMO_H_
#define DUALSWARM_ENGINE_CHECK_MEMO_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"

namespace dualswarm::check {

// The names of a key's settled channels: sorted, with repeats (a
// multiset); null when there are none. Shared by the keys and tasks that
// have them, so copying a key copies no names.
using SettledNames = std::shared_ptr<const std::vector<uint64_t>>;
bool SameNames(const SettledNames& a, const SettledNames& b);

struct MemoKey {
  uint64_t base = 0;  // includes the observation index
  SettledNames settled;
};

class ExplanationMemo {
 public:
  // Past `max_entries` keys the memo forgets everything (counted in
  // resets()): forgetting only costs repeated work, never a verdict.
  explicit ExplanationMemo(size_t max_entries) : max_entries_(max_entries) {}

  // True when `key`, or a key that dominates it, was inserted before;
  // otherwise inserts `key` and returns false.
  bool SeenOrInsert(MemoKey key);
  // Whether SeenOrInsert(key) would answer true (nothing is inserted).
  bool Contains(const MemoKey& key) const;

  // Forgetting what was inserted after a point (the search's restarts):
  // Mark() names the point, ForgetSince(mark) removes every key inserted
  // after it (and whatever those keys had displaced: forgetting only costs
  // repeated work).
  uint64_t Mark() const { return inserted_; }
  void ForgetSince(uint64_t mark);

  size_t size() const { return entries_; }
  // Keys inserted beside another of the same base that neither dominates:
  // the growth the crashed-request probe (search.h) removes.
  uint64_t incomparable_inserts() const { return incomparable_inserts_; }
  uint64_t resets() const { return resets_; }

 private:
  using SettledSets = absl::InlinedVector<SettledNames, 1>;
  // Whether one of `sets` is a subset of `settled`.
  static bool Dominated(const SettledSets& sets, const SettledNames& settled);
  absl::flat_hash_map<uint64_t, SettledSets> by_base_;
  size_t entries_ = 0;
  size_t max_entries_;
  uint64_t resets_ = 0;
  uint64_t incomparable_inserts_ = 0;
  uint64_t inserted_ = 0;       // keys inserted and not forgotten (ForgetSince), resets included
  std::vector<MemoKey> log_;    // the keys inserted since the last reset, in order
  uint64_t log_starts_at_ = 0;  // inserted_ at the last reset
};

}  // namespace dualswarm::check

#endif  // DUALSWARM_ENGINE_CHECK_MEMO_H_
