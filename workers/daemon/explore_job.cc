#include "workers/daemon/explore_job.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/harness/counterexample.h"
#include "engine/ir/jexpr.h"
#include "engine/lang/spec.h"
#include "proto/names/wire_names.h"
#include "workers/daemon/job_plan.h"
#include "workers/runner/runner.h"

namespace dualswarm::workers {
namespace {

// What the explorer may be given by a lease; the coordinator checks the
// same (store/limits.h), a worker checks again what it runs.
constexpr int kMaxDepth = 64;
constexpr uint64_t kMaxStates = 2'000'000;
constexpr uint64_t kDefaultStates = 200'000;
constexpr double kDefaultSeconds = 60;

// The order a job tries a state's requests in. A swarm's branch orders
// cycle through first, last, random and most-constrained: only the first
// job of the run searches as the gen block enumerates and only the second
// reversed (a later job with the same order would repeat that search
// exactly); every other job draws a permutation from its own seed.
explore::ActionOrder OrderOf(const v1::LeasedJob& job) {
  if (job.index() >= 2) return explore::ActionOrder::kRandom;
  switch (job.branch_order()) {
    case v1::BRANCH_ORDER_LAST:
      return explore::ActionOrder::kLast;
    case v1::BRANCH_ORDER_RANDOM:
    case v1::BRANCH_ORDER_MOST_CONSTRAINED:
      return explore::ActionOrder::kRandom;
    default:
      return explore::ActionOrder::kFirst;
  }
}

Outcome OutcomeOf(explore::Violation::Kind k) {
  return k == explore::Violation::Kind::kProperty ? Outcome::kProperty : Outcome::kSpecError;
}

// The violation as a counterexample: its requests one at a time on
// connection 0, no trace (no SUT ran); grouped by its kind and message.
harness::Counterexample CounterexampleOf(const v1::LeasedJob& job, const lang::Spec& spec,
                                         const explore::Violation& v) {
  harness::Counterexample cx;
  cx.spec_name = spec.name;
  cx.spec_hash = job.spec().hash();
  cx.spec_file = job.spec().file_name();
  cx.target = job.target().name();
  cx.adapter = job.target().adapter();
  cx.seed = job.seed();
  cx.branch_order = explore::ActionOrderName(OrderOf(job));
  for (size_t k = 0; k < v.requests.size(); ++k) {
    harness::InputItem item;
    item.jexpr = ir::QuoteLookalikes(v.requests[k], {});
    if (k > 0) item.after = {static_cast<int>(k) - 1};
    cx.input.push_back(std::move(item));
  }
  cx.verdict.kind = OutcomeName(OutcomeOf(v.kind));
  cx.verdict.reason = absl::StrCat(explore::ViolationKindName(v.kind), " after ", v.requests.size(),
                                   " request(s) from the initial state: ", v.message);
  cx.signature = lang::StableHashHex(absl::StrCat("explore|", explore::ViolationKindName(v.kind), "|", v.message));
  cx.original_size = cx.shrunk_size = v.requests.size();
  cx.shrink_complete = true;  // the shortest sequence the search found
  return cx;
}

}  // namespace

bool IsExploreJob(const v1::LeasedJob& job) { return job.budget().explore_depth() > 0; }

absl::StatusOr<explore::ExploreOptions> ExploreOptionsFor(const v1::LeasedJob& job, const std::atomic<bool>* cancel) {
  const v1::JobBudget& b = job.budget();
  if (b.explore_depth() < 1 || b.explore_depth() > kMaxDepth)
    return absl::InvalidArgumentError(absl::StrCat("budget.explore_depth must be between 1 and ", kMaxDepth));
  if (b.explore_max_states() > kMaxStates)
    return absl::InvalidArgumentError(absl::StrCat("budget.explore_max_states must be at most ", kMaxStates));
  if (b.time_budget_ms() < 0) return absl::InvalidArgumentError("budget.time_budget_ms must not be negative");
  explore::ExploreOptions o;
  o.gen = job.gen().empty() ? "request" : job.gen();
  o.max_depth = b.explore_depth();
  o.max_states = b.explore_max_states() > 0 ? b.explore_max_states() : kDefaultStates;
  o.max_seconds = b.time_budget_ms() > 0 ? static_cast<double>(b.time_budget_ms()) / 1000 : kDefaultSeconds;
  o.order = OrderOf(job);
  o.seed = job.seed();
  o.stop_at_first = true;
  o.cancel = cancel;
  return o;
}

v1::CompleteJobRequest CompletionForExplore(const v1::LeasedJob& job, const lang::Spec& spec,
                                            const explore::ExploreResult& r) {
  JobResult result;
  result.seconds = r.seconds;  // sent and received stay 0: no SUT
  if (!r.violations.empty()) {
    const explore::Violation& v = r.violations.front();
    harness::Counterexample cx = CounterexampleOf(job, spec, v);
    result.outcome = OutcomeOf(v.kind);
    result.reason = cx.verdict.reason;
    return CompletionForResult(job, result, &cx);
  }
  result.outcome = r.complete() ? Outcome::kPassed : Outcome::kInconclusive;
  result.reason = absl::StrCat(
      r.states, " states, ", r.transitions, " transitions, depth ", r.depth_reached,
      r.complete() ? ": no violation within the depth bound"
      : r.stopped_by.empty()
          ? absl::StrCat(": ", r.states_with_requests_cut, " state(s) had requests cut by the alphabet's bounds")
          : absl::StrCat(": stopped by the ", r.stopped_by));
  return CompletionForResult(job, result, nullptr);
}

v1::CompleteJobRequest RunExploreJob(const v1::LeasedJob& job, const std::atomic<bool>* cancel) {
  const v1::Spec& s = job.spec();
  auto spec = lang::LoadSpec(s.file_name().empty() ? "spec.dspec" : s.file_name(), s.source());
  if (!spec.ok()) return CompletionForError(job, absl::StrCat("the spec does not load: ", spec.status().message()), 0);
  auto options = ExploreOptionsFor(job, cancel);
  if (!options.ok()) return CompletionForError(job, std::string(options.status().message()), 0);
  auto result = explore::Explore(*spec, *options);
  if (!result.ok())
    return CompletionForError(job, absl::StrCat("the spec cannot be explored: ", result.status().message()), 0);
  return CompletionForExplore(job, **spec, *result);
}

}  // namespace dualswarm::workers
