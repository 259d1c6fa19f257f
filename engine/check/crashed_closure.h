// CrashedClosures: for the crashed-request probe (search.h), the spec
// states that crashed clients' requests lead to from one state.
//
// The probe may take the last request of a crashed client's connection any
// number of times, at any point; its responses go nowhere. So at one
// observation, every explanation with spec state S can reach, by such
// requests alone, the same set of states: the closure of S under those
// requests. The probe used to find it one request at a time from every
// explanation (a few dozen requests, each a step looked up, from every
// explanation of every frame). This computes it once per state, per
// observation's set of such requests, and the probe makes each state of it
// a child directly (docs/checker.md: the probe's closure).
//
// A closure applies only when every step in it is plain: no path
// constraint added (a constraint could bind a variable the explanation
// shares) and every response sent to a client that is gone. And it is
// bounded: a spec whose state grows with every such request (a counter)
// has no finite closure. Where it does not apply the probe takes the
// requests one at a time, as before.
#ifndef DUALSWARM_ENGINE_CHECK_CRASHED_CLOSURE_H_
#define DUALSWARM_ENGINE_CHECK_CRASHED_CLOSURE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "engine/check/step_cache.h"
#include "engine/ir/value.h"

namespace dualswarm::check {

// A crashed client's request the probe may take: the last on its channel.
struct CrashedRequest {
  int channel;
  int32_t index;
  int64_t label;
};

// A state of a closure and how it is reached from the closure's start.
struct ClosureState {
  std::shared_ptr<const std::vector<ir::Value>> globals;
  int64_t next_fresh = 0;
  std::vector<int64_t> labels;  // the requests taken, in order
};

class CrashedClosures {
 public:
  using Globals = std::shared_ptr<const std::vector<ir::Value>>;
  // The outcomes of taking `r` from (globals, next_fresh).
  using StepFn = std::function<absl::StatusOr<std::shared_ptr<const StepOutcomes>>(
      const Globals& globals, int64_t next_fresh, const CrashedRequest& r)>;
  // Whether a response sent to `conn` reaches no one.
  using GoneFn = std::function<bool(const ir::Value& conn)>;

  // At most this many states in a closure (its start not counted). Once a
  // closure has more, Of answers nullptr for good: the spec's state grows
  // with such requests, and computing each start's closure up to the bound
  // would cost more than taking the requests one at a time.
  static constexpr size_t kMaxStates = 64;

  // The states other than the start that `requests` lead to from
  // (globals, next_fresh); nullptr where the closure does not apply.
  // `version` names `requests` and the clients that are gone: equal
  // versions, equal sets (the search numbers them by observation).
  absl::StatusOr<const std::vector<ClosureState>*> Of(const Globals& globals, int64_t next_fresh,
                                                      const std::vector<CrashedRequest>& requests, uint64_t version,
                                                      const StepFn& step, const GoneFn& gone);
  // Forgets every closure (what versions name changed).
  void Clear() { closures_.clear(); }

 private:
  struct Key {
    GlobalsKey state;
    int64_t next_fresh;
    uint64_t version;
    friend bool operator==(const Key& a, const Key& b) {
      return a.next_fresh == b.next_fresh && a.version == b.version && a.state == b.state;
    }
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.state.hash, k.next_fresh, k.version);
    }
  };
  struct Entry {
    bool applies = false;
    std::vector<ClosureState> states;
  };
  absl::StatusOr<Entry> Compute(const Globals& globals, int64_t next_fresh, const std::vector<CrashedRequest>& requests,
                                const StepFn& step, const GoneFn& gone);

  // Past this many closures the cache starts again.
  static constexpr size_t kMaxClosures = 4096;
  absl::flat_hash_map<Key, Entry> closures_;
  bool unbounded_ = false;  // a closure had more than kMaxStates states
};

}  // namespace dualswarm::check

#endif  // DUALSWARM_ENGINE_CHECK_CRASHED_CLOSURE_H_
