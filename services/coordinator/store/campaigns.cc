// Campaigns: a cron schedule and the run it submits at each fire time;
// created, paused/resumed, deleted, fired by the scheduler (one row at a
// time, FOR UPDATE SKIP LOCKED), and their runs listed with the finding
// groups each run gained or lost against the one before.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "services/coordinator/cron.h"
#include "services/coordinator/store/checks.h"
#include "services/coordinator/store/limits.h"
#include "services/coordinator/store/rows.h"
#include "services/coordinator/store/runs.h"
#include "services/coordinator/store/transaction.h"
#include "util/status_macros.h"

namespace dualswarm::coord {
namespace {

absl::StatusOr<CampaignRow> CampaignById(Sql& w, int64_t id) {
  return ReadOne(w, CampaignColumns(), absl::StrCat("no campaign ", id), "FROM campaigns WHERE id = $1", id);
}

// The newest version of spec `name`, or NOT_FOUND.
absl::StatusOr<std::string> LatestSpecHash(Sql& w, const std::string& name) {
  pqxx::result r = w.exec_params("SELECT hash FROM specs WHERE name = $1 ORDER BY seq DESC LIMIT 1", name);
  if (r.empty()) return absl::NotFoundError(absl::StrCat("no spec named \"", name, "\""));
  return Str(r[0]["hash"]);
}

// A campaign as it will be stored (cron normalised, template defaults
// filled in, its first fire time after `now` unless paused), or
// INVALID_ARGUMENT.
absl::StatusOr<CampaignRow> CheckCampaign(CampaignRow c, Micros now) {
  RETURN_IF_ERROR(CheckName("campaign", c.name));
  ASSIGN_OR_RETURN(CronSchedule cron, CronSchedule::Parse(c.cron));
  c.cron = cron.expression();
  c.next_fire_at = c.paused ? 0 : cron.Next(now);
  if (c.tmpl.spec_hash.empty() == c.spec_name.empty())
    return absl::InvalidArgumentError(
        "a campaign's template needs exactly one of spec_hash (a version) and spec_name (the "
        "newest version of that spec at each firing)");
  if (c.spec_name.size() > kMaxNameBytes)
    return absl::InvalidArgumentError(absl::StrCat("spec_name exceeds ", kMaxNameBytes, " bytes"));
  RETURN_IF_ERROR(CheckText("spec_name", c.spec_name, true));
  RETURN_IF_ERROR(ValidateTemplate(&c.tmpl));
  return c;
}

// Inserts a checked campaign; ALREADY_EXISTS for a taken name.
absl::StatusOr<int64_t> InsertCampaign(Sql& w, const CampaignRow& c) {
  const RunTemplate& t = c.tmpl;
  const JobBudget& b = t.budget;
  pqxx::result r = w.exec_params(
      "INSERT INTO campaigns (name, cron, spec_name, paused, next_fire_at, template) VALUES"
      " ($1, $2, $3, $4, ds_ts($5), jsonb_build_object("
      "   'specHash', $6::text, 'targetId', $7::text, 'jobs', $8::int, 'seed', $9::text,"
      "   'stopAtFirstFinding', $10::boolean, 'gen', $11::text, 'budget', jsonb_build_object("
      "     'steps', $12::text, 'timeBudgetMs', $13::text, 'connections', $14::int,"
      "     'maxInFlight', $15::int, 'responseTimeoutMs', $16::text, 'network', $17::text,"
      "     'maxFrontier', $18::text, 'guideCandidates', $19::int, 'exploreDepth', $20::int,"
      "     'exploreMaxStates', $21::text)))"
      " ON CONFLICT (name) DO NOTHING RETURNING id",
      c.name, c.cron, c.spec_name, c.paused, c.next_fire_at, t.spec_hash, std::to_string(t.target_id), t.jobs,
      std::to_string(t.seed), t.stop_at_first_finding, t.gen, std::to_string(b.steps), std::to_string(b.time_budget_ms),
      b.connections, b.max_in_flight, std::to_string(b.response_timeout_ms), b.network, std::to_string(b.max_frontier),
      b.guide_candidates, b.explore_depth, std::to_string(b.explore_max_states));
  if (r.empty()) return absl::AlreadyExistsError(absl::StrCat("a campaign named \"", c.name, "\" exists"));
  return I64(r[0]["id"]);
}

// Submits the run of a due campaign `c` in the caller's transaction: its
// id, or why none could be submitted.
absl::StatusOr<int64_t> SubmitCampaignRun(Sql& w, const CampaignRow& c) {
  RunTemplate t = c.tmpl;
  if (!c.spec_name.empty()) {
    ASSIGN_OR_RETURN(t.spec_hash, LatestSpecHash(w, c.spec_name));
  }
  RETURN_IF_ERROR(ValidateTemplate(&t));
  if (t.seed == 0) t.seed = RandomSeed();
  // InsertRun checks the spec and target before writing anything.
  ASSIGN_OR_RETURN(RunRow run, InsertRun(w, t, absl::StrCat("campaign:", c.name), c.id));
  return run.id;
}

// The runs of one page of ListCampaignRuns, each with its predecessor: the
// next one on the page, and for the oldest, the campaign's run before it.
Listing<CampaignRunRow> ReadCampaignRuns(Sql& w, int64_t campaign_id, int64_t before, int size) {
  pqxx::result r = w.exec_params(
      RunColumns().Select(absl::StrCat(kRunFrom,
                                       "WHERE r.campaign_id = $1 AND ($2::bigint = 0 OR r.id < $2::bigint)"
                                       " ORDER BY r.id DESC LIMIT $3")),
      campaign_id, before, size + 1);
  auto read = [](const pqxx::row& row) {
    CampaignRunRow item;
    item.run = RunColumns().Read(row);
    return item;
  };
  Listing<CampaignRunRow> out = ReadPage<CampaignRunRow>(
      r, size, read, [](const CampaignRunRow& last, const pqxx::row&) { return std::to_string(last.run.id); });
  if (out.items.empty()) return out;
  for (size_t i = 0; i + 1 < out.items.size(); ++i) out.items[i].previous_run_id = out.items[i + 1].run.id;
  out.items.back().previous_run_id =
      I64(w.exec_params1("SELECT COALESCE(max(id), 0) AS id FROM runs WHERE campaign_id = $1 AND id < $2", campaign_id,
                         out.items.back().run.id)["id"]);
  return out;
}

// Fills in each run's finding groups, new and gone ones. Groups are
// identified across spec versions by kind and signature.
void CompareFindingGroups(Sql& w, std::vector<CampaignRunRow>& items) {
  std::vector<int64_t> ids;
  for (const auto& item : items) {
    ids.push_back(item.run.id);
    if (item.previous_run_id != 0) ids.push_back(item.previous_run_id);
  }
  std::map<int64_t, std::map<std::string, int64_t>> groups;  // run -> key -> finding id
  pqxx::result f = w.exec_params(
      "SELECT DISTINCT c.run_id AS run_id, f.kind || E'\\n' || f.signature AS key, f.id AS id"
      " FROM counterexamples c JOIN findings f ON f.id = c.finding_id"
      " WHERE c.run_id = ANY ($1::bigint[]) ORDER BY 1, 3",
      Int64Array(ids));
  for (const auto& row : f) groups[I64(row["run_id"])].emplace(Str(row["key"]), I64(row["id"]));
  for (CampaignRunRow& item : items) {
    const auto& now_groups = groups[item.run.id];
    const auto& prev_groups = groups[item.previous_run_id];  // empty for 0
    for (const auto& [key, id] : now_groups) {
      item.finding_ids.push_back(id);
      if (prev_groups.count(key) == 0) item.new_finding_ids.push_back(id);
    }
    if (item.previous_run_id != 0)
      for (const auto& [key, id] : prev_groups)
        if (now_groups.count(key) == 0) item.gone_finding_ids.push_back(id);
    std::sort(item.finding_ids.begin(), item.finding_ids.end());
    std::sort(item.new_finding_ids.begin(), item.new_finding_ids.end());
    std::sort(item.gone_finding_ids.begin(), item.gone_finding_ids.end());
  }
}

}  // namespace

absl::StatusOr<CampaignRow> Store::CreateCampaign(const CampaignRow& in, Micros now) {
  ASSIGN_OR_RETURN(CampaignRow c, CheckCampaign(in, now));
  return Run<CampaignRow>("creating a campaign", [&](Sql& w) -> absl::StatusOr<CampaignRow> {
    std::string hash = c.tmpl.spec_hash;
    if (!c.spec_name.empty()) {
      ASSIGN_OR_RETURN(hash, LatestSpecHash(w, c.spec_name));
    }
    // (a "latest" campaign is checked against today's newest version; each
    // firing checks its own version again in InsertRun)
    RETURN_IF_ERROR(CheckGen(w, hash, c.tmpl.gen));
    if (c.tmpl.budget.explore_depth > 0) {
      ASSIGN_OR_RETURN(c.tmpl.target_id, ExploreTargetFor(w, c.tmpl.target_id));
      RETURN_IF_ERROR(CheckExplorable(w, hash));
    } else {
      RETURN_IF_ERROR(CheckTargetExists(w, c.tmpl.target_id));
      RETURN_IF_ERROR(CheckOriginRole(w, hash, c.tmpl.target_id));
    }
    ASSIGN_OR_RETURN(int64_t id, InsertCampaign(w, c));
    return CampaignById(w, id);
  });
}

absl::StatusOr<CampaignRow> Store::GetCampaign(int64_t id) {
  return Run<CampaignRow>("reading a campaign", [&](Sql& w) { return CampaignById(w, id); });
}

absl::StatusOr<CampaignRow> Store::GetCampaignByName(const std::string& name) {
  RETURN_IF_ERROR(CheckText("name", name, true));
  return ReadRow("reading a campaign", CampaignColumns(), absl::StrCat("no campaign named \"", name, "\""),
                 "FROM campaigns WHERE name = $1", name);
}

absl::StatusOr<Listing<CampaignRow>> Store::ListCampaigns(const Page& page) {
  int size = PageSize(page);
  return Run<Listing<CampaignRow>>("listing campaigns", [&](Sql& w) -> absl::StatusOr<Listing<CampaignRow>> {
    pqxx::result r = w.exec_params(CampaignColumns().Select("FROM campaigns WHERE name > $1 ORDER BY name LIMIT $2"),
                                   page.after, size + 1);
    return ReadPage<CampaignRow>(r, size, CampaignColumns().reader(),
                                 [](const CampaignRow& last, const pqxx::row&) { return last.name; });
  });
}

absl::StatusOr<CampaignRow> Store::SetCampaignPaused(int64_t id, bool paused, Micros now) {
  return Run<CampaignRow>(
      paused ? "pausing a campaign" : "resuming a campaign", [&](Sql& w) -> absl::StatusOr<CampaignRow> {
        pqxx::result r = w.exec_params("SELECT cron, paused FROM campaigns WHERE id = $1 FOR UPDATE", id);
        if (r.empty()) return absl::NotFoundError(absl::StrCat("no campaign ", id));
        bool was_paused = r[0]["paused"].as<bool>();
        if (paused && !was_paused) {
          w.exec_params0("UPDATE campaigns SET paused = true, next_fire_at = NULL WHERE id = $1", id);
        } else if (!paused && was_paused) {
          ASSIGN_OR_RETURN(CronSchedule cron, CronSchedule::Parse(Str(r[0]["cron"])));
          w.exec_params0("UPDATE campaigns SET paused = false, next_fire_at = ds_ts($2) WHERE id = $1", id,
                         cron.Next(now));
        }
        return CampaignById(w, id);
      });
}

absl::Status Store::DeleteCampaign(int64_t id) {
  return Run<int>("deleting a campaign",
                  [&](Sql& w) -> absl::StatusOr<int> {
                    // Waits for a firing in progress (its row lock); the fired runs
                    // stay, their campaign_id set to NULL by the foreign key.
                    if (w.exec_params("DELETE FROM campaigns WHERE id = $1 RETURNING id", id).empty())
                      return absl::NotFoundError(absl::StrCat("no campaign ", id));
                    return 0;
                  })
      .status();
}

absl::StatusOr<std::optional<FiredCampaign>> Store::FireDueCampaign(Micros now) {
  return Run<std::optional<FiredCampaign>>(
      "firing a campaign", [&](Sql& w) -> absl::StatusOr<std::optional<FiredCampaign>> {
        // The lock is taken on the newest row version and the WHERE clause
        // re-checked on it, so a row another scheduler fired (and moved past
        // now) meanwhile is not due any more; one it is firing is skipped.
        pqxx::result r =
            w.exec_params(CampaignColumns().Select("FROM campaigns WHERE NOT paused AND next_fire_at <= ds_ts($1)"
                                                   " ORDER BY next_fire_at, id LIMIT 1 FOR UPDATE SKIP LOCKED"),
                          now);
        if (r.empty()) return std::optional<FiredCampaign>();
        CampaignRow c = CampaignColumns().Read(r[0]);
        FiredCampaign f;
        f.campaign_id = c.id;
        f.name = c.name;
        f.due_at = c.next_fire_at;
        auto cron = CronSchedule::Parse(c.cron);
        f.next_fire_at = cron.ok() ? cron->Next(now) : 0;
        absl::StatusOr<int64_t> run = cron.ok() ? SubmitCampaignRun(w, c) : absl::StatusOr<int64_t>(cron.status());
        if (run.ok())
          f.run_id = *run;
        else
          f.error = std::string(run.status().message());
        w.exec_params0(
            "UPDATE campaigns SET last_fired_at = ds_ts($2), next_fire_at = ds_ts($3),"
            " last_run_id = COALESCE(NULLIF($4::bigint, 0), last_run_id), last_error = $5"
            " WHERE id = $1",
            c.id, now, f.next_fire_at, f.run_id, f.error);
        return std::optional<FiredCampaign>(f);
      });
}

absl::StatusOr<Listing<CampaignRunRow>> Store::ListCampaignRuns(int64_t campaign_id, const Page& page) {
  ASSIGN_OR_RETURN(NumberedPage paging, ParsePage(page));
  return Run<Listing<CampaignRunRow>>(
      "listing a campaign's runs", [&](Sql& w) -> absl::StatusOr<Listing<CampaignRunRow>> {
        if (w.exec_params("SELECT 1 FROM campaigns WHERE id = $1", campaign_id).empty())
          return absl::NotFoundError(absl::StrCat("no campaign ", campaign_id));
        Listing<CampaignRunRow> out = ReadCampaignRuns(w, campaign_id, paging.after, paging.size);
        if (!out.items.empty()) CompareFindingGroups(w, out.items);
        return out;
      });
}

}  // namespace dualswarm::coord
