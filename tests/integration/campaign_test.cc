// Campaigns on a real PostgreSQL (tests/integration/pg_fixture.h): the
// Store's campaign calls and the CampaignScheduler driven by Tick(now) with
// chosen times — no sleeps, no wall clock:
//   * create validates (cron errors name the field, spec/target exist,
//     exactly one of spec hash and spec name, unique names) and schedules
//     the first fire time after `now`;
//   * a campaign fires once at its due minute, not before, not twice;
//   * two schedulers on two Store instances (two replicas) ticking at the
//     same moment from two threads fire each due campaign exactly once;
//   * after a gap of many missed fire times it fires once, then from now on;
//   * paused campaigns do not fire; resume fires from the next fire time
//     after the resume, without making up the missed ones;
//   * delete keeps the runs it fired;
//   * "latest" (spec_name) campaigns test the newest spec version;
//   * the regression view: findings new/gone across three fired runs whose
//     jobs are completed through Store::CompleteJob (matched by signature,
//     also across spec versions).
#include <algorithm>
#include <atomic>
#include <latch>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "services/coordinator/scheduler.h"
#include "tests/integration/pg_fixture.h"

namespace dualswarm::coord {
namespace {

using testing::PgTest;

Micros At(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
  return absl::ToUnixMicros(absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, s), absl::UTCTimeZone()));
}

constexpr Micros kMinute = 60'000'000;

class CampaignTest : public PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (HasFatalFailure()) return;
    auto spec = store_->PutSpec("kv", "kv.dspec", "spec kv; // v1", 0, nullptr);
    ASSERT_TRUE(spec.ok()) << spec.status();
    spec_hash_ = spec->hash;
    ASSERT_NE(KvTarget(), 0);
  }

  CampaignRow Campaign(const std::string& name, const std::string& cron, int jobs = 1) {
    CampaignRow c;
    c.name = name;
    c.cron = cron;
    c.tmpl.spec_hash = spec_hash_;
    c.tmpl.target_id = target_id_;
    c.tmpl.jobs = jobs;
    return c;
  }

  CampaignRow Create(const CampaignRow& c, Micros now) {
    auto row = store_->CreateCampaign(c, now);
    EXPECT_TRUE(row.ok()) << row.status();
    return row.ok() ? *row : CampaignRow{};
  }

  std::vector<FiredCampaign> Tick(CampaignScheduler& s, Micros now) {
    auto fired = s.Tick(now);
    EXPECT_TRUE(fired.ok()) << fired.status();
    return fired.ok() ? *fired : std::vector<FiredCampaign>{};
  }

  // The runs a campaign fired, newest first.
  std::vector<CampaignRunRow> Runs(int64_t campaign_id) {
    Page p;
    p.size = 500;
    auto list = store_->ListCampaignRuns(campaign_id, p);
    EXPECT_TRUE(list.ok()) << list.status();
    return list.ok() ? list->items : std::vector<CampaignRunRow>{};
  }

  // Leases every queued job and completes job i as failed with signature
  // sigs[i] (passed when sigs[i] is empty).
  void CompleteRun(int64_t run_id, const std::vector<std::string>& sigs) {
    LeaseRequest req;
    req.max_jobs = 256;
    req.lease_ms = 60000;
    auto jobs = store_->LeaseJobs(req);
    ASSERT_TRUE(jobs.ok()) << jobs.status();
    ASSERT_EQ(jobs->size(), sigs.size());
    for (const LeasedJob& lj : *jobs) {
      ASSERT_EQ(lj.job.run_id, run_id);
      Completion c;
      c.job_id = lj.job.id;
      c.lease_token = lj.job.lease_token;
      const std::string& sig = sigs[lj.job.index];
      c.outcome = sig.empty() ? v1::JOB_OUTCOME_PASSED : v1::JOB_OUTCOME_FAILED;
      if (!sig.empty()) {
        NewCounterexample cx;
        cx.kind = v1::VERDICT_KIND_SAFETY;
        cx.reason = "bug " + sig;
        cx.signature = sig;
        cx.size = 3;
        c.counterexample = cx;
      }
      auto done = store_->CompleteJob(c);
      ASSERT_TRUE(done.ok()) << done.status();
    }
    auto run = store_->GetRun(run_id);
    ASSERT_TRUE(run.ok());
    EXPECT_TRUE(run->state == v1::RUN_STATE_PASSED || run->state == v1::RUN_STATE_FAILED) << run->state;
  }

  // Finding ids -> their signatures.
  std::set<std::string> Sigs(const std::vector<int64_t>& ids) {
    std::set<std::string> out;
    for (int64_t id : ids) {
      auto f = store_->GetFinding(id);
      EXPECT_TRUE(f.ok()) << f.status();
      if (f.ok()) out.insert(f->signature);
    }
    return out;
  }

  std::string spec_hash_;
};

TEST_F(CampaignTest, CreateValidatesAndSchedulesTheFirstFireTime) {
  Micros now = At(2030, 1, 1, 2, 58, 30);
  CampaignRow c = Create(Campaign("nightly", "0 3 * * *"), now);
  EXPECT_GT(c.id, 0);
  EXPECT_EQ(c.cron, "0 3 * * *");
  EXPECT_EQ(c.next_fire_at, At(2030, 1, 1, 3, 0));
  EXPECT_EQ(c.last_fired_at, 0);
  EXPECT_FALSE(c.paused);
  EXPECT_EQ(c.tmpl.spec_hash, spec_hash_);
  EXPECT_EQ(c.tmpl.budget.steps, 1000u);  // defaults filled in
  EXPECT_EQ(c.tmpl.gen, "request");
  EXPECT_EQ(c.tmpl.seed, 0u);  // random per run

  auto expect_error = [&](CampaignRow bad, absl::StatusCode code, std::vector<std::string> want) {
    auto st = store_->CreateCampaign(bad, now).status();
    EXPECT_EQ(st.code(), code) << bad.name << ": " << st;
    for (const auto& w : want) EXPECT_TRUE(absl::StrContains(st.message(), w)) << w << " in " << st;
  };
  expect_error(Campaign("c1", "0 25 * * *"), absl::StatusCode::kInvalidArgument,
               {"cron \"0 25 * * *\"", "hour \"25\"", "25 is out of range 0-23"});
  expect_error(Campaign("c2", "0 3 * *"), absl::StatusCode::kInvalidArgument, {"want 5 fields"});
  expect_error(Campaign("c3", "0 0 31 2 *"), absl::StatusCode::kInvalidArgument, {"never occurs"});
  expect_error(Campaign("bad name!", "0 3 * * *"), absl::StatusCode::kInvalidArgument, {"campaign name"});
  CampaignRow both = Campaign("c4", "0 3 * * *");
  both.spec_name = "kv";
  expect_error(both, absl::StatusCode::kInvalidArgument, {"exactly one of spec_hash"});
  CampaignRow neither = Campaign("c5", "0 3 * * *");
  neither.tmpl.spec_hash.clear();
  expect_error(neither, absl::StatusCode::kInvalidArgument, {"exactly one of spec_hash"});
  CampaignRow jobs = Campaign("c6", "0 3 * * *", 0);
  expect_error(jobs, absl::StatusCode::kInvalidArgument, {"jobs must be between 1 and"});
  CampaignRow unknown_spec = Campaign("c7", "0 3 * * *");
  unknown_spec.tmpl.spec_hash = std::string(64, 'a');
  expect_error(unknown_spec, absl::StatusCode::kNotFound, {"no spec version"});
  CampaignRow unknown_name = Campaign("c8", "0 3 * * *");
  unknown_name.tmpl.spec_hash.clear();
  unknown_name.spec_name = "nope";
  expect_error(unknown_name, absl::StatusCode::kNotFound, {"no spec named \"nope\""});
  CampaignRow unknown_target = Campaign("c9", "0 3 * * *");
  unknown_target.tmpl.target_id = 987654;
  expect_error(unknown_target, absl::StatusCode::kNotFound, {"no target 987654"});
  expect_error(Campaign("nightly", "0 4 * * *"), absl::StatusCode::kAlreadyExists, {"nightly"});

  // Nothing of the above was stored; listing is by name and pages.
  Create(Campaign("alpha", "* * * * *"), now);
  Create(Campaign("zulu", "* * * * *"), now);
  Page p;
  p.size = 2;
  auto page1 = store_->ListCampaigns(p);
  ASSERT_TRUE(page1.ok()) << page1.status();
  ASSERT_EQ(page1->items.size(), 2u);
  EXPECT_EQ(page1->items[0].name, "alpha");
  EXPECT_EQ(page1->items[1].name, "nightly");
  p.after = page1->next;
  auto page2 = store_->ListCampaigns(p);
  ASSERT_TRUE(page2.ok());
  ASSERT_EQ(page2->items.size(), 1u);
  EXPECT_EQ(page2->items[0].name, "zulu");
  EXPECT_EQ(page2->next, "");
  auto by_name = store_->GetCampaignByName("nightly");
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(by_name->id, c.id);
  EXPECT_EQ(store_->GetCampaign(987654).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(CampaignTest, FiresOnceAtTheDueMinute) {
  CampaignRow c = Create(Campaign("nightly", "0 3 * * *", 3), At(2030, 1, 1, 2, 0));
  CampaignScheduler s(store_.get(), {});
  EXPECT_TRUE(Tick(s, At(2030, 1, 1, 2, 59, 59)).empty()) << "fired early";
  std::vector<FiredCampaign> fired = Tick(s, At(2030, 1, 1, 3, 0, 0));
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0].campaign_id, c.id);
  EXPECT_EQ(fired[0].due_at, At(2030, 1, 1, 3, 0));
  EXPECT_EQ(fired[0].next_fire_at, At(2030, 1, 2, 3, 0));
  EXPECT_EQ(fired[0].error, "");
  ASSERT_GT(fired[0].run_id, 0);
  // The run is real: the template's jobs, the campaign recorded.
  auto run = store_->GetRun(fired[0].run_id);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->campaign_id, c.id);
  EXPECT_EQ(run->submitted_by, "campaign:nightly");
  EXPECT_EQ(run->counts.total, 3);
  EXPECT_EQ(run->tmpl.spec_hash, spec_hash_);
  EXPECT_NE(run->tmpl.seed, 0u);
  // Later ticks within the same day do not fire it again.
  for (Micros t : {At(2030, 1, 1, 3, 0, 0), At(2030, 1, 1, 3, 0, 59), At(2030, 1, 1, 3, 1), At(2030, 1, 2, 2, 59)})
    EXPECT_TRUE(Tick(s, t).empty());
  auto after = store_->GetCampaign(c.id);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->last_fired_at, At(2030, 1, 1, 3, 0));
  EXPECT_EQ(after->last_run_id, fired[0].run_id);
  EXPECT_EQ(after->next_fire_at, At(2030, 1, 2, 3, 0));
  // The next day's firing is a second run.
  fired = Tick(s, At(2030, 1, 2, 3, 0, 10));
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_NE(fired[0].run_id, after->last_run_id);
  EXPECT_EQ(Runs(c.id).size(), 2u);
}

TEST_F(CampaignTest, TwoReplicasTickingAtOnceFireEachCampaignOnce) {
  // A second Store on the same database is a second coordinator replica.
  auto other = Store::Open(StoreOptions());
  ASSERT_TRUE(other.ok()) << other.status();
  constexpr int kCampaigns = 6, kRounds = 15;
  Micros t0 = At(2030, 6, 1, 12, 0, 30);
  std::vector<int64_t> ids;
  for (int i = 0; i < kCampaigns; ++i) ids.push_back(Create(Campaign(absl::StrCat("c", i), "* * * * *"), t0).id);
  CampaignScheduler a(store_.get(), {}), b(other->get(), {});
  std::map<int64_t, int> fired_per_campaign;
  std::set<int64_t> run_ids;
  for (int round = 1; round <= kRounds; ++round) {
    Micros now = t0 + round * kMinute;
    std::latch start(2);
    std::vector<FiredCampaign> fa, fb;
    absl::Status sa, sb;
    auto tick = [&](CampaignScheduler* s, std::vector<FiredCampaign>* out, absl::Status* st) {
      start.arrive_and_wait();
      auto r = s->Tick(now);
      if (r.ok())
        *out = *r;
      else
        *st = r.status();
    };
    std::thread ta(tick, &a, &fa, &sa), tb(tick, &b, &fb, &sb);
    ta.join();
    tb.join();
    ASSERT_TRUE(sa.ok()) << sa;
    ASSERT_TRUE(sb.ok()) << sb;
    EXPECT_EQ(fa.size() + fb.size(), static_cast<size_t>(kCampaigns)) << "round " << round;
    std::set<int64_t> this_round;
    for (const auto* v : {&fa, &fb})
      for (const FiredCampaign& f : *v) {
        EXPECT_TRUE(this_round.insert(f.campaign_id).second) << "campaign " << f.campaign_id << " fired twice";
        EXPECT_TRUE(run_ids.insert(f.run_id).second);
        ++fired_per_campaign[f.campaign_id];
      }
  }
  for (int64_t id : ids) {
    EXPECT_EQ(fired_per_campaign[id], kRounds) << "campaign " << id;
    EXPECT_EQ(Runs(id).size(), static_cast<size_t>(kRounds)) << "campaign " << id;
  }
}

// A campaign of explore runs names no target: it gets the built-in one, and
// each firing submits an explore run with its depth and state bound.
TEST_F(CampaignTest, AnExploreCampaignFiresExploreRunsAgainstTheBuiltInTarget) {
  CampaignRow c = Campaign("explore-nightly", "0 3 * * *", 2);
  c.tmpl.target_id = 0;
  c.tmpl.budget.explore_depth = 5;
  c = Create(c, At(2030, 1, 1, 2, 0));
  ASSERT_GT(c.tmpl.target_id, 0);
  EXPECT_NE(c.tmpl.target_id, target_id_);
  EXPECT_EQ(c.tmpl.budget.explore_max_states, 200000u) << "the default filled in";
  CampaignScheduler s(store_.get(), {});
  std::vector<FiredCampaign> fired = Tick(s, At(2030, 1, 1, 3, 0, 0));
  ASSERT_EQ(fired.size(), 1u);
  ASSERT_GT(fired[0].run_id, 0) << fired[0].error;
  auto run = store_->GetRun(fired[0].run_id);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->tmpl.target_id, c.tmpl.target_id);
  EXPECT_EQ(run->tmpl.budget.explore_depth, 5);
  EXPECT_EQ(run->tmpl.budget.time_budget_ms, 60000) << "an explore job's default time";
  // Naming a real target for an explore campaign is refused.
  CampaignRow named = Campaign("explore-named", "0 3 * * *");
  named.tmpl.budget.explore_depth = 5;
  auto refused = store_->CreateCampaign(named, At(2030, 1, 1, 2, 0));
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
}

TEST_F(CampaignTest, CatchesUpOnceAfterDowntime) {
  CampaignRow c = Create(Campaign("hourly", "0 * * * *"), At(2030, 3, 1, 0, 30));
  CampaignScheduler s(store_.get(), {});
  // The coordinators were down from 00:30 to 10:05: ten fire times missed.
  std::vector<FiredCampaign> fired = Tick(s, At(2030, 3, 1, 10, 5));
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0].due_at, At(2030, 3, 1, 1, 0));         // the first missed time
  EXPECT_EQ(fired[0].next_fire_at, At(2030, 3, 1, 11, 0));  // from now on, not 02:00
  EXPECT_TRUE(Tick(s, At(2030, 3, 1, 10, 6)).empty());
  EXPECT_TRUE(Tick(s, At(2030, 3, 1, 10, 59, 59)).empty());
  EXPECT_EQ(Tick(s, At(2030, 3, 1, 11, 0)).size(), 1u);
  EXPECT_EQ(Runs(c.id).size(), 2u);
}

TEST_F(CampaignTest, PausedDoesNotFireAndResumeStartsAtTheNextFireTime) {
  CampaignRow c = Create(Campaign("daily", "30 6 * * *"), At(2030, 5, 1, 0, 0));
  CampaignScheduler s(store_.get(), {});
  auto paused = store_->SetCampaignPaused(c.id, true, At(2030, 5, 1, 1, 0));
  ASSERT_TRUE(paused.ok()) << paused.status();
  EXPECT_TRUE(paused->paused);
  EXPECT_EQ(paused->next_fire_at, 0);
  // Pausing twice changes nothing.
  ASSERT_TRUE(store_->SetCampaignPaused(c.id, true, At(2030, 5, 1, 2, 0)).ok());
  for (int day = 1; day <= 4; ++day) EXPECT_TRUE(Tick(s, At(2030, 5, day, 6, 30)).empty()) << "day " << day;
  // Resumed on May 4 at 07:00: the next time is May 5 06:30; the four
  // missed times are not made up.
  auto resumed = store_->SetCampaignPaused(c.id, false, At(2030, 5, 4, 7, 0));
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_FALSE(resumed->paused);
  EXPECT_EQ(resumed->next_fire_at, At(2030, 5, 5, 6, 30));
  EXPECT_TRUE(Tick(s, At(2030, 5, 4, 7, 0)).empty());
  EXPECT_TRUE(Tick(s, At(2030, 5, 5, 6, 29)).empty());
  // Resuming an active campaign keeps its schedule.
  auto again = store_->SetCampaignPaused(c.id, false, At(2030, 5, 5, 6, 29, 30));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->next_fire_at, At(2030, 5, 5, 6, 30));
  EXPECT_EQ(Tick(s, At(2030, 5, 5, 6, 30)).size(), 1u);
  EXPECT_EQ(Runs(c.id).size(), 1u);
  // A campaign created paused does not fire either.
  CampaignRow p = Campaign("created-paused", "* * * * *");
  p.paused = true;
  CampaignRow made = Create(p, At(2030, 5, 5, 7, 0));
  EXPECT_TRUE(made.paused);
  EXPECT_EQ(made.next_fire_at, 0);
  EXPECT_TRUE(Tick(s, At(2030, 5, 5, 8, 0)).empty());
  EXPECT_EQ(store_->SetCampaignPaused(987654, true, 0).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(CampaignTest, DeleteKeepsPastRuns) {
  CampaignRow c = Create(Campaign("gone", "*/5 * * * *"), At(2030, 7, 1, 0, 1));
  CampaignScheduler s(store_.get(), {});
  std::vector<int64_t> runs;
  for (Micros t : {At(2030, 7, 1, 0, 5), At(2030, 7, 1, 0, 10)}) {
    auto fired = Tick(s, t);
    ASSERT_EQ(fired.size(), 1u);
    runs.push_back(fired[0].run_id);
  }
  auto st = store_->DeleteCampaign(c.id);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(store_->GetCampaign(c.id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->ListCampaignRuns(c.id, Page{}).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->DeleteCampaign(c.id).code(), absl::StatusCode::kNotFound);
  for (int64_t id : runs) {
    auto run = store_->GetRun(id);
    ASSERT_TRUE(run.ok()) << "run " << id << ": " << run.status();
    EXPECT_EQ(run->campaign_id, 0);
    EXPECT_EQ(run->counts.total, 1);
  }
  EXPECT_TRUE(Tick(s, At(2030, 7, 1, 0, 15)).empty());
  // The name is free again.
  Create(Campaign("gone", "*/5 * * * *"), At(2030, 7, 1, 0, 16));
}

TEST_F(CampaignTest, LatestSpecFiresTheNewestVersion) {
  CampaignRow c = Campaign("latest", "0 * * * *");
  c.tmpl.spec_hash.clear();
  c.spec_name = "kv";
  CampaignRow made = Create(c, At(2030, 8, 1, 0, 0));
  EXPECT_EQ(made.spec_name, "kv");
  EXPECT_EQ(made.tmpl.spec_hash, "");
  CampaignScheduler s(store_.get(), {});
  auto fired = Tick(s, At(2030, 8, 1, 1, 0));
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(store_->GetRun(fired[0].run_id)->tmpl.spec_hash, spec_hash_);
  auto v2 = store_->PutSpec("kv", "kv.dspec", "spec kv; // v2", 0, nullptr);
  ASSERT_TRUE(v2.ok());
  fired = Tick(s, At(2030, 8, 1, 2, 0));
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(store_->GetRun(fired[0].run_id)->tmpl.spec_hash, v2->hash);
}

TEST_F(CampaignTest, NewAndGoneFindingsAcrossThreeRuns) {
  // "latest", so run 3 tests a new spec version: findings are new spec
  // version's groups but match by signature.
  CampaignRow c = Campaign("regress", "0 3 * * *", 3);
  c.tmpl.spec_hash.clear();
  c.spec_name = "kv";
  c = Create(c, At(2030, 9, 1));
  CampaignScheduler s(store_.get(), {});
  auto fire = [&](int day) {
    auto fired = Tick(s, At(2030, 9, day, 3, 0));
    EXPECT_EQ(fired.size(), 1u);
    return fired.empty() ? int64_t{0} : fired[0].run_id;
  };
  int64_t r1 = fire(1);
  ASSERT_GT(r1, 0);
  CompleteRun(r1, {"A", "B", ""});
  ASSERT_FALSE(HasFatalFailure());
  int64_t r2 = fire(2);
  ASSERT_GT(r2, 0);
  CompleteRun(r2, {"B", "C", "C"});
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_TRUE(store_->PutSpec("kv", "kv.dspec", "spec kv; // v2", 0, nullptr).ok());
  int64_t r3 = fire(3);
  ASSERT_GT(r3, 0);
  ASSERT_NE(store_->GetRun(r3)->tmpl.spec_hash, spec_hash_);
  CompleteRun(r3, {"", "C", ""});
  ASSERT_FALSE(HasFatalFailure());

  std::vector<CampaignRunRow> runs = Runs(c.id);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].run.id, r3);  // newest first
  EXPECT_EQ(runs[1].run.id, r2);
  EXPECT_EQ(runs[2].run.id, r1);
  using S = std::set<std::string>;
  // Run 1: the campaign's first run; everything is new.
  EXPECT_EQ(runs[2].previous_run_id, 0);
  EXPECT_EQ(Sigs(runs[2].finding_ids), (S{"A", "B"}));
  EXPECT_EQ(Sigs(runs[2].new_finding_ids), (S{"A", "B"}));
  EXPECT_TRUE(runs[2].gone_finding_ids.empty());
  // Run 2: C appeared, A disappeared, B stayed.
  EXPECT_EQ(runs[1].previous_run_id, r1);
  EXPECT_EQ(Sigs(runs[1].finding_ids), (S{"B", "C"}));
  EXPECT_EQ(Sigs(runs[1].new_finding_ids), (S{"C"}));
  EXPECT_EQ(Sigs(runs[1].gone_finding_ids), (S{"A"}));
  // Run 3 (new spec version: C is another finding group, same signature):
  // nothing new, B gone.
  EXPECT_EQ(runs[0].previous_run_id, r2);
  EXPECT_EQ(Sigs(runs[0].finding_ids), (S{"C"}));
  EXPECT_TRUE(runs[0].new_finding_ids.empty()) << runs[0].new_finding_ids.size();
  EXPECT_EQ(Sigs(runs[0].gone_finding_ids), (S{"B"}));
  EXPECT_NE(runs[0].finding_ids, runs[1].new_finding_ids) << "C of v2 is its own finding group";

  // Paged one run at a time, each page still compares with the right run.
  Page p;
  p.size = 1;
  std::vector<int64_t> seen;
  for (int i = 0; i < 5; ++i) {
    auto page = store_->ListCampaignRuns(c.id, p);
    ASSERT_TRUE(page.ok()) << page.status();
    for (const auto& r : page->items) {
      seen.push_back(r.run.id);
      if (r.run.id == r2) {
        EXPECT_EQ(r.previous_run_id, r1);
        EXPECT_EQ(Sigs(r.gone_finding_ids), (S{"A"}));
      }
    }
    if (page->next.empty()) break;
    p.after = page->next;
  }
  EXPECT_EQ(seen, (std::vector<int64_t>{r3, r2, r1}));
}

}  // namespace
}  // namespace dualswarm::coord
