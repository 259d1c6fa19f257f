// The observation checker (validator): decides whether a stream of
// observations is explained by some execution of the spec under some
// network behaviour allowed by the network model.
//
// Search: an incremental depth-first search over explanations with
// just-in-time linearization and memoisation (Lowe; Porcupine). An
// explanation is (spec state, residual path constraints, per channel: how
// many requests the server consumed and the responses it owes). A received
// response is explained by consuming pending requests (in any order the
// network model allows) only until the response's channel owes something,
// then matching the head of that channel's queue against the observation.
// Alternatives at each response are kept lazily on a stack; when a later
// observation kills the current explanation the search backtracks, and
// (observation, explanation-hash) pairs proven dead are never explored
// again. The SUT is rejected only when no alternative is left.
// Soundness: Z3 "unknown" counts as satisfiable; exceeding the frontier
// bound is an error (kInconclusive), never an accept.
#ifndef DUALSWARM_ENGINE_CHECK_CHECKER_H_
#define DUALSWARM_ENGINE_CHECK_CHECKER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/check/network.h"
#include "engine/check/observation.h"
#include "engine/lang/interp.h"
#include "engine/lang/spec.h"
#include "engine/sym/solver.h"

namespace dualswarm::check {

// Which explanation the search follows first when several explain an
// observation (and so which model state the generator reads). A swarm
// dimension: different orders steer generation differently.
enum class BranchOrder { kFirst, kLast, kRandom, kMostConstrained };
const char* BranchOrderName(BranchOrder o);
absl::StatusOr<BranchOrder> ParseBranchOrder(absl::string_view name);

struct CheckerOptions {
  std::string network = "tcp";
  // Which node of a cluster each connection reaches (node_of() in specs).
  lang::ConnectionNodes connection_nodes;
  // Most explanations kept alive at once (alternatives on the search stack).
  size_t max_frontier = 1'000'000;
  // Most explanation steps (handler runs) per partition; 0 = unlimited.
  uint64_t max_steps = 0;
  // Most wall time spent checking, over all Observe calls; 0 = unlimited.
  // Past it the verdict is kInconclusive ("time bound exceeded").
  double max_seconds = 600;
  // Most (observation, explanation) keys remembered per partition; past it
  // the memo starts afresh (more work, same verdict).
  size_t max_memo = 4'000'000;
  // With an `on fault` handler, each fault event is a step of every
  // partition: past this many such steps (faults times partitions) the
  // check ends INCONCLUSIVE, naming the bound.
  uint64_t max_fault_steps = 1'000'000;
  // Prune explanations already taken up (always on in the product; the
  // memo's exactness test compares verdicts with it off).
  bool use_memo = true;
  // Look up server steps already run from an equal state instead of running
  // them again (step_cache.h; on in the product, off to compare).
  bool use_step_cache = true;
  // Most steps the step cache keeps per partition, and most value nodes of
  // the states those steps lead to (about 200 MB); past either it starts
  // afresh.
  size_t max_cached_steps = 1'000'000;
  uint64_t max_cached_step_nodes = 4'000'000;
  // Polled with the time bound: once set, checking stops (kInconclusive,
  // "interrupted"), so a signal is obeyed however long one observation takes.
  const std::atomic<bool>* cancel = nullptr;
  // Work (memo lookups) the search may spend without explaining a further
  // observation before it runs the crashed-request probe (search.h); each
  // probe doubles it. 0 = never probe (to compare verdicts).
  uint64_t probe_after_work = 10'000;
  // Work (memo lookups) the search may spend without explaining a further
  // observation before it starts again from the first observation, now
  // that it knows more of the trace (search.h: restarts); the bound grows
  // with what each restart cost. 0 = never restart (to compare verdicts).
  uint64_t restart_after_work = 10'000;
  // How many observations back from the furthest one explained a restart
  // begins at first (doubling with each restart that gets no further).
  size_t restart_back_observations = 64;
  // Online: a search that stalls (as above) while explaining the newest
  // observations stops there, and starts again once more of the trace has
  // arrived: the responses to the requests it had to guess about prune its
  // guesses. Verdicts are the same; a rejection may come some observations
  // later. Whoever sets it must call Checker::Finish() before reading the
  // final verdict (the tester does).
  bool defer_when_stalled = false;
  // Online (with defer_when_stalled): work (memo lookups) one Observe may
  // spend; past it the search stops where it is and goes on in the next
  // Observe (or Finish), so one observation never holds up the tester long.
  // The search keeps its order; it only knows more of the trace when it
  // goes on (more alternatives pruned at once, the same verdict). 0 =
  // unlimited.
  uint64_t yield_after_work = 4'000;
  // When the furthest observation cannot be explained and its response
  // shows a value only one request carried, first try the server orders
  // that take that request earlier (search.h: provenance repair). Only
  // the order of the search changes. false = never (to compare verdicts).
  bool repair_by_provenance = true;
  // Probe whatever causes the stall, not only where sets of crashed requests
  // multiply (tests: the probe's verdicts compared on every trace).
  bool probe_any_stall = false;
  // Recompute every memo key the search derives from its parent's and end
  // in a spec error naming the observation when one differs (tests: the
  // derivation's exactness).
  bool verify_memo_keys = false;
  // Keep the branches (lang/branches.h) each server step took, so that
  // Checker::CoveredBranches can say which ones the explanation took.
  bool record_coverage = false;
  // How many death reasons a rejection reports.
  int max_reasons = 6;
  unsigned solver_timeout_ms = 2000;
  BranchOrder branch_order = BranchOrder::kFirst;
  uint64_t seed = 1;  // for BranchOrder::kRandom
};

// Why one explanation could not explain the rejecting observation.
// In a server order, an origin's answer to an intermediary (whose labels
// are the origin side's own, docs/trace-format.md) is kOriginLabelBase +
// its label, and prints as "o" + its label (ServerOrderEntry).
constexpr int64_t kOriginLabelBase = kLabelLimit;
std::string ServerOrderEntry(int64_t label);

struct DeathReason {
  std::string text;   // field diff or conflicting constraint
  std::string field;  // mismatching field path, e.g. "status"
  // Input labels in the order the server took them (kOriginLabelBase: above).
  std::vector<int64_t> server_order;
  std::string spec_loc;  // "file:line:col" of the `send` that produced the response
  // How many fields of the observation differ from what this explanation's
  // spec sent (0 when it died otherwise: a conflicting constraint, nothing
  // owed). A rejection keeps the closest explanations (ReasonCloseness).
  int mismatched_fields = 0;
};

// How far an explanation that died was from explaining the observation:
// the fields that differ, at least 1. A rejection keeps (and lists first)
// the max_reasons best ranked of those that reached furthest (ReasonRank),
// so a message that differs from the right explanation's in one field is
// named by that field, not by the many explanations that took another
// request.
inline int ReasonCloseness(const DeathReason& r) { return r.mismatched_fields > 1 ? r.mismatched_fields : 1; }
// Smaller ranks first: the closest; of equally close ones, those that name
// the spec's `send` (a finding's signature is made of a reason's location:
// shrink_job.cc, VerdictOf); then those whose server took the fewest
// requests (the simplest story; server orders keep the last 64).
using ReasonRankKey = std::tuple<int, bool, size_t>;
inline ReasonRankKey ReasonRank(const DeathReason& r) {
  return {ReasonCloseness(r), r.spec_loc.empty(), r.server_order.size()};
}

struct Verdict {
  enum class Kind { kAccept, kReject, kInconclusive, kSpecError };
  Kind kind = Kind::kAccept;
  std::string message;  // one line summary
  // For kReject: the observation no explanation survived.
  size_t obs_index = 0;
  Observation observation;
  std::vector<DeathReason> reasons;
  // For kReject by a property monitor (engine/monitor): the property's
  // name, and whether an `eventually within N` window closing decided it
  // (a finding of kind property all the same). Empty for the spec's
  // rejection.
  std::string property;
  bool deadline_missed = false;
};

const char* VerdictKindName(Verdict::Kind k);

// How the runs of one law of a library interface ended (docs/interfaces.md).
struct LawTally {
  std::string name;
  uint64_t passed = 0;
  uint64_t aborted = 0;  // the `when` condition was false
  uint64_t violated = 0;
  uint64_t set_aside = 0;  // calls that were not the law's (reruns)
};

struct CheckerStats {
  uint64_t observations = 0;
  uint64_t handler_runs = 0;         // spec steps executed (one per path)
  uint64_t steps_reused = 0;         // server steps looked up, not run (step_cache.h)
  uint64_t inert_steps_skipped = 0;  // optional requests not taken: nothing changes (search.cc)
  uint64_t explanations = 0;         // candidate explanations examined
  uint64_t backtracks = 0;
  uint64_t memo_hits = 0;         // explanations not explored again (seen or dominated)
  uint64_t probes = 0;            // crashed-request probes run (search.h)
  uint64_t probe_rejections = 0;  // of them, the ones that decided the verdict
  uint64_t closure_states = 0;    // states crashed-request closures gave the probe (crashed_closure.h)
  uint64_t restarts = 0;          // searches started again with more of the trace (search.h)
  uint64_t yields = 0;            // Observe calls that left work for the next (yield_after_work)
  uint64_t repairs = 0;           // server orders tried first by provenance repair (search.h)
  size_t memo_entries = 0;        // keys the memo holds now
  size_t frontier = 0;            // live alternatives now
  size_t max_frontier_seen = 0;
  size_t partitions = 0;  // independent parts checked (see `partition`)
  sym::SolverStats solver;
  double check_seconds = 0;        // wall time spent in Observe, in total
  double max_observe_seconds = 0;  // the most one Observe call took
  std::vector<LawTally> laws;      // per law of the spec, in spec order
};

class Checker {
 public:
  static absl::StatusOr<std::unique_ptr<Checker>> Create(std::shared_ptr<const lang::Spec> spec,
                                                         const CheckerOptions& options);
  ~Checker();

  // Feeds the next observation. Malformed observations (label/conn
  // inconsistencies) return InvalidArgument and are not recorded. Once the
  // verdict is not kAccept, further observations are ignored.
  absl::Status Observe(Observation o);

  // Between Hold() and Release(), Observe only records (and validates);
  // Release() then explains everything recorded. The verdict is the same
  // as observing one at a time; knowing later responses while explaining
  // earlier ones lets the search drop hopeless explanations sooner. The
  // tester holds the checker over the responses of one poll.
  void Hold();
  void Release();

  // The trace is complete: explains whatever is left (also what a search
  // deferred, see CheckerOptions::defer_when_stalled). Then the verdict is
  // final.
  void Finish();

  // kAccept while every observation so far is explained.
  const Verdict& verdict() const;
  CheckerStats stats() const;

  // Model state for the generator: the current explanation of every
  // partition merged (map-valued globals are unioned; other globals come
  // from the partition that changed them last).
  std::vector<ir::Value> ModelState() const;

  // With CheckerOptions::record_coverage: the branches (lang/branches.h)
  // the current explanation of every partition took, sorted, each once.
  // Steps of crashed requests that only a probe's closure takes are left
  // out. Empty without record_coverage.
  std::vector<int32_t> CoveredBranches() const;

 private:
  struct Impl;
  explicit Checker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Convenience for whole traces: feeds all observations, returns the verdict.
// Malformed traces return InvalidArgument "line N: ...".
absl::StatusOr<Verdict> CheckTrace(std::shared_ptr<const lang::Spec> spec, const std::vector<Observation>& trace,
                                   const CheckerOptions& options, CheckerStats* stats = nullptr);

// Human-readable multi-line rendering of a verdict.
std::string FormatVerdict(const Verdict& v);
// {"verdict":"accept"|"reject"|..., ...}
std::string VerdictToJson(const Verdict& v, const CheckerStats* stats);

}  // namespace dualswarm::check

#endif  // DUALSWARM_ENGINE_CHECK_CHECKER_H_
