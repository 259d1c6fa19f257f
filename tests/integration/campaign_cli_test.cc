// `dualswarm campaign ...` end to end: the real dualswarm-coordinator (auth
// on) on the test's PostgreSQL (pg_fixture.h) and the real CLI. create,
// list, show, pause, resume and delete by name and id, exit codes and
// messages for a bad cron (INVALID_ARGUMENT naming the field), an unknown
// campaign and a worker token. To show a history without waiting for the
// wall clock, the test fires the campaign itself as a second "replica": a
// CampaignScheduler on its own Store, ticked at the campaign's next fire
// time; the jobs are completed through the Store, and `campaign show`
// prints the runs with their new and gone finding groups.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "services/coordinator/scheduler.h"
#include "tests/common/processes.h"
#include "tests/integration/pg_fixture.h"

namespace dualswarm::coord {
namespace {

using dualswarm::testing::CommandResult;
using dualswarm::testing::CoordinatorProcess;
using dualswarm::testing::RunCommand;

const std::string kSrc = DUALSWARM_SOURCE_DIR;
const std::string kCli = DUALSWARM_CLI;

class CampaignCliTest : public testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (HasFatalFailure()) return;
    coordinator_ = std::make_unique<CoordinatorProcess>(
        CoordinatorProcess::Options{DUALSWARM_COORDINATOR, tmp_, pg_->ConnectionString(), {"--metrics-listen", ""}, 0});
    ASSERT_EQ(coordinator_->Start(), "");
    auto admin = store_->CreateToken("admin", "admin-test");
    auto submitter = store_->CreateToken("submitter", "alice");
    auto worker = store_->CreateToken("worker", "w");
    ASSERT_TRUE(admin.ok() && submitter.ok() && worker.ok());
    admin_ = *admin;
    submitter_ = *submitter;
    worker_ = *worker;
  }

  void TearDown() override {
    coordinator_.reset();
    PgTest::TearDown();
  }

  // The CLI as `token` against the coordinator.
  CommandResult Cli(std::vector<std::string> args, const std::string& token) {
    args.insert(args.begin(), kCli);
    return RunCommand(args, {{"DUALSWARM_ADDR", coordinator_->address()}, {"DUALSWARM_TOKEN", token}});
  }

  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::string admin_, submitter_, worker_;
};

// Leases the run's jobs and completes job i as failed with signature
// sigs[i], or passed for "".
void CompleteRun(Store* store, int64_t run_id, const std::vector<std::string>& sigs) {
  LeaseRequest req;
  req.max_jobs = 256;
  req.lease_ms = 60000;
  auto jobs = store->LeaseJobs(req);
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
      c.counterexample = cx;
    }
    ASSERT_TRUE(store->CompleteJob(c).ok());
  }
}

TEST_F(CampaignCliTest, CreateListShowPauseResumeDelete) {
  ASSERT_EQ(Cli({"spec", "push", kSrc + "/specs/kv.dspec"}, submitter_).exit_code, 0);
  CommandResult r = Cli({"target", "add", "kv", "--adapter", "jsonl", "--address", "127.0.0.1:9"}, admin_);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // A bad cron is INVALID_ARGUMENT (exit 2) naming the field and value.
  r = Cli(
      {"campaign", "create", "nightly", "--cron", "0 25 * * *", "--spec-name", "kv", "--target", "kv", "--jobs", "2"},
      submitter_);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "INVALID_ARGUMENT")) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "hour \"25\": 25 is out of range 0-23")) << r.err;
  r = Cli({"campaign", "create", "nightly", "--cron", "0 3 * *", "--spec-name", "kv", "--target", "kv", "--jobs", "2"},
          submitter_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "want 5 fields")) << r.err;
  // Usage errors before any call.
  r = Cli({"campaign", "create", "nightly", "--cron", "0 3 * * *", "--target", "kv", "--jobs", "2"}, submitter_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "exactly one of --spec HASH or --spec-name NAME")) << r.err;
  r = Cli({"campaign", "create", "--help"}, submitter_);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r.out, "--cron EXPR")) << r.out;

  // Create ("latest" of spec kv), nightly at 03:00 UTC.
  r = Cli(
      {"campaign", "create", "nightly", "--cron", "0 3 * * *", "--spec-name", "kv", "--target", "kv", "--jobs", "3"},
      submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out,
                                "campaign 1 \"nightly\" created (active): \"0 3 * * *\" UTC, 3 jobs of spec "
                                "latest kv against target 1"))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "03:00:00 UTC")) << r.out;
  r = Cli(
      {"campaign", "create", "nightly", "--cron", "0 4 * * *", "--spec-name", "kv", "--target", "kv", "--jobs", "1"},
      submitter_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "ALREADY_EXISTS")) << r.err;

  // Workers may not manage campaigns; no token at all is refused too.
  r = Cli({"campaign", "list"}, worker_);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_TRUE(absl::StrContains(r.err, "PERMISSION_DENIED")) << r.err;
  r = Cli({"campaign", "list"}, "");
  EXPECT_EQ(r.exit_code, 4);

  r = Cli({"campaign", "list"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "NEXT FIRE")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "nightly")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "0 3 * * *")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "active")) << r.out;

  r = Cli({"campaign", "show", "nightly"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "schedule      0 3 * * * (UTC)")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "newest version of \"kv\"")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "no runs fired yet")) << r.out;
  r = Cli({"campaign", "show", "nope"}, submitter_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "NOT_FOUND")) << r.err;

  // Pause and resume (by id and by name).
  r = Cli({"campaign", "pause", "1"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "\"nightly\": paused, next fire - (paused)")) << r.out;
  r = Cli({"campaign", "show", "1"}, submitter_);
  EXPECT_TRUE(absl::StrContains(r.out, ": paused")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "next fire     - (paused)")) << r.out;
  r = Cli({"campaign", "resume", "nightly", "--json"}, admin_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "\"paused\":false")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "T03:00:00Z")) << r.out;  // nextFireAt

  // Fire it twice as another replica would, at its fire times, and complete
  // the jobs: run 1 finds A and B, run 2 finds B and C.
  auto campaign = store_->GetCampaignByName("nightly");
  ASSERT_TRUE(campaign.ok());
  CampaignScheduler replica(store_.get(), {});
  Micros t = campaign->next_fire_at;
  std::vector<int64_t> runs;
  for (const std::vector<std::string>& sigs : {std::vector<std::string>{"A", "B", ""}, {"B", "C", "C"}}) {
    auto fired = replica.Tick(t);
    ASSERT_TRUE(fired.ok()) << fired.status();
    ASSERT_EQ(fired->size(), 1u);
    runs.push_back((*fired)[0].run_id);
    CompleteRun(store_.get(), runs.back(), sigs);
    ASSERT_FALSE(HasFatalFailure());
    t = (*fired)[0].next_fire_at;
  }
  std::map<std::string, int64_t> finding;  // signature -> id
  Page all;
  auto findings = store_->ListFindings("", 0, 0, all);
  ASSERT_TRUE(findings.ok());
  for (const auto& f : findings->items) finding[f.signature] = f.id;
  ASSERT_EQ(finding.size(), 3u);

  r = Cli({"campaign", "show", "nightly"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, absl::StrCat("(run ", runs[1], ")"))) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "RUN")) << r.out;
  // One line per run: newest first, with +new and -gone finding ids.
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n');
  auto line_of = [&](int64_t run) {
    for (const auto& l : lines)
      if (absl::StartsWith(l, absl::StrCat(run, " "))) return l;
    return std::string();
  };
  std::string l2 = line_of(runs[1]), l1 = line_of(runs[0]);
  ASSERT_FALSE(l2.empty()) << r.out;
  ASSERT_FALSE(l1.empty()) << r.out;
  EXPECT_LT(r.out.find(l2), r.out.find(l1)) << "newest first:\n" << r.out;
  EXPECT_TRUE(absl::StrContains(l2, "failed")) << l2;
  EXPECT_TRUE(absl::StrContains(l2, absl::StrCat("+", finding["C"]))) << l2;
  EXPECT_TRUE(absl::StrContains(l2, absl::StrCat("-", finding["A"]))) << l2;
  EXPECT_FALSE(absl::StrContains(l2, absl::StrCat("+", finding["B"]))) << l2;
  EXPECT_TRUE(absl::StrContains(l1, absl::StrCat("+", finding["A"], ",+", finding["B"]))) << l1;
  r = Cli({"campaign", "show", "nightly", "--json"}, submitter_);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(absl::StartsWith(r.out, "{\"campaign\":{")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, absl::StrCat("\"goneFindingIds\":[\"", finding["A"], "\"]"))) << r.out;

  // Delete: the campaign goes, its runs stay.
  r = Cli({"campaign", "delete", "nightly"}, submitter_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "deleted")) << r.out;
  r = Cli({"campaign", "list"}, submitter_);
  EXPECT_TRUE(absl::StrContains(r.out, "no campaigns")) << r.out;
  r = Cli({"run", "show", absl::StrCat(runs[0])}, submitter_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = Cli({"campaign", "delete", "nightly"}, submitter_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "NOT_FOUND")) << r.err;
}

}  // namespace
}  // namespace dualswarm::coord
