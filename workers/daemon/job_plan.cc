#include "workers/daemon/job_plan.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/check/checker.h"
#include "engine/check/observation.h"
#include "engine/harness/coverage_guide.h"
#include "engine/ir/json.h"
#include "proto/names/wire_names.h"
#include "util/ready_probe.h"
#include "workers/adapters/adapter_kinds.h"
#include "workers/runner/choice_sites.h"

namespace dualswarm::workers {
namespace {

// The job's branch order as the checker reads it ("first" when unset).
std::string BranchOrderName(v1::BranchOrder o) {
  std::string w = wire::EnumWord(o);
  return w.empty() ? "first" : w;
}

v1::VerdictKind KindOf(Outcome o) {
  switch (o) {
    case Outcome::kSafety:
      return v1::VERDICT_KIND_SAFETY;
    case Outcome::kLiveness:
      return v1::VERDICT_KIND_LIVENESS;
    case Outcome::kSpecError:
      return v1::VERDICT_KIND_SPEC_ERROR;
    case Outcome::kSutCrash:
      return v1::VERDICT_KIND_SUT_CRASH;
    case Outcome::kProperty:
      return v1::VERDICT_KIND_PROPERTY;
    default:
      return v1::VERDICT_KIND_UNSPECIFIED;
  }
}

void FillCommon(const v1::LeasedJob& job, v1::CompleteJobRequest* req) {
  req->set_job_id(job.job_id());
  req->set_lease_token(job.lease_token());
}

}  // namespace

bool IsFinding(Outcome o) { return IsSutFault(o) || o == Outcome::kSpecError; }

absl::StatusOr<JobPlan> PlanJob(const v1::LeasedJob& job, const std::string& work_root) {
  JobPlan plan;
  const v1::Spec& spec = job.spec();
  auto loaded = lang::LoadSpec(spec.file_name().empty() ? "spec.dspec" : spec.file_name(), spec.source());
  if (!loaded.ok())
    return absl::InvalidArgumentError(absl::StrCat("the spec does not load: ", loaded.status().message()));
  plan.spec = *loaded;

  const v1::Target& t = job.target();
  JobOptions& o = plan.options;
  if (absl::Status s = CheckAdapterKind(t.adapter()); !s.ok())
    return absl::InvalidArgumentError(absl::StrCat("target \"", t.name(), "\": ", s.message()));
  o.adapter = t.adapter();
  o.adapter_config.descriptor_set = t.descriptor_set();  // the grpc adapter's services (the coordinator checked it)
  if (t.launch().empty() == t.address().empty())
    return absl::InvalidArgumentError(
        absl::StrCat("target \"", t.name(), "\" needs exactly one of a launch command or an address"));
  o.launch = t.launch();
  o.target = t.address();
  // A cluster target's nodes (0 from an old coordinator: one) and where
  // connections go (absent: round-robin); the coordinator checked both.
  o.nodes = t.nodes() > 0 ? t.nodes() : 1;
  o.connect_node = t.has_connect_node() ? t.connect_node() : -1;
  // Its nemesis (none from an old coordinator), each job on its own seed's
  // schedule; RunJob checks the timing against the response timeout.
  // Beyond a run's first job, a swarm job keeps a subset of the faults
  // (nemesis.h, SwarmFaults), as it keeps a subset of gen alternatives.
  if (!t.nemesis().empty()) {
    o.nemesis.faults = absl::StrSplit(t.nemesis(), ',');
    if (job.index() > 0) o.nemesis.faults = SwarmFaults(o.nemesis.faults, job.seed());
    if (t.fault_interval_ms() > 0) o.nemesis.interval_ms = t.fault_interval_ms();
    if (t.fault_duration_ms() > 0) o.nemesis.duration_ms = t.fault_duration_ms();
  }
  // An intermediary's origin endpoints (RunJob refuses a spec and a target
  // that disagree about them).
  o.origins = t.origins();
  // An fs target's program runs as this user (the fs adapter refuses it,
  // as a job error, on a worker that is not root or lacks the user).
  o.adapter_config.fs_user = t.run_as();
  o.ready_timeout_ms = t.readiness().timeout_ms() > 0 ? t.readiness().timeout_ms() : 10000;
  plan.reset_command = t.reset_command();
  auto probe = util::ParseReadyProbe(t.readiness().probe());
  if (!probe.ok())
    return absl::InvalidArgumentError(absl::StrCat("target \"", t.name(), "\": ", probe.status().message()));
  o.ready_probe = t.readiness().probe().empty() ? "tcp" : t.readiness().probe();
  o.work_root = work_root;

  const v1::JobBudget& b = job.budget();
  o.exec.seed = job.seed();
  o.exec.steps = b.steps() > 0 ? b.steps() : 1000;
  o.exec.connections = b.connections() > 0 ? b.connections() : 4;
  o.exec.max_in_flight = b.max_in_flight() > 0 ? b.max_in_flight() : o.exec.connections;
  if (b.guide_candidates() < 0 || b.guide_candidates() > harness::kMaxGuideCandidates)
    return absl::InvalidArgumentError(
        absl::StrCat("budget.guide_candidates must be between 0 and ", harness::kMaxGuideCandidates));
  o.exec.guide_candidates = b.guide_candidates();
  if (o.exec.guide_candidates > 1)
    o.exec.guide_reached.assign(job.run_covered_branches().begin(), job.run_covered_branches().end());
  o.exec.gen = job.gen().empty() ? "request" : job.gen();
  o.response_timeout_ms = b.response_timeout_ms() > 0 ? b.response_timeout_ms() : 5000;
  o.time_budget_s = b.time_budget_ms() > 0 ? static_cast<double>(b.time_budget_ms()) / 1000.0 : 0;
  if (!b.network().empty()) {
    if (b.network() != "tcp" && b.network() != "sync")
      return absl::InvalidArgumentError(absl::StrCat("unknown network model \"", b.network(), "\""));
    o.exec.checker.network = b.network();
  }
  if (b.max_frontier() > 0) o.exec.checker.max_frontier = b.max_frontier();
  auto order = check::ParseBranchOrder(BranchOrderName(job.branch_order()));
  if (!order.ok()) return order.status();
  o.exec.checker.branch_order = *order;
  if (!job.feature_mask().empty()) {
    auto mask = harness::FeatureMask::Parse(job.feature_mask());
    if (!mask.ok())
      return absl::InvalidArgumentError(absl::StrCat("malformed feature mask: ", mask.status().message()));
    if (auto st = CheckFeatureMask(*plan.spec, *mask); !st.ok()) return st;
    o.exec.mask = *mask;
  }
  return plan;
}

v1::CompleteJobRequest CompletionForResult(const v1::LeasedJob& job, const JobResult& result,
                                           const harness::Counterexample* cx) {
  v1::CompleteJobRequest req;
  FillCommon(job, &req);
  req.set_seconds(result.seconds);
  req.set_sent(result.sent);
  req.set_received(result.received);
  req.set_faults(result.faults);
  for (const int32_t id : result.covered_branches) req.add_covered_branches(id);
  req.set_reason(result.reason);
  if (result.outcome == Outcome::kPassed) {
    req.set_outcome(v1::JOB_OUTCOME_PASSED);
    return req;
  }
  if (result.outcome == Outcome::kInconclusive) {
    req.set_outcome(v1::JOB_OUTCOME_INCONCLUSIVE);
    return req;
  }
  req.set_outcome(v1::JOB_OUTCOME_FAILED);
  v1::Counterexample* p = req.mutable_counterexample();
  p->set_kind(KindOf(result.outcome));
  if (cx == nullptr) {
    p->set_reason(result.reason);
    return req;
  }
  p->set_reason(cx->verdict.reason);
  p->set_diff(cx->verdict.field);
  p->set_signature(cx->signature);
  std::string input = "[";
  for (size_t i = 0; i < cx->input.size(); ++i)
    absl::StrAppend(&input, i ? "," : "", "{\"conn\":", cx->input[i].conn,
                    ",\"jexpr\":", ir::ToJson(cx->input[i].jexpr), "}");
  input += "]";
  p->set_input_json(input);
  std::string trace;
  for (const auto& obs : cx->trace) absl::StrAppend(&trace, check::ObservationToJson(obs), "\n");
  p->set_trace_json(trace);
  p->set_size(static_cast<int32_t>(cx->shrunk_size));
  p->set_unshrunk_size(static_cast<int32_t>(cx->original_size));
  p->set_document_json(harness::CounterexampleToJson(*cx));
  req.set_reason(cx->verdict.reason);
  return req;
}

v1::CompleteJobRequest CompletionForError(const v1::LeasedJob& job, const std::string& why, double seconds) {
  v1::CompleteJobRequest req;
  FillCommon(job, &req);
  req.set_outcome(v1::JOB_OUTCOME_ERROR);
  req.set_reason(why);
  req.set_seconds(seconds);
  return req;
}

}  // namespace dualswarm::workers
