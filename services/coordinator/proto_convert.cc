#include "services/coordinator/proto_convert.h"

#include <chrono>

#include "proto/names/wire_names.h"

namespace dualswarm::coord {

using wire::EnumFromWord;
using wire::EnumWord;

void SetTime(Micros us, google::protobuf::Timestamp* ts) {
  if (us == 0) return;
  int64_t secs = us / 1000000, rem = us % 1000000;
  if (rem < 0) {
    rem += 1000000;
    --secs;
  }
  ts->set_seconds(secs);
  ts->set_nanos(static_cast<int32_t>(rem * 1000));
}

Micros NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Fields named alike in a store struct and its message. Each struct has ONE
// list (DS_*_FIELDS), expanded by both directions and by every ToProto, so a
// field cannot be copied one way and forgotten the other. The expansions
// name their arguments: a ToProto function copies `row` into `p`, a
// FromProto function copies `p` into the `row` it returns. Fields that are
// renamed, converted (enum words, times, nested messages) or only optionally
// set are copied by hand beside the list.
#define DS_COPY_TO_PROTO(field) p->set_##field(row.field);
#define DS_COPY_FROM_PROTO(field) row.field = p.field();

#define DS_SPEC_FIELDS(F) F(hash) F(name) F(file_name) F(source) F(choice_sites)

void SpecToProto(const SpecRow& row, v1::Spec* p) {
  DS_SPEC_FIELDS(DS_COPY_TO_PROTO)
  SetTime(row.created_at, p->mutable_created_at());
}

// Not `id` (the store assigns it), nor what is copied by hand.
#define DS_TARGET_FIELDS(F) \
  F(name)                   \
  F(adapter)                \
  F(address)                \
  F(launch)                 \
  F(descriptor_set) F(nodes) F(nemesis) F(fault_interval_ms) F(fault_duration_ms) F(origins) F(run_as) F(reset_command)

void TargetToProto(const TargetRow& row, v1::Target* p) {
  DS_TARGET_FIELDS(DS_COPY_TO_PROTO)
  p->set_id(row.id);
  p->set_descriptor_set_size(row.descriptor_set_size);
  if (row.connect_node >= 0) p->set_connect_node(row.connect_node);  // absent: round-robin
  p->mutable_readiness()->set_probe(row.readiness_probe);
  p->mutable_readiness()->set_timeout_ms(row.readiness_timeout_ms);
  p->set_reset_policy(row.reset_policy == "none" ? v1::RESET_POLICY_NONE : v1::RESET_POLICY_RESTART_PER_JOB);
  for (const auto& l : row.labels) p->add_labels(l);
  SetTime(row.created_at, p->mutable_created_at());
}

TargetRow TargetFromProto(const v1::Target& p) {
  TargetRow row;
  DS_TARGET_FIELDS(DS_COPY_FROM_PROTO)
  row.readiness_probe = p.readiness().probe();
  row.readiness_timeout_ms = p.readiness().timeout_ms();
  row.reset_policy = EnumWord(p.reset_policy());  // "" (unset): the store decides
  row.labels.assign(p.labels().begin(), p.labels().end());
  row.connect_node = p.has_connect_node() ? p.connect_node() : -1;
  return row;
}

// clang-format does not settle on one layout for this list.
// clang-format off
#define DS_BUDGET_FIELDS(F) \
  F(steps) F(time_budget_ms) F(connections) F(max_in_flight) F(response_timeout_ms) F(network) F(max_frontier) \
  F(guide_candidates) F(explore_depth) F(explore_max_states)
// clang-format on

void BudgetToProto(const JobBudget& row, v1::JobBudget* p){DS_BUDGET_FIELDS(DS_COPY_TO_PROTO)}

JobBudget BudgetFromProto(const v1::JobBudget& p) {
  JobBudget row;
  DS_BUDGET_FIELDS(DS_COPY_FROM_PROTO)
  return row;
}

#define DS_TEMPLATE_FIELDS(F) F(spec_hash) F(target_id) F(jobs) F(seed) F(stop_at_first_finding) F(gen)

void TemplateToProto(const RunTemplate& row, v1::RunTemplate* p) {
  DS_TEMPLATE_FIELDS(DS_COPY_TO_PROTO)
  BudgetToProto(row.budget, p->mutable_budget());
}

RunTemplate TemplateFromProto(const v1::RunTemplate& p) {
  RunTemplate row;
  DS_TEMPLATE_FIELDS(DS_COPY_FROM_PROTO)
  row.budget = BudgetFromProto(p.budget());
  return row;
}

// What a client sets; the rest of a campaign is the store's, sent only.
#define DS_CAMPAIGN_FIELDS(F) F(name) F(cron) F(spec_name) F(paused)

void CampaignToProto(const CampaignRow& row, v1::Campaign* p) {
  DS_CAMPAIGN_FIELDS(DS_COPY_TO_PROTO)
  p->set_id(row.id);
  p->set_last_run_id(row.last_run_id);
  p->set_last_error(row.last_error);
  TemplateToProto(row.tmpl, p->mutable_template_());
  SetTime(row.created_at, p->mutable_created_at());
  if (row.last_fired_at != 0) SetTime(row.last_fired_at, p->mutable_last_fired_at());
  if (row.next_fire_at != 0) SetTime(row.next_fire_at, p->mutable_next_fire_at());
}

CampaignRow CampaignFromProto(const v1::Campaign& p) {
  CampaignRow row;
  DS_CAMPAIGN_FIELDS(DS_COPY_FROM_PROTO)
  row.tmpl = TemplateFromProto(p.template_());
  return row;
}

#define DS_JOB_COUNTS_FIELDS(F) F(queued) F(leased) F(passed) F(failed) F(error) F(cancelled) F(total)

namespace {
void JobCountsToProto(const JobCounts& row, v1::JobCounts* p) { DS_JOB_COUNTS_FIELDS(DS_COPY_TO_PROTO) }
}  // namespace

#define DS_RUN_FIELDS(F) F(id) F(state) F(error) F(submitted_by) F(campaign_id)

void RunToProto(const RunRow& row, v1::Run* p) {
  DS_RUN_FIELDS(DS_COPY_TO_PROTO)
  TemplateToProto(row.tmpl, p->mutable_template_());
  JobCountsToProto(row.counts, p->mutable_counts());
  p->set_findings(row.counts.failed);
  SetTime(row.created_at, p->mutable_created_at());
  // Unset while queued / not finished: mutable_*() alone would send 1970-01-01.
  if (row.started_at != 0) SetTime(row.started_at, p->mutable_started_at());
  if (row.finished_at != 0) SetTime(row.finished_at, p->mutable_finished_at());
}

void CampaignRunToProto(const CampaignRunRow& r, v1::CampaignRun* p) {
  RunToProto(r.run, p->mutable_run());
  p->set_previous_run_id(r.previous_run_id);
  for (int64_t f : r.finding_ids) p->add_finding_ids(f);
  for (int64_t f : r.new_finding_ids) p->add_new_finding_ids(f);
  for (int64_t f : r.gone_finding_ids) p->add_gone_finding_ids(f);
}

#define DS_JOB_FIELDS(F) \
  F(id) F(run_id) F(index) F(seed) F(feature_mask) F(state) F(attempts) F(worker_id) F(reason) F(faults)

void JobToProto(const JobRow& row, v1::Job* p) {
  DS_JOB_FIELDS(DS_COPY_TO_PROTO)
  p->set_branch_order(EnumFromWord<v1::BranchOrder>(row.branch_order));
  p->set_outcome(EnumWord(row.outcome));  // a string field: "" before completion
  if (row.state == v1::JOB_STATE_LEASED && row.lease_expires_at != 0)
    SetTime(row.lease_expires_at, p->mutable_lease_expires_at());
  if (row.updated_at != 0) SetTime(row.updated_at, p->mutable_updated_at());
}

#define DS_FINDING_FIELDS(F) \
  F(id) F(signature) F(kind) F(spec_hash) F(target_id) F(reason) F(count) F(smallest_counterexample_id)

void FindingToProto(const FindingRow& row, v1::Finding* p) {
  DS_FINDING_FIELDS(DS_COPY_TO_PROTO)
  SetTime(row.first_seen, p->mutable_first_seen());
  SetTime(row.last_seen, p->mutable_last_seen());
}

// A counterexample as a worker reports it (NewCounterexample, its `cx` in a
// stored row), and what the store adds.
#define DS_NEW_COUNTEREXAMPLE_FIELDS(F) \
  F(kind) F(reason) F(diff) F(signature) F(input_json) F(trace_json) F(size) F(unshrunk_size) F(document_json)
#define DS_STORED_COUNTEREXAMPLE_FIELDS(F) \
  F(id) F(finding_id) F(run_id) F(job_id) F(spec_hash) F(target_id) F(seed) F(feature_mask)

namespace {
void NewCounterexampleToProto(const NewCounterexample& row, v1::Counterexample* p) {
  DS_NEW_COUNTEREXAMPLE_FIELDS(DS_COPY_TO_PROTO)
}
}  // namespace

void CounterexampleToProto(const CounterexampleRow& row, v1::Counterexample* p) {
  DS_STORED_COUNTEREXAMPLE_FIELDS(DS_COPY_TO_PROTO)
  NewCounterexampleToProto(row.cx, p);
  p->set_branch_order(EnumFromWord<v1::BranchOrder>(row.branch_order));
  SetTime(row.created_at, p->mutable_created_at());
}

NewCounterexample CounterexampleFromProto(const v1::Counterexample& p) {
  NewCounterexample row;
  DS_NEW_COUNTEREXAMPLE_FIELDS(DS_COPY_FROM_PROTO)
  return row;
}

#define DS_WORKER_FIELDS(F) F(name) F(slots) F(version)

WorkerInfo WorkerFromProto(const v1::RegisterWorkerRequest& p) {
  WorkerInfo row;
  DS_WORKER_FIELDS(DS_COPY_FROM_PROTO)
  row.adapters.assign(p.adapters().begin(), p.adapters().end());
  row.labels.assign(p.labels().begin(), p.labels().end());
  return row;
}

void LeasedJobToProto(const LeasedJob& lj, v1::LeasedJob* p) {
  p->set_job_id(lj.job.id);
  p->set_run_id(lj.job.run_id);
  p->set_index(lj.job.index);
  p->set_lease_token(lj.job.lease_token);
  SetTime(lj.job.lease_expires_at, p->mutable_lease_expires_at());
  p->set_attempt(lj.job.attempts);
  p->set_seed(lj.job.seed);
  p->set_branch_order(EnumFromWord<v1::BranchOrder>(lj.job.branch_order));
  p->set_feature_mask(lj.job.feature_mask);
  BudgetToProto(lj.budget, p->mutable_budget());
  p->set_gen(lj.gen);
}

#undef DS_COPY_TO_PROTO
#undef DS_COPY_FROM_PROTO
#undef DS_SPEC_FIELDS
#undef DS_TARGET_FIELDS
#undef DS_BUDGET_FIELDS
#undef DS_TEMPLATE_FIELDS
#undef DS_CAMPAIGN_FIELDS
#undef DS_JOB_COUNTS_FIELDS
#undef DS_RUN_FIELDS
#undef DS_JOB_FIELDS
#undef DS_FINDING_FIELDS
#undef DS_NEW_COUNTEREXAMPLE_FIELDS
#undef DS_STORED_COUNTEREXAMPLE_FIELDS
#undef DS_WORKER_FIELDS

}  // namespace dualswarm::coord
