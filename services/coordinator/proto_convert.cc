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

void SpecToProto(const SpecRow& s, v1::Spec* p) {
  p->set_hash(s.hash);
  p->set_name(s.name);
  p->set_file_name(s.file_name);
  p->set_source(s.source);
  p->set_choice_sites(s.choice_sites);
  SetTime(s.created_at, p->mutable_created_at());
}

void TargetToProto(const TargetRow& t, v1::Target* p) {
  p->set_id(t.id);
  p->set_name(t.name);
  p->set_adapter(t.adapter);
  p->set_address(t.address);
  p->set_launch(t.launch);
  p->mutable_readiness()->set_probe(t.readiness_probe);
  p->mutable_readiness()->set_timeout_ms(t.readiness_timeout_ms);
  p->set_reset_policy(t.reset_policy == "none" ? v1::RESET_POLICY_NONE : v1::RESET_POLICY_RESTART_PER_JOB);
  for (const auto& l : t.labels) p->add_labels(l);
  SetTime(t.created_at, p->mutable_created_at());
}

TargetRow TargetFromProto(const v1::Target& p) {
  TargetRow t;
  t.name = p.name();
  t.adapter = p.adapter();
  t.address = p.address();
  t.launch = p.launch();
  t.readiness_probe = p.readiness().probe();
  t.readiness_timeout_ms = p.readiness().timeout_ms();
  t.reset_policy = EnumWord(p.reset_policy());  // "" (unset): the store decides
  t.labels.assign(p.labels().begin(), p.labels().end());
  return t;
}

void BudgetToProto(const JobBudget& b, v1::JobBudget* p) {
  p->set_steps(b.steps);
  p->set_time_budget_ms(b.time_budget_ms);
  p->set_connections(b.connections);
  p->set_max_in_flight(b.max_in_flight);
  p->set_response_timeout_ms(b.response_timeout_ms);
  p->set_network(b.network);
  p->set_max_frontier(b.max_frontier);
}

JobBudget BudgetFromProto(const v1::JobBudget& p) {
  JobBudget b;
  b.steps = p.steps();
  b.time_budget_ms = p.time_budget_ms();
  b.connections = p.connections();
  b.max_in_flight = p.max_in_flight();
  b.response_timeout_ms = p.response_timeout_ms();
  b.network = p.network();
  b.max_frontier = p.max_frontier();
  return b;
}

void TemplateToProto(const RunTemplate& t, v1::RunTemplate* p) {
  p->set_spec_hash(t.spec_hash);
  p->set_target_id(t.target_id);
  p->set_jobs(t.jobs);
  p->set_seed(t.seed);
  p->set_stop_at_first_finding(t.stop_at_first_finding);
  BudgetToProto(t.budget, p->mutable_budget());
  p->set_gen(t.gen);
}

RunTemplate TemplateFromProto(const v1::RunTemplate& p) {
  RunTemplate t;
  t.spec_hash = p.spec_hash();
  t.target_id = p.target_id();
  t.jobs = p.jobs();
  t.seed = p.seed();
  t.stop_at_first_finding = p.stop_at_first_finding();
  t.budget = BudgetFromProto(p.budget());
  t.gen = p.gen();
  return t;
}

void CampaignToProto(const CampaignRow& c, v1::Campaign* p) {
  p->set_id(c.id);
  p->set_name(c.name);
  p->set_cron(c.cron);
  TemplateToProto(c.tmpl, p->mutable_template_());
  p->set_paused(c.paused);
  SetTime(c.created_at, p->mutable_created_at());
  if (c.last_fired_at != 0) SetTime(c.last_fired_at, p->mutable_last_fired_at());
  p->set_last_run_id(c.last_run_id);
  p->set_spec_name(c.spec_name);
  if (c.next_fire_at != 0) SetTime(c.next_fire_at, p->mutable_next_fire_at());
  p->set_last_error(c.last_error);
}

CampaignRow CampaignFromProto(const v1::Campaign& p) {
  CampaignRow c;
  c.name = p.name();
  c.cron = p.cron();
  c.tmpl = TemplateFromProto(p.template_());
  c.spec_name = p.spec_name();
  c.paused = p.paused();
  return c;
}

void RunToProto(const RunRow& r, v1::Run* p) {
  p->set_id(r.id);
  TemplateToProto(r.tmpl, p->mutable_template_());
  p->set_state(r.state);
  v1::JobCounts* c = p->mutable_counts();
  c->set_queued(r.counts.queued);
  c->set_leased(r.counts.leased);
  c->set_passed(r.counts.passed);
  c->set_failed(r.counts.failed);
  c->set_error(r.counts.error);
  c->set_cancelled(r.counts.cancelled);
  c->set_total(r.counts.total);
  p->set_findings(r.counts.failed);
  p->set_error(r.error);
  p->set_submitted_by(r.submitted_by);
  p->set_campaign_id(r.campaign_id);
  SetTime(r.created_at, p->mutable_created_at());
  // Unset while queued / not finished: mutable_*() alone would send 1970-01-01.
  if (r.started_at != 0) SetTime(r.started_at, p->mutable_started_at());
  if (r.finished_at != 0) SetTime(r.finished_at, p->mutable_finished_at());
}

void CampaignRunToProto(const CampaignRunRow& r, v1::CampaignRun* p) {
  RunToProto(r.run, p->mutable_run());
  p->set_previous_run_id(r.previous_run_id);
  for (int64_t f : r.finding_ids) p->add_finding_ids(f);
  for (int64_t f : r.new_finding_ids) p->add_new_finding_ids(f);
  for (int64_t f : r.gone_finding_ids) p->add_gone_finding_ids(f);
}

void JobToProto(const JobRow& j, v1::Job* p) {
  p->set_id(j.id);
  p->set_run_id(j.run_id);
  p->set_index(j.index);
  p->set_seed(j.seed);
  p->set_branch_order(EnumFromWord<v1::BranchOrder>(j.branch_order));
  p->set_feature_mask(j.feature_mask);
  p->set_state(j.state);
  p->set_attempts(j.attempts);
  p->set_worker_id(j.worker_id);
  p->set_outcome(EnumWord(j.outcome));  // a string field: "" before completion
  p->set_reason(j.reason);
  if (j.state == v1::JOB_STATE_LEASED && j.lease_expires_at != 0)
    SetTime(j.lease_expires_at, p->mutable_lease_expires_at());
  if (j.updated_at != 0) SetTime(j.updated_at, p->mutable_updated_at());
}

void FindingToProto(const FindingRow& f, v1::Finding* p) {
  p->set_id(f.id);
  p->set_signature(f.signature);
  p->set_kind(f.kind);
  p->set_spec_hash(f.spec_hash);
  p->set_target_id(f.target_id);
  p->set_reason(f.reason);
  p->set_count(f.count);
  SetTime(f.first_seen, p->mutable_first_seen());
  SetTime(f.last_seen, p->mutable_last_seen());
  p->set_smallest_counterexample_id(f.smallest_counterexample_id);
}

void CounterexampleToProto(const CounterexampleRow& c, v1::Counterexample* p) {
  p->set_id(c.id);
  p->set_finding_id(c.finding_id);
  p->set_run_id(c.run_id);
  p->set_job_id(c.job_id);
  p->set_spec_hash(c.spec_hash);
  p->set_target_id(c.target_id);
  p->set_seed(c.seed);
  p->set_branch_order(EnumFromWord<v1::BranchOrder>(c.branch_order));
  p->set_feature_mask(c.feature_mask);
  p->set_kind(c.cx.kind);
  p->set_reason(c.cx.reason);
  p->set_diff(c.cx.diff);
  p->set_signature(c.cx.signature);
  p->set_input_json(c.cx.input_json);
  p->set_trace_json(c.cx.trace_json);
  p->set_size(c.cx.size);
  p->set_unshrunk_size(c.cx.unshrunk_size);
  p->set_document_json(c.cx.document_json);
  SetTime(c.created_at, p->mutable_created_at());
}

NewCounterexample CounterexampleFromProto(const v1::Counterexample& p) {
  NewCounterexample cx;
  cx.kind = p.kind();
  cx.reason = p.reason();
  cx.diff = p.diff();
  cx.signature = p.signature();
  cx.input_json = p.input_json();
  cx.trace_json = p.trace_json();
  cx.size = p.size();
  cx.unshrunk_size = p.unshrunk_size();
  cx.document_json = p.document_json();
  return cx;
}

WorkerInfo WorkerFromProto(const v1::RegisterWorkerRequest& p) {
  WorkerInfo info;
  info.name = p.name();
  info.slots = p.slots();
  info.adapters.assign(p.adapters().begin(), p.adapters().end());
  info.labels.assign(p.labels().begin(), p.labels().end());
  info.version = p.version();
  return info;
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

}  // namespace dualswarm::coord
