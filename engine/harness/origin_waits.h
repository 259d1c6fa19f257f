// OriginWaits: when the tester plays an intermediary's origin, the times
// the SUT may have been waiting on the tester itself — from the poll
// before an origin request was read (it may have arrived just after it,
// and sat unread while the tester was checking) until the tester owed no
// origin answer any more. A client's response may wait on an origin
// answer, so liveness does not count this time against the SUT: the
// tester's own slowness, or its deliberate holds, are never the SUT's
// fault (docs/checker.md, "Liveness is judged on the wire").
#ifndef DUALSWARM_ENGINE_HARNESS_ORIGIN_WAITS_H_
#define DUALSWARM_ENGINE_HARNESS_ORIGIN_WAITS_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace dualswarm::harness {

class OriginWaits {
 public:
  // Called once a loop turn has read and answered what it could, at
  // `now_ns`; the turn's poll began at `poll_ns`. `owing`: an origin answer
  // is still owed, or an origin request was read this turn (even one
  // answered already: the SUT waited on it since it arrived). Times are
  // nondecreasing from call to call.
  void Update(bool owing, int64_t poll_ns, int64_t now_ns);
  // How long within [from_ns, to_ns] the tester owed origin answers.
  int64_t Within(int64_t from_ns, int64_t to_ns) const;

 private:
  // Closed periods, in time order and disjoint; prefix_[i] is the length
  // of periods 0..i-1 (prefix_.size() == starts_.size() + 1).
  std::vector<int64_t> starts_, ends_, prefix_{0};
  std::optional<int64_t> open_since_;  // a period still going on
};

}  // namespace dualswarm::harness

#endif  // DUALSWARM_ENGINE_HARNESS_ORIGIN_WAITS_H_
