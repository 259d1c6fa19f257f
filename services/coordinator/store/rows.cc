#include "services/coordinator/store/rows.h"

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "services/coordinator/store/limits.h"
#include "services/coordinator/store/sql.h"

namespace dualswarm::coord {

namespace {

// A template's budget, and the rest of it: named like their members (and
// like the columns of runs), read from runs `r` or a campaign's jsonb.
const Columns<JobBudget>& BudgetColumns() {
  using Budget = JobBudget;
  static const Columns<Budget> columns(
      {Col<&Budget::steps>("steps"), Col<&Budget::time_budget_ms>("time_budget_ms"),
       Col<&Budget::connections>("connections"), Col<&Budget::max_in_flight>("max_in_flight"),
       Col<&Budget::response_timeout_ms>("response_timeout_ms"), Col<&Budget::network>("network"),
       Col<&Budget::max_frontier>("max_frontier"), Col<&Budget::guide_candidates>("guide_candidates"),
       Col<&Budget::explore_depth>("explore_depth"), Col<&Budget::explore_max_states>("explore_max_states")});
  return columns;
}

const Columns<RunTemplate>& TemplateColumns() {
  static const Columns<RunTemplate> columns(
      {Col<&RunTemplate::spec_hash>("spec_hash"), Col<&RunTemplate::target_id>("target_id"),
       Col<&RunTemplate::jobs>("jobs"), Col<&RunTemplate::seed>("seed"),
       Col<&RunTemplate::stop_at_first_finding>("stop_at_first_finding"), Col<&RunTemplate::gen>("gen")});
  return columns;
}

// A run's counts of jobs by state, from the lateral aggregate `c`.
Columns<JobCounts> CountColumns() {
  return Columns<JobCounts>({Col<&JobCounts::queued>("n_queued"), Col<&JobCounts::leased>("n_leased"),
                             Col<&JobCounts::passed>("n_passed"), Col<&JobCounts::failed>("n_failed"),
                             Col<&JobCounts::error>("n_error"), Col<&JobCounts::cancelled>("n_cancelled"),
                             Col<&JobCounts::total>("n_total")})
      .Qualified("c");
}

// What a worker reports of a counterexample, from counterexamples `c`.
Columns<NewCounterexample> ReportedColumns() {
  using Cx = NewCounterexample;
  return Columns<Cx>({Col<&Cx::kind>("kind"), Col<&Cx::reason>("reason"), Col<&Cx::diff>("diff"),
                      Col<&Cx::signature>("signature"), Col<&Cx::input_json>("input_json"),
                      Col<&Cx::trace_json>("trace_json"), Col<&Cx::size>("size"),
                      Col<&Cx::unshrunk_size>("unshrunk_size"), Col<&Cx::document_json>("document_json")})
      .Qualified("c");
}

}  // namespace

const Columns<SpecRow>& SpecColumns() {
  static const Columns<SpecRow> columns({Col<&SpecRow::hash>("hash"), Col<&SpecRow::name>("name"),
                                         Col<&SpecRow::file_name>("file_name"), Col<&SpecRow::source>("source"),
                                         Col<&SpecRow::choice_sites>("choice_sites"),
                                         Col<&SpecRow::created_at>("created_at", "ds_us(created_at)")});
  return columns;
}

namespace {

// A target's columns, with its descriptor set's bytes or without them.
Columns<TargetRow> TargetColumnsWith(bool descriptor_set) {
  return Columns<TargetRow>(
      {Col<&TargetRow::id>("id"),
       Col<&TargetRow::name>("name"),
       Col<&TargetRow::adapter>("adapter"),
       Col<&TargetRow::address>("address"),
       Col<&TargetRow::launch>("launch"),
       Col<&TargetRow::readiness_probe>("readiness_probe"),
       Col<&TargetRow::readiness_timeout_ms>("readiness_timeout_ms"),
       Col<&TargetRow::reset_policy>("reset_policy"),
       Col<&TargetRow::labels>("labels", "array_to_string(labels, ',')"),
       Col<&TargetRow::created_at>("created_at", "ds_us(created_at)"),
       descriptor_set ? HexCol<&TargetRow::descriptor_set>("descriptor_set", "descriptor_set")
                      : Col<&TargetRow::descriptor_set>("descriptor_set", "''"),
       Col<&TargetRow::descriptor_set_size>("descriptor_set_size", "octet_length(descriptor_set)"),
       Col<&TargetRow::nodes>("nodes"),
       Col<&TargetRow::connect_node>("connect_node"),
       Col<&TargetRow::nemesis>("nemesis"),
       Col<&TargetRow::fault_interval_ms>("fault_interval_ms"),
       Col<&TargetRow::fault_duration_ms>("fault_duration_ms"),
       Col<&TargetRow::origins>("origins"),
       Col<&TargetRow::run_as>("run_as"),
       Col<&TargetRow::reset_command>("reset_command")});
}

}  // namespace

const Columns<TargetRow>& TargetColumns() {
  static const Columns<TargetRow> columns = TargetColumnsWith(true);
  return columns;
}

const Columns<TargetRow>& TargetListColumns() {
  static const Columns<TargetRow> columns = TargetColumnsWith(false);
  return columns;
}

const Columns<RunRow>& RunColumns() {
  static const Columns<RunRow> columns =
      Columns<RunRow>({Col<&RunRow::id>("id")}).Qualified("r") +
      (TemplateColumns() + BudgetColumns().Within<&RunTemplate::budget>()).Qualified("r").Within<&RunRow::tmpl>() +
      Columns<RunRow>({Col<&RunRow::state>("state"), Col<&RunRow::error>("error"),
                       Col<&RunRow::submitted_by>("submitted_by"),
                       Col<&RunRow::campaign_id>("campaign_id", "COALESCE(r.campaign_id, 0)"),
                       Col<&RunRow::created_at>("created_at", "ds_us(r.created_at)"),
                       Col<&RunRow::started_at>("started_at", "ds_us(r.started_at)"),
                       Col<&RunRow::finished_at>("finished_at", "ds_us(r.finished_at)")})
          .Qualified("r") +
      CountColumns().Within<&RunRow::counts>();
  return columns;
}

const Columns<JobRow>& JobColumns() {
  static const Columns<JobRow> columns =
      Columns<JobRow>({Col<&JobRow::id>("id"), Col<&JobRow::run_id>("run_id"), Col<&JobRow::index>("idx"),
                       Col<&JobRow::seed>("seed"), Col<&JobRow::branch_order>("branch_order"),
                       Col<&JobRow::feature_mask>("feature_mask"), Col<&JobRow::state>("state"),
                       Col<&JobRow::lease_token>("lease_token", "COALESCE(j.lease_token, '')"),
                       Col<&JobRow::lease_expires_at>("lease_expires_at", "ds_us(j.lease_expires_at)"),
                       Col<&JobRow::worker_id>("worker_id", "COALESCE(j.worker_id, '')"),
                       Col<&JobRow::attempts>("attempts"), Col<&JobRow::outcome>("outcome"),
                       Col<&JobRow::faults>("faults")})
          .Qualified("j");
  return columns;
}

const Columns<JobRow>& JobDetailColumns() {
  static const Columns<JobRow> columns =
      JobColumns() + Columns<JobRow>({Col<&JobRow::reason>("reason", "j.reason"),
                                      Col<&JobRow::updated_at>("updated_at", "ds_us(j.updated_at)")});
  return columns;
}

const Columns<LeasedJob>& LeasedJobColumns() {
  static const Columns<LeasedJob> columns =
      JobColumns().Within<&LeasedJob::job>() +
      (BudgetColumns().Within<&LeasedJob::budget>() +
       Columns<LeasedJob>({Col<&LeasedJob::spec_hash>("spec_hash"), Col<&LeasedJob::target_id>("target_id"),
                           Col<&LeasedJob::gen>("gen")}))
          .Qualified("r");
  return columns;
}

const Columns<FindingRow>& FindingColumns() {
  using F = FindingRow;
  static const Columns<F> columns(
      {Col<&F::id>("id"), Col<&F::signature>("signature"), Col<&F::kind>("kind"), Col<&F::spec_hash>("spec_hash"),
       Col<&F::target_id>("target_id"), Col<&F::reason>("reason"), Col<&F::count>("count"),
       Col<&F::first_seen>("first_seen", "ds_us(first_seen)"), Col<&F::last_seen>("last_seen", "ds_us(last_seen)"),
       Col<&F::smallest_counterexample_id>("smallest_counterexample_id", "COALESCE(smallest_counterexample_id, 0)")});
  return columns;
}

const Columns<CounterexampleRow>& CounterexampleColumns() {
  using C = CounterexampleRow;
  static const Columns<C> columns =
      Columns<C>(
          {Col<&C::id>("id"), Col<&C::finding_id>("finding_id"), Col<&C::run_id>("run_id"), Col<&C::job_id>("job_id")})
          .Qualified("c") +
      Columns<C>({Col<&C::spec_hash>("spec_hash"), Col<&C::target_id>("target_id")}).Qualified("r") +
      Columns<C>({Col<&C::seed>("seed"), Col<&C::branch_order>("branch_order"), Col<&C::feature_mask>("feature_mask")})
          .Qualified("j") +
      ReportedColumns().Within<&C::cx>() + Columns<C>({Col<&C::created_at>("created_at", "ds_us(c.created_at)")});
  return columns;
}

const Columns<CampaignRow>& CampaignColumns() {
  using C = CampaignRow;
  static const Columns<C> columns =
      Columns<C>({Col<&C::id>("id"), Col<&C::name>("name"), Col<&C::cron>("cron"), Col<&C::spec_name>("spec_name"),
                  Col<&C::paused>("paused"), Col<&C::created_at>("created_at", "ds_us(created_at)"),
                  Col<&C::last_fired_at>("last_fired_at", "ds_us(last_fired_at)"),
                  Col<&C::last_run_id>("last_run_id", "COALESCE(last_run_id, 0)"),
                  Col<&C::next_fire_at>("next_fire_at", "ds_us(next_fire_at)"), Col<&C::last_error>("last_error")}) +
      (TemplateColumns().FromJson("template") +
       BudgetColumns().FromJson("template->'budget'").Within<&RunTemplate::budget>())
          .Within<&C::tmpl>();
  return columns;
}

const Columns<WorkerInfo>& WorkerColumns() {
  using W = WorkerInfo;
  static const Columns<W> columns(
      {Col<&W::name>("name"), Col<&W::slots>("slots"), Col<&W::adapters>("adapters", "array_to_string(adapters, ',')"),
       Col<&W::labels>("labels", "array_to_string(labels, ',')"), Col<&W::version>("version")});
  return columns;
}

int PageSize(const Page& page) { return std::clamp(page.size <= 0 ? kDefaultPageSize : page.size, 1, kMaxPageSize); }

absl::StatusOr<NumberedPage> ParsePage(const Page& page) {
  int64_t v = 0;
  if (!page.after.empty() && (!absl::SimpleAtoi(page.after, &v) || v < 0))
    return absl::InvalidArgumentError(absl::StrCat("bad page token \"", page.after, "\""));
  return NumberedPage{v, PageSize(page)};
}

}  // namespace dualswarm::coord
