#include "engine/check/crashed_closure.h"

#include <algorithm>
#include <utility>

namespace dualswarm::check {

absl::StatusOr<const std::vector<ClosureState>*> CrashedClosures::Of(const Globals& globals, int64_t next_fresh,
                                                                     const std::vector<CrashedRequest>& requests,
                                                                     uint64_t version, const StepFn& step,
                                                                     const GoneFn& gone) {
  if (unbounded_) return nullptr;
  Key key{GlobalsKey::Of(globals), next_fresh, version};
  auto it = closures_.find(key);
  if (it == closures_.end()) {
    absl::StatusOr<Entry> entry = Compute(globals, next_fresh, requests, step, gone);
    if (!entry.ok()) return entry.status();
    if (closures_.size() >= kMaxClosures) closures_.clear();
    it = closures_.emplace(std::move(key), *std::move(entry)).first;
  }
  return it->second.applies ? &it->second.states : nullptr;
}

// Breadth first from the start, each state once (compared by value), so
// each state is reached by a shortest sequence of requests.
absl::StatusOr<CrashedClosures::Entry> CrashedClosures::Compute(const Globals& globals, int64_t next_fresh,
                                                                const std::vector<CrashedRequest>& requests,
                                                                const StepFn& step, const GoneFn& gone) {
  Entry out;
  auto known = [&](const std::vector<ir::Value>& g) {
    if (g == *globals) return true;
    return std::any_of(out.states.begin(), out.states.end(), [&](const ClosureState& s) { return *s.globals == g; });
  };
  const ClosureState start{globals, next_fresh, {}};
  for (size_t next = 0;; ++next) {
    const ClosureState from = next == 0 ? start : out.states[next - 1];  // a copy: states grows below
    for (const CrashedRequest& r : requests) {
      absl::StatusOr<std::shared_ptr<const StepOutcomes>> outcomes = step(from.globals, from.next_fresh, r);
      if (!outcomes.ok()) return outcomes.status();
      for (const StepOutcome& o : **outcomes) {
        if (!o.added.empty()) return Entry{};
        for (const auto& send : o.sends)
          if (!gone(send.conn)) return Entry{};
        if (o.keeps_state || known(*o.globals)) continue;
        if (out.states.size() == kMaxStates) {
          unbounded_ = true;
          return Entry{};
        }
        std::vector<int64_t> labels = from.labels;
        labels.push_back(r.label);
        out.states.push_back(ClosureState{o.globals, o.next_fresh, std::move(labels)});
      }
    }
    if (next == out.states.size()) break;
  }
  out.applies = true;
  return out;
}

}  // namespace dualswarm::check
