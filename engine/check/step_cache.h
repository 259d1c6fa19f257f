// StepCache: the outcomes of server steps the search has already run, so
// that a step taken again from an equal state is looked up instead of
// interpreted again.
//
// A server step runs the handler on one request from one spec state. The
// search takes the same step many times: at every observation an
// explanation lives through it may consume the same request again (a
// request of a crashed client can be consumed at any later point), and
// different server orders reach equal states. When the explanation has no
// path constraints, or has some but concrete globals (the step then sees
// none of their variables), the step's outcome is a function of the
// globals, the request (named by its channel and position there, which
// also fixes the connection the handler sees) and the number of the next
// `fresh` variable: the path oracle's solver queries then come out as with
// the step's own constraints alone. Only such steps are cached
// (Search::StepIgnoresConstraints); entries are compared by value, never
// by hash alone.
//
// Where states never repeat (a queue whose items are all different) the
// cache only costs: hashing, storing, missing. It watches its own hit rate
// and, after a window of lookups with fewer than 1 hit in 8, sits out the
// next steps before trying again.
#ifndef DUALSWARM_ENGINE_CHECK_STEP_CACHE_H_
#define DUALSWARM_ENGINE_CHECK_STEP_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "engine/ir/value.h"
#include "engine/lang/interp.h"
#include "engine/sym/term.h"

namespace dualswarm::check {

// A spec state as a hash-map key: hashed once, compared by value (by
// pointer first: equal states are often shared). The step cache and the
// probe's closures (crashed_closure.h) key on it.
struct GlobalsKey {
  std::shared_ptr<const std::vector<ir::Value>> globals;
  uint64_t hash = 0;

  static GlobalsKey Of(std::shared_ptr<const std::vector<ir::Value>> globals);
  friend bool operator==(const GlobalsKey& a, const GlobalsKey& b) {
    return a.hash == b.hash && (a.globals == b.globals || *a.globals == *b.globals);
  }
};

// One handler path of a step that survived (not killed by an `assume`).
struct StepOutcome {
  std::shared_ptr<const std::vector<ir::Value>> globals;
  std::vector<lang::SendRecord> sends;
  std::vector<sym::TermRef> added;  // the path's constraints
  int64_t next_fresh = 0;
  // The path left the globals as they were and added no constraint.
  bool keeps_state = false;
  // The branches the path took, sorted and distinct (CheckerOptions::
  // record_coverage); null when not recorded or none.
  std::shared_ptr<const std::vector<int32_t>> branches;
};
using StepOutcomes = std::vector<StepOutcome>;

class StepCache {
 public:
  // Past `max_entries` steps, or once the states it keeps alive add up to
  // `max_nodes` value nodes (Value::TreeSize, shared parts counted each
  // time), the cache forgets everything (counted in resets()): forgetting
  // only costs running steps again.
  StepCache(size_t max_entries, uint64_t max_nodes) : max_entries_(max_entries), max_nodes_(max_nodes) {}
  ~StepCache();
  StepCache(const StepCache&) = delete;
  StepCache& operator=(const StepCache&) = delete;

  // Whether the next step should be looked up (and stored); false while
  // the cache sits out after a window of few hits.
  bool Active();

  // The outcomes of the step that consumes request `request` of `channel`
  // from `globals` with `next_fresh`, or nullptr when it was not cached.
  std::shared_ptr<const StepOutcomes> Find(const std::shared_ptr<const std::vector<ir::Value>>& globals, int channel,
                                           int32_t request, int64_t next_fresh);
  void Insert(std::shared_ptr<const std::vector<ir::Value>> globals, int channel, int32_t request, int64_t next_fresh,
              std::shared_ptr<const StepOutcomes> outcomes);

  // `globals`, or an equal state a step kept here led to: the states
  // explanations carry are then mostly one object per value, and looking a
  // step up compares pointers instead of values. For the outcomes of steps
  // about to be inserted; forgotten with the steps.
  std::shared_ptr<const std::vector<ir::Value>> Intern(std::shared_ptr<const std::vector<ir::Value>> globals);

  size_t size() const { return steps_.size(); }
  uint64_t resets() const { return resets_; }

 private:
  struct Key {
    GlobalsKey state;
    int channel;
    int32_t request;
    int64_t next_fresh;

    friend bool operator==(const Key& a, const Key& b) {
      return a.channel == b.channel && a.request == b.request && a.next_fresh == b.next_fresh && a.state == b.state;
    }
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.state.hash, k.channel, k.request, k.next_fresh);
    }
  };
  static Key MakeKey(std::shared_ptr<const std::vector<ir::Value>> globals, int channel, int32_t request,
                     int64_t next_fresh);
  void Forget();

  absl::flat_hash_map<Key, std::shared_ptr<const StepOutcomes>> steps_;
  struct GlobalsKeyHash {
    size_t operator()(const GlobalsKey& k) const { return k.hash; }
  };
  absl::flat_hash_set<GlobalsKey, GlobalsKeyHash> interned_;  // Intern's states
  size_t max_entries_;
  uint64_t max_nodes_;
  uint64_t nodes_ = 0;  // value nodes of the outcomes held
  uint64_t resets_ = 0;
  // The hit rate of the current window of lookups.
  static constexpr uint32_t kWindow = 4096;
  static constexpr uint32_t kSitOutSteps = 65536;
  uint32_t lookups_ = 0, hits_ = 0;
  uint32_t sit_out_ = 0;  // steps left before looking up again
  // The last batch of forgotten outcomes being freed (Forget), and how
  // large a cache is freed that way.
  std::future<void> freeing_;
  static constexpr uint64_t kFreeAsideFromNodes = 500'000;
};

}  // namespace dualswarm::check

#endif  // DUALSWARM_ENGINE_CHECK_STEP_CACHE_H_
