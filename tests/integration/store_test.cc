// Integration tests of the coordinator's store against a real PostgreSQL
// (started per test in a temporary directory): migrations, restarts, swarm
// expansion, the job queue under concurrency, lease expiry, stale and
// repeated completions, cancellation, stop-at-first-finding, findings, and
// a database outage (UNAVAILABLE, then recovery).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <pqxx/pqxx>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "dualswarm/v1/target.pb.h"
#include "proto/names/wire_names.h"
#include "services/coordinator/store/migrations.h"
#include "services/coordinator/store/swarm.h"
#include "tests/integration/pg_fixture.h"

namespace dualswarm::coord {
namespace {

using testing::PgTest;
using Clock = std::chrono::steady_clock;

class StoreTest : public PgTest {
 protected:
  std::vector<LeasedJob> Lease(Store* store, int max, int64_t lease_ms = 30000, const std::string& worker = "") {
    LeaseRequest req;
    req.worker_id = worker;
    req.max_jobs = max;
    req.lease_ms = lease_ms;
    auto jobs = store->LeaseJobs(req);
    EXPECT_TRUE(jobs.ok()) << jobs.status();
    return jobs.ok() ? *jobs : std::vector<LeasedJob>{};
  }

  absl::StatusOr<CompletionResult> Complete(const JobRow& job, v1::JobOutcome outcome = v1::JOB_OUTCOME_PASSED,
                                            const std::string& signature = "sig-a", int size = 3,
                                            v1::VerdictKind kind = v1::VERDICT_KIND_SAFETY) {
    Completion c;
    c.job_id = job.id;
    c.lease_token = job.lease_token;
    c.outcome = outcome;
    if (outcome == v1::JOB_OUTCOME_FAILED) {
      NewCounterexample cx;
      cx.kind = kind;
      cx.reason = absl::StrCat("bad response (size ", size, ")");
      cx.signature = signature;
      cx.input_json = "[]";
      cx.size = size;
      cx.unshrunk_size = size * 10;
      c.counterexample = cx;
    }
    return store_->CompleteJob(c);
  }

  int64_t QueryInt(const std::string& sql) {
    pqxx::connection c(pg_->ConnectionString());
    pqxx::work w(c);
    return w.exec1(sql)[0].as<int64_t>();
  }
};

// ---------------------------------------------------------------- migrations

TEST_F(StoreTest, MigrationsFromEmptyThenReapplyingIsANoOp) {
  // SetUp opened the store on an empty database: every migration applied.
  auto version = store_->SchemaVersion();
  DS_ASSERT_OK(version);
  EXPECT_EQ(*version, Migrations().back().version);
  EXPECT_EQ(QueryInt("SELECT count(*) FROM schema_migrations"), static_cast<int64_t>(Migrations().size()));
  for (const char* table : {"specs", "targets", "runs", "jobs", "job_attempts", "counterexamples", "findings",
                            "workers", "api_tokens", "campaigns"})
    EXPECT_EQ(QueryInt(absl::StrCat("SELECT count(*) FROM pg_tables WHERE tablename = '", table, "'")), 1) << table;

  auto again = store_->Migrate();
  DS_ASSERT_OK(again);
  EXPECT_EQ(*again, 0);
  // A second coordinator opening the same database applies nothing either.
  auto second = Store::Open(StoreOptions());
  DS_ASSERT_OK(second);
  EXPECT_EQ(QueryInt("SELECT count(*) FROM schema_migrations"), static_cast<int64_t>(Migrations().size()));
}

// The migrations' CHECK constraints and the one mapping of states to words
// (proto/names/wire_names.h) agree: every word of the enum is accepted by
// its column, and words outside the mapping are refused. A state, outcome
// or verdict kind added to the proto without a migration that allows it
// fails here.
TEST_F(StoreTest, CheckConstraintsAcceptExactlyTheWordsOfTheMapping) {
  RunRow run = Submit(1);
  ASSERT_NE(run.id, 0);
  pqxx::connection c(pg_->ConnectionString());
  // Whether `UPDATE table SET column = word` for row `id` passes the CHECK
  // (rolled back either way).
  auto accepted = [&](const std::string& table, const std::string& column, int64_t id, const std::string& word) {
    pqxx::work w(c);
    try {
      w.exec_params(absl::StrCat("UPDATE ", table, " SET ", column, " = $1 WHERE id = $2"), word, id);
      return true;
    } catch (const pqxx::check_violation&) {
      return false;
    }
  };
  // `blank_ok`: '' is accepted too (an outcome not recorded yet).
  auto expect_exactly = [&](const std::string& table, const std::string& column, int64_t id,
                            const std::vector<std::string>& words, bool blank_ok = false) {
    for (const std::string& word : words)
      EXPECT_TRUE(accepted(table, column, id, word)) << table << "." << column << " " << word;
    EXPECT_EQ(accepted(table, column, id, ""), blank_ok) << table << "." << column << " ''";
    for (const std::string& other :
         {std::string("bogus"), absl::StrCat(words[0], "x"), absl::AsciiStrToUpper(words[0])})
      EXPECT_FALSE(accepted(table, column, id, other)) << table << "." << column << " '" << other << "'";
  };
  auto words_of = [](auto values) {
    std::vector<std::string> out;
    for (auto v : values) out.push_back(wire::EnumWord(v));
    return out;
  };
  expect_exactly("runs", "state", run.id, words_of(wire::EnumValues<v1::RunState>()));
  expect_exactly("jobs", "state", QueryInt(absl::StrCat("SELECT id FROM jobs WHERE run_id = ", run.id)),
                 words_of(wire::EnumValues<v1::JobState>()));
  expect_exactly("targets", "reset_policy", run.tmpl.target_id, words_of(wire::EnumValues<v1::ResetPolicy>()));

  // Outcomes and verdict kinds (migration 6): a failed job leaves a job
  // outcome, an attempt outcome, a finding and a counterexample.
  auto leased = Lease(store_.get(), 1);
  ASSERT_EQ(leased.size(), 1u);
  DS_ASSERT_OK(Complete(leased[0].job, v1::JOB_OUTCOME_FAILED));
  const int64_t job = leased[0].job.id;
  const auto outcomes = words_of(wire::EnumValues<v1::JobOutcome>());
  const auto kinds = words_of(wire::EnumValues<v1::VerdictKind>());
  expect_exactly("jobs", "outcome", job, outcomes, /*blank_ok=*/true);
  expect_exactly("job_attempts", "outcome", QueryInt(absl::StrCat("SELECT id FROM job_attempts WHERE job_id = ", job)),
                 outcomes, /*blank_ok=*/true);
  expect_exactly("counterexamples", "kind",
                 QueryInt(absl::StrCat("SELECT id FROM counterexamples WHERE job_id = ", job)), kinds);
  expect_exactly("findings", "kind", QueryInt("SELECT id FROM findings"), kinds);
}

TEST_F(StoreTest, ConcurrentMigrationsApplyOnce) {
  // Fresh database, four coordinators starting at once.
  {
    pqxx::connection c(pg_->ConnectionString("postgres"));
    pqxx::nontransaction w(c);
    w.exec("CREATE DATABASE fresh");
  }
  Store::Options o;
  o.url = pg_->ConnectionString("fresh");
  std::vector<std::thread> threads;
  std::atomic<int> applied{0}, failures{0};
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      auto s = Store::Open(o);
      if (!s.ok()) {
        ++failures;
        return;
      }
      auto v = (*s)->SchemaVersion();
      if (v.ok() && *v == Migrations().back().version) ++applied;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(applied.load(), 4);
  pqxx::connection c(pg_->ConnectionString("fresh"));
  pqxx::work w(c);
  EXPECT_EQ(w.exec1("SELECT count(*) FROM schema_migrations")[0].as<int64_t>(),
            static_cast<int64_t>(Migrations().size()));
}

TEST_F(StoreTest, NewerSchemaIsRefused) {
  {
    pqxx::connection c(pg_->ConnectionString());
    pqxx::work w(c);
    w.exec("INSERT INTO schema_migrations (version, name) VALUES (9999, 'from the future')");
    w.commit();
  }
  auto s = Store::Open(StoreOptions());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition) << s.status();
}

TEST_F(StoreTest, RestartKeepsEverything) {
  RunRow run = Submit(5);
  auto leased = Lease(store_.get(), 2);
  ASSERT_EQ(leased.size(), 2u);
  DS_ASSERT_OK(Complete(leased[0].job, v1::JOB_OUTCOME_FAILED));
  auto token = store_->CreateToken("submitter", "ci");
  DS_ASSERT_OK(token);

  store_.reset();
  DS_ASSERT_OK(pg_->Stop());
  StartDb(0);  // a new server process on a new port, same data directory
  ASSERT_FALSE(HasFatalFailure());
  auto reopened = Store::Open(StoreOptions());
  DS_ASSERT_OK(reopened);
  store_ = std::move(*reopened);
  auto applied = store_->Migrate();
  DS_ASSERT_OK(applied);
  EXPECT_EQ(*applied, 0);

  auto got = store_->GetRun(run.id);
  DS_ASSERT_OK(got);
  EXPECT_EQ(got->state, v1::RUN_STATE_RUNNING);
  EXPECT_EQ(got->counts.total, 5);
  EXPECT_EQ(got->counts.failed, 1);
  EXPECT_EQ(got->counts.leased, 1);
  EXPECT_EQ(got->counts.queued, 3);
  EXPECT_EQ(got->tmpl.seed, 42u);
  auto jobs = store_->ListJobs(run.id);
  DS_ASSERT_OK(jobs);
  EXPECT_EQ(jobs->size(), 5u);
  auto findings = store_->ListFindings("", 0, run.id, Page{});
  DS_ASSERT_OK(findings);
  EXPECT_EQ(findings->items.size(), 1u);
  auto who = store_->Authenticate(*token);
  DS_ASSERT_OK(who);
  EXPECT_EQ(who->first, "submitter");
  // The lease taken before the restart is still valid.
  DS_ASSERT_OK(Complete(leased[1].job));
}

// ---------------------------------------------------------------- specs, targets, tokens

TEST_F(StoreTest, SpecsAreContentAddressed) {
  bool created = false;
  auto a = store_->PutSpec("kv", "kv.dspec", "spec kv; var x = 1;", 0, &created);
  DS_ASSERT_OK(a);
  EXPECT_TRUE(created);
  EXPECT_EQ(a->hash, Sha256Hex("spec kv; var x = 1;"));
  auto again = store_->PutSpec("kv", "other.dspec", "spec kv; var x = 1;", 0, &created);
  DS_ASSERT_OK(again);
  EXPECT_FALSE(created);
  EXPECT_EQ(again->hash, a->hash);
  EXPECT_EQ(again->file_name, "kv.dspec");  // the first upload wins
  auto b = store_->PutSpec("kv", "kv.dspec", "spec kv; var x = 2;", 0, &created);
  DS_ASSERT_OK(b);
  EXPECT_TRUE(created);
  auto latest = store_->GetLatestSpec("kv");
  DS_ASSERT_OK(latest);
  EXPECT_EQ(latest->hash, b->hash);
  EXPECT_EQ(latest->source, "spec kv; var x = 2;");

  // Paging, newest first.
  for (int i = 0; i < 5; ++i) DS_ASSERT_OK(store_->PutSpec("p", "p.dspec", absl::StrCat("p", i), 0, nullptr));
  Page page;
  page.size = 2;
  std::vector<std::string> seen;
  for (int guard = 0; guard < 10; ++guard) {
    auto l = store_->ListSpecs("p", page);
    DS_ASSERT_OK(l);
    for (const auto& s : l->items) seen.push_back(s.hash);
    if (l->next.empty()) break;
    page.after = l->next;
  }
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen.front(), Sha256Hex("p4"));
  EXPECT_EQ(seen.back(), Sha256Hex("p0"));

  EXPECT_EQ(store_->GetSpec(std::string(64, '0')).status().code(), absl::StatusCode::kNotFound);
  // Values are parameters, never SQL.
  auto evil = store_->ListSpecs("x' OR '1'='1", Page{});
  DS_ASSERT_OK(evil);
  EXPECT_TRUE(evil->items.empty());
  Page bad;
  bad.after = "1; DROP TABLE specs";
  EXPECT_EQ(store_->ListSpecs("", bad).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(StoreTest, TargetsAreValidated) {
  TargetRow t;
  t.name = "web";
  t.adapter = "http";
  t.address = "127.0.0.1:8080";
  auto a = store_->CreateTarget(t);
  DS_ASSERT_OK(a);
  EXPECT_EQ(a->reset_policy, "none");
  EXPECT_EQ(store_->CreateTarget(t).status().code(), absl::StatusCode::kAlreadyExists);
  TargetRow bad = t;
  bad.name = "other";
  bad.adapter = "smtp";
  EXPECT_EQ(store_->CreateTarget(bad).status().code(), absl::StatusCode::kInvalidArgument);
  bad.adapter = "http";
  bad.launch = "/bin/server";
  EXPECT_EQ(store_->CreateTarget(bad).status().code(), absl::StatusCode::kInvalidArgument);
  bad.address = "";
  EXPECT_EQ(store_->CreateTarget(bad).status().code(), absl::StatusCode::kInvalidArgument) << "launch without {port}";
  bad.launch = "/bin/server --port {port}";
  bad.labels = {"linux", "big,box"};
  EXPECT_EQ(store_->CreateTarget(bad).status().code(), absl::StatusCode::kInvalidArgument);
  bad.labels = {"linux", "x86"};
  auto ok = store_->CreateTarget(bad);
  DS_ASSERT_OK(ok);
  EXPECT_EQ(ok->labels, (std::vector<std::string>{"linux", "x86"}));
  EXPECT_EQ(ok->reset_policy, "restart-per-job");
  EXPECT_EQ(store_->GetTarget(12345).status().code(), absl::StatusCode::kNotFound);
  auto by_name = store_->GetTargetByName("other");
  DS_ASSERT_OK(by_name);
  EXPECT_EQ(by_name->id, ok->id);
}

// An fs target's run_as: a user name, on fs targets only, kept.
TEST_F(StoreTest, AnFsTargetsUserIsCheckedAndKept) {
  TargetRow t;
  t.name = "sync";
  t.adapter = "fs";
  t.launch = "unison {a} {b}";
  t.run_as = "nobody";
  auto a = store_->CreateTarget(t);
  DS_ASSERT_OK(a);
  EXPECT_EQ(a->run_as, "nobody");
  auto back = store_->GetTargetByName("sync");
  DS_ASSERT_OK(back);
  EXPECT_EQ(back->run_as, "nobody");
  for (const char* bad : {"Root", "no body", "-x", "9lives", "a;rm", "averyveryveryverylongusernameof33c"}) {
    TargetRow b = t;
    b.name = "sync-bad";
    b.run_as = bad;
    auto r = store_->CreateTarget(b);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_TRUE(absl::StrContains(r.status().message(), "run_as")) << r.status();
  }
  TargetRow http;
  http.name = "web-as";
  http.adapter = "http";
  http.address = "127.0.0.1:8080";
  http.run_as = "nobody";
  auto r = store_->CreateTarget(http);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "fs targets only")) << r.status();
  // The schema holds the same rule against writes that bypass the store.
  pqxx::connection c(pg_->ConnectionString());
  pqxx::work w(c);
  EXPECT_THROW(w.exec("UPDATE targets SET run_as = 'no body' WHERE name = 'sync'"), pqxx::check_violation);
}

// A launched target's reset command: kept; refused without a launch
// command, on fs targets and beyond its bound, here and by the schema.
TEST_F(StoreTest, AResetCommandIsForLaunchedServersAndKept) {
  TargetRow t;
  t.name = "dav";
  t.adapter = "http";
  t.launch = "sh apache_webdav.sh {port} {dir}";
  t.reset_command = "find {dir}/root -mindepth 1 -delete";
  auto a = store_->CreateTarget(t);
  DS_ASSERT_OK(a);
  EXPECT_EQ(a->reset_command, t.reset_command);
  auto back = store_->GetTargetByName("dav");
  DS_ASSERT_OK(back);
  EXPECT_EQ(back->reset_command, t.reset_command);
  TargetRow running = t;
  running.name = "dav-running";
  running.launch.clear();
  running.address = "127.0.0.1:8080";
  TargetRow fs = t;
  fs.name = "dav-fs";
  fs.adapter = "fs";
  TargetRow huge = t;
  huge.name = "dav-huge";
  huge.reset_command = std::string(4097, 'x');
  for (const TargetRow& bad : {running, fs, huge}) {
    auto r = store_->CreateTarget(bad);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << bad.name;
    EXPECT_TRUE(absl::StrContains(r.status().message(), "reset command")) << r.status();
  }
  pqxx::connection c(pg_->ConnectionString());
  pqxx::work w(c);
  EXPECT_THROW(w.exec("UPDATE targets SET reset_command = repeat('x', 4097) WHERE name = 'dav'"),
               pqxx::check_violation);
}

TEST_F(StoreTest, TokensAreStoredHashed) {
  auto token = store_->CreateToken("admin", "root");
  DS_ASSERT_OK(token);
  EXPECT_EQ(QueryInt(absl::StrCat("SELECT count(*) FROM api_tokens WHERE token_hash = '", Sha256Hex(*token), "'")), 1);
  pqxx::connection c(pg_->ConnectionString());
  pqxx::work w(c);
  EXPECT_TRUE(w.exec_params("SELECT 1 FROM api_tokens WHERE token_hash = $1 OR name = $1", *token).empty())
      << "the plain token must not be stored";
  auto who = store_->Authenticate(*token);
  DS_ASSERT_OK(who);
  EXPECT_EQ(who->first, "admin");
  EXPECT_EQ(store_->Authenticate(*token + "x").status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(store_->Authenticate("").status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(store_->CreateToken("root", "x").status().code(), absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------- swarm expansion

TEST(SwarmExpansion, DistinctSeedsOrdersAndMasks) {
  auto jobs = ExpandSwarm(7, 1000, 6);
  ASSERT_EQ(jobs.size(), 1000u);
  std::set<uint64_t> seeds;
  std::set<std::string> masks;
  std::map<std::string, int> orders;
  for (const auto& j : jobs) {
    seeds.insert(j.seed);
    masks.insert(j.feature_mask);
    orders[j.branch_order]++;
  }
  EXPECT_EQ(seeds.size(), 1000u);
  EXPECT_EQ(masks.size(), 1000u);
  EXPECT_EQ(jobs[0].feature_mask, "") << "job 0 runs with every feature on";
  EXPECT_EQ(orders,
            (std::map<std::string, int>{{"first", 250}, {"last", 250}, {"random", 250}, {"most-constrained", 250}}));
  // Deterministic, and a different base seed gives different jobs.
  auto again = ExpandSwarm(7, 1000, 6);
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(again[i].seed, jobs[i].seed);
    EXPECT_EQ(again[i].feature_mask, jobs[i].feature_mask);
  }
  EXPECT_NE(ExpandSwarm(8, 1, 6)[0].seed, jobs[0].seed);
  // No choice sites: masks cannot differ, seeds still do.
  auto plain = ExpandSwarm(7, 10, 0);
  for (const auto& j : plain) EXPECT_EQ(j.feature_mask, "");
}

TEST_F(StoreTest, SubmitStoresTheSwarmOnTheJobRows) {
  RunRow run = Submit(64, false, 1234, 6);
  EXPECT_EQ(run.state, v1::RUN_STATE_QUEUED);
  EXPECT_EQ(run.counts.total, 64);
  EXPECT_EQ(run.counts.queued, 64);
  EXPECT_EQ(run.tmpl.budget.steps, 1000u) << "defaults are stored explicitly";
  EXPECT_EQ(run.tmpl.budget.network, "tcp");
  auto jobs = store_->ListJobs(run.id);
  DS_ASSERT_OK(jobs);
  ASSERT_EQ(jobs->size(), 64u);
  auto expected = ExpandSwarm(1234, 64, 6);
  std::set<uint64_t> seeds;
  std::set<std::string> masks, orders;
  for (size_t i = 0; i < jobs->size(); ++i) {
    const JobRow& j = (*jobs)[i];
    EXPECT_EQ(j.index, static_cast<int>(i));
    EXPECT_EQ(j.seed, expected[i].seed) << "uint64 seeds survive bigint storage";
    EXPECT_EQ(j.branch_order, expected[i].branch_order);
    EXPECT_EQ(j.feature_mask, expected[i].feature_mask);
    seeds.insert(j.seed);
    masks.insert(j.feature_mask);
    orders.insert(j.branch_order);
  }
  EXPECT_EQ(seeds.size(), 64u);
  EXPECT_EQ(masks.size(), 64u);
  EXPECT_EQ(orders.size(), 4u);
  // Seeds keep to 63 bits (`dualswarm test --seed` and counterexample JSON take them).
  bool all_63_bit =
      std::all_of(jobs->begin(), jobs->end(), [](const JobRow& j) { return j.seed < (uint64_t{1} << 63); });
  EXPECT_TRUE(all_63_bit);
}

TEST_F(StoreTest, SubmitValidates) {
  RunRow ok = Submit(1);
  RunTemplate t = ok.tmpl;
  t.jobs = 0;
  EXPECT_EQ(store_->SubmitRun(t, "").status().code(), absl::StatusCode::kInvalidArgument);
  t.jobs = kMaxJobsPerRun + 1;
  EXPECT_EQ(store_->SubmitRun(t, "").status().code(), absl::StatusCode::kInvalidArgument);
  t.jobs = 1;
  t.budget.network = "udp";
  EXPECT_EQ(store_->SubmitRun(t, "").status().code(), absl::StatusCode::kInvalidArgument);
  t.budget.network = "";
  t.budget.connections = 100000;
  EXPECT_EQ(store_->SubmitRun(t, "").status().code(), absl::StatusCode::kInvalidArgument);
  t.budget.connections = 0;
  t.spec_hash = std::string(64, 'a');
  EXPECT_EQ(store_->SubmitRun(t, "").status().code(), absl::StatusCode::kNotFound);
  t.spec_hash = ok.tmpl.spec_hash;
  t.target_id = 999;
  EXPECT_EQ(store_->SubmitRun(t, "").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetRun(999).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->CancelRun(999).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(StoreTest, SubmitRefusesAGenTheSpecDoesNotHave) {
  // A spec version whose gen block names are not plain names is refused,
  // naming the bad one.
  auto bad = store_->PutSpec("kv", "kv.dspec", "spec kv; // bad gens", 0, nullptr,
                             std::vector<std::string>{"request", "two words"});
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "bad gen name \"two words\"")) << bad.status();
  EXPECT_EQ(QueryInt("SELECT count(*) FROM specs"), 0);

  auto spec =
      store_->PutSpec("kv", "kv.dspec", "spec kv; // gens", 0, nullptr, std::vector<std::string>{"request", "burst"});
  DS_ASSERT_OK(spec);
  RunTemplate t;
  t.spec_hash = spec->hash;
  t.target_id = KvTarget();
  t.jobs = 2;
  t.gen = "reqest";
  auto run = store_->SubmitRun(t, "test");
  ASSERT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument) << run.status();
  EXPECT_NE(run.status().message().find("no gen block \"reqest\""), std::string::npos) << run.status();
  EXPECT_NE(run.status().message().find("its gen blocks: request, burst"), std::string::npos) << run.status();
  EXPECT_EQ(QueryInt("SELECT count(*) FROM runs"), 0) << "nothing written";
  t.gen = "burst";
  DS_ASSERT_OK(store_->SubmitRun(t, "test"));
  t.gen = "";  // the default, "request"
  DS_ASSERT_OK(store_->SubmitRun(t, "test"));

  auto none = store_->PutSpec("kv", "kv.dspec", "spec kv; // no gens", 0, nullptr, std::vector<std::string>{});
  DS_ASSERT_OK(none);
  t.spec_hash = none->hash;
  run = store_->SubmitRun(t, "test");
  ASSERT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(run.status().message().find("no gen blocks at all"), std::string::npos) << run.status();

  // Campaigns are refused the same way when they are created.
  CampaignRow c;
  c.name = "nightly";
  c.cron = "0 3 * * *";
  c.tmpl = t;
  c.tmpl.spec_hash = spec->hash;
  c.tmpl.gen = "nope";
  auto campaign = store_->CreateCampaign(c, 0);
  ASSERT_EQ(campaign.status().code(), absl::StatusCode::kInvalidArgument) << campaign.status();
  EXPECT_NE(campaign.status().message().find("its gen blocks: request, burst"), std::string::npos);
}

TEST_F(StoreTest, TextWithNulIsRefusedNotCutShort) {
  // libpqxx hands text to PostgreSQL as C strings: everything after a NUL
  // would be dropped while the hash covers the whole source.
  std::string source("spec kv; // before\0after", 25);
  auto spec = store_->PutSpec("kv", "kv.dspec", source, 0, nullptr);
  ASSERT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(spec.status().message().find("contains a NUL byte (at byte 18)"), std::string::npos) << spec.status();
  EXPECT_EQ(store_->PutSpec("kv", std::string("kv\0.dspec", 9), "spec kv;", 0, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(QueryInt("SELECT count(*) FROM specs"), 0);

  TargetRow t;
  t.name = "kv-nul";
  t.adapter = "jsonl";
  t.launch = std::string("ds-ref-kv --port {port}\0; rm -rf /", 34);
  auto target = store_->CreateTarget(t);
  ASSERT_EQ(target.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(target.status().message().find("target.launch contains a NUL byte"), std::string::npos) << target.status();
  t.launch = "ds-ref-kv --port {port}\nrm -rf /";
  target = store_->CreateTarget(t);
  ASSERT_EQ(target.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(target.status().message().find("target.launch contains a line break"), std::string::npos)
      << target.status();
  t.launch = "ds-ref-kv --port {port}";
  t.readiness_probe = "http:/health\r\nX-Injected: 1";
  target = store_->CreateTarget(t);
  ASSERT_EQ(target.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(target.status().message().find("target.readiness.probe contains a line break"), std::string::npos)
      << target.status();
  t.readiness_probe = "";
  t.launch = "";
  t.address = std::string("127.0.0.1:7\0000", 13);
  EXPECT_EQ(store_->CreateTarget(t).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(QueryInt("SELECT count(*) FROM targets"), 0);

  WorkerInfo w;
  w.name = std::string("w\0x", 3);
  w.slots = 1;
  EXPECT_EQ(store_->RegisterWorker(w).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->CreateToken("admin", std::string("a\0b", 3)).status().code(), absl::StatusCode::kInvalidArgument);
  // Lookups too: "kv\0junk" must not find "kv".
  DS_ASSERT_OK(store_->PutSpec("kv", "kv.dspec", "spec kv;", 0, nullptr));
  EXPECT_EQ(store_->GetLatestSpec(std::string("kv\0junk", 7)).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->GetTargetByName(std::string("kv\0", 3)).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(StoreTest, ReportedTextKeepsWhatFollowsANul) {
  // A worker's reason quotes SUT output, which may hold NULs: stored whole
  // (NUL spelled \0), not refused (the result would be lost) nor cut short.
  RunRow run = Submit(1);
  auto leased = Lease(store_.get(), 1);
  ASSERT_EQ(leased.size(), 1u);
  Completion c;
  c.job_id = leased[0].job.id;
  c.lease_token = leased[0].job.lease_token;
  c.outcome = v1::JOB_OUTCOME_ERROR;
  c.reason = std::string("the SUT said: a\0b and more", 26);
  DS_ASSERT_OK(store_->CompleteJob(c));
  auto jobs = store_->ListRunJobs(run.id, v1::JOB_STATE_UNSPECIFIED, Page{});
  DS_ASSERT_OK(jobs);
  ASSERT_EQ(jobs->items.size(), 1u);
  EXPECT_EQ(jobs->items[0].reason, "the SUT said: a\\0b and more");
}

// Every text value is checked where it is sent, not per call: an id cut
// short at its NUL by libpq would be the real worker's id (and a token the
// real lease's), so each of these would act on the real rows.
TEST_F(StoreTest, IdsWithNulAreRefusedEverywhereAndTouchNothing) {
  WorkerInfo info;
  info.name = "w1";
  auto id = store_->RegisterWorker(info);
  DS_ASSERT_OK(id);
  RunRow run = Submit(1);
  auto leased = Lease(store_.get(), 1, 30000, *id);
  ASSERT_EQ(leased.size(), 1u);
  const JobRow& job = leased[0].job;
  auto seen_sql =
      absl::StrCat("SELECT count(*) FROM workers WHERE id = '", *id, "' AND last_heartbeat_at < '2001-01-01'");
  auto expiry_sql = absl::StrCat("SELECT ds_us(lease_expires_at) FROM jobs WHERE id = ", job.id);
  {
    pqxx::connection c(pg_->ConnectionString());
    pqxx::work w(c);
    w.exec0("UPDATE workers SET last_heartbeat_at = '2000-01-01'");
    w.exec0(absl::StrCat("UPDATE jobs SET lease_expires_at = now() + interval '1 minute' WHERE id = ", job.id));
    w.commit();
  }
  const int64_t expiry = QueryInt(expiry_sql);
  const std::string junk("\0junk", 5);
  auto refused = [](const absl::Status& st, const char* call) {
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << call << ": " << st;
    EXPECT_TRUE(absl::StrContains(st.message(), "contains a NUL byte")) << call << ": " << st;
  };

  refused(store_->Heartbeat(*id + junk, {{job.id, job.lease_token}}, 60000).status(), "Heartbeat(id\\0junk)");
  refused(store_->Heartbeat("w2" + junk, {{job.id, job.lease_token}}, 60000).status(), "Heartbeat(w2\\0junk)");
  refused(store_->Heartbeat(*id, {{job.id, job.lease_token + junk}}, 60000).status(), "Heartbeat(token\\0junk)");
  refused(store_->GetWorker(*id + junk).status(), "GetWorker");
  refused(store_->TouchWorker(*id + junk), "TouchWorker");
  LeaseRequest lease;
  lease.worker_id = *id + junk;
  refused(store_->LeaseJobs(lease).status(), "LeaseJobs");

  EXPECT_EQ(QueryInt(seen_sql), 1) << "the real worker was recorded as seen";
  EXPECT_EQ(QueryInt(expiry_sql), expiry) << "the real lease was extended";
  EXPECT_EQ(QueryInt(absl::StrCat("SELECT count(*) FROM jobs WHERE worker_id = '", *id, "'")), 1);
  EXPECT_EQ(QueryInt(absl::StrCat("SELECT count(*) FROM job_attempts WHERE worker_id = '", *id, "'")), 1);
  // The same calls without the junk still work.
  DS_ASSERT_OK(store_->GetWorker(*id));
  auto hb = store_->Heartbeat(*id, {{job.id, job.lease_token}}, 60000);
  DS_ASSERT_OK(hb);
  EXPECT_EQ(hb->extended, std::vector<int64_t>{job.id});
  EXPECT_EQ(QueryInt(seen_sql), 0);
}

// ---------------------------------------------------------------- job queue

TEST_F(StoreTest, EightConcurrentLesseesNeverReceiveTheSameJob) {
  constexpr int kJobs = 400;
  RunRow run = Submit(kJobs);
  // Eight lessees, each with its own store (its own connection), as eight
  // coordinator replicas would be.
  std::vector<std::unique_ptr<Store>> stores;
  for (int i = 0; i < 8; ++i) {
    Store::Options o = StoreOptions();
    o.pool_size = 1;
    auto s = Store::Open(o);
    DS_ASSERT_OK(s);
    stores.push_back(std::move(*s));
  }
  std::mutex mu;
  std::map<int64_t, int> times_leased;
  std::set<int> lessees_with_jobs;
  std::atomic<int> errors{0};
  auto deadline = Clock::now() + std::chrono::seconds(90);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      Store* s = stores[i].get();
      while (Clock::now() < deadline) {
        LeaseRequest req;
        req.worker_id = absl::StrCat("w", i);
        req.max_jobs = 1 + i % 4;
        req.lease_ms = 60000;  // no expiry during the test: every lease is a first lease
        auto jobs = s->LeaseJobs(req);
        if (!jobs.ok()) {
          ++errors;
          return;
        }
        if (jobs->empty()) return;
        for (const auto& lj : *jobs) {
          {
            std::lock_guard<std::mutex> lock(mu);
            times_leased[lj.job.id]++;
            lessees_with_jobs.insert(i);
          }
          Completion c;
          c.job_id = lj.job.id;
          c.lease_token = lj.job.lease_token;
          c.outcome = v1::JOB_OUTCOME_PASSED;
          if (!s->CompleteJob(c).ok()) ++errors;
        }
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_GE(lessees_with_jobs.size(), 2u) << "the lessees did run concurrently";
  EXPECT_EQ(times_leased.size(), static_cast<size_t>(kJobs));
  for (const auto& [id, n] : times_leased) EXPECT_EQ(n, 1) << "job " << id << " leased " << n << " times";
  auto done = store_->GetRun(run.id);
  DS_ASSERT_OK(done);
  EXPECT_EQ(done->counts.passed, kJobs);
  EXPECT_EQ(done->state, v1::RUN_STATE_PASSED);
  EXPECT_NE(done->finished_at, 0);
  EXPECT_EQ(QueryInt("SELECT count(*) FROM job_attempts"), kJobs);
}

// Completions of one run mostly take only their job's lock (the fast path
// in Store::CompleteJob); the run's last completions race with each other
// and must still end the run exactly once: many small runs, six lessees that
// lease one job at a time and complete it at once, as six replicas would.
TEST_F(StoreTest, ConcurrentCompletionsAlwaysEndTheRun) {
  constexpr int kRuns = 25, kJobsPerRun = 12, kLessees = 6;
  std::vector<RunRow> runs;
  for (int i = 0; i < kRuns; ++i) runs.push_back(Submit(kJobsPerRun, false, 100 + i));
  std::vector<std::unique_ptr<Store>> stores;
  for (int i = 0; i < kLessees; ++i) {
    Store::Options o = StoreOptions();
    o.pool_size = 1;
    auto s = Store::Open(o);
    DS_ASSERT_OK(s);
    stores.push_back(std::move(*s));
  }
  std::atomic<int> errors{0}, completed{0};
  auto deadline = Clock::now() + std::chrono::seconds(90);
  std::vector<std::thread> threads;
  for (int i = 0; i < kLessees; ++i)
    threads.emplace_back([&, i] {
      Store* s = stores[i].get();
      while (Clock::now() < deadline) {
        LeaseRequest req;
        req.worker_id = absl::StrCat("w", i);
        req.max_jobs = 1;
        req.lease_ms = 60000;
        auto jobs = s->LeaseJobs(req);
        if (!jobs.ok()) {
          ++errors;
          return;
        }
        if (jobs->empty()) return;
        Completion c;
        c.job_id = (*jobs)[0].job.id;
        c.lease_token = (*jobs)[0].job.lease_token;
        // The last run has one job that could not run: it must end as "error".
        c.outcome = (*jobs)[0].job.run_id == runs.back().id && (*jobs)[0].job.index == 5 ? v1::JOB_OUTCOME_ERROR
                                                                                         : v1::JOB_OUTCOME_PASSED;
        auto r = s->CompleteJob(c);
        if (!r.ok() || r->duplicate) ++errors;
        ++completed;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(completed.load(), kRuns * kJobsPerRun);
  for (const RunRow& run : runs) {
    auto done = store_->GetRun(run.id);
    DS_ASSERT_OK(done);
    bool last = run.id == runs.back().id;
    EXPECT_EQ(done->state, last ? v1::RUN_STATE_ERROR : v1::RUN_STATE_PASSED) << "run " << run.id;
    EXPECT_EQ(done->counts.passed, last ? kJobsPerRun - 1 : kJobsPerRun) << "run " << run.id;
    EXPECT_EQ(done->counts.error, last ? 1 : 0) << "run " << run.id;
    EXPECT_NE(done->finished_at, 0) << "run " << run.id;
  }
}

TEST_F(StoreTest, ExpiredLeaseIsReleasedAndStaleCompletionRefused) {
  Submit(1);
  auto first = Lease(store_.get(), 1, 300, "worker-a");
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].job.attempts, 1);
  EXPECT_TRUE(Lease(store_.get(), 1, 300, "worker-b").empty()) << "the lease is still valid";

  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  auto second = Lease(store_.get(), 1, 30000, "worker-b");
  ASSERT_EQ(second.size(), 1u) << "the expired lease is handed out again";
  EXPECT_EQ(second[0].job.id, first[0].job.id);
  EXPECT_NE(second[0].job.lease_token, first[0].job.lease_token);
  EXPECT_EQ(second[0].job.attempts, 2);
  EXPECT_EQ(second[0].job.worker_id, "worker-b");

  // Worker A wakes up late: its lease was superseded.
  auto stale = Complete(first[0].job);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().code(), absl::StatusCode::kFailedPrecondition) << stale.status();
  auto hb = store_->Heartbeat("worker-a", {{first[0].job.id, first[0].job.lease_token}}, 30000);
  DS_ASSERT_OK(hb);
  EXPECT_EQ(hb->lost, std::vector<int64_t>{first[0].job.id});
  EXPECT_TRUE(hb->extended.empty());

  auto fresh = Complete(second[0].job);
  DS_ASSERT_OK(fresh);
  EXPECT_FALSE(fresh->duplicate);
  auto jobs = store_->ListJobs(second[0].job.run_id);
  DS_ASSERT_OK(jobs);
  EXPECT_EQ((*jobs)[0].state, v1::JOB_STATE_PASSED);
  // Still refused after the job is done.
  EXPECT_EQ(Complete(first[0].job).status().code(), absl::StatusCode::kFailedPrecondition);
  // A token that was never issued.
  JobRow forged = second[0].job;
  forged.lease_token = "00000000-0000-0000-0000-000000000000";
  EXPECT_EQ(Complete(forged).status().code(), absl::StatusCode::kFailedPrecondition);
  forged.id = 999999;
  EXPECT_EQ(Complete(forged).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(StoreTest, HeartbeatExtendsTheLease) {
  Submit(1);
  auto leased = Lease(store_.get(), 1, 400, "w");
  ASSERT_EQ(leased.size(), 1u);
  auto until = leased[0].job.lease_expires_at;
  for (int i = 0; i < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto hb = store_->Heartbeat("w", {{leased[0].job.id, leased[0].job.lease_token}}, 400);
    DS_ASSERT_OK(hb);
    EXPECT_EQ(hb->extended, std::vector<int64_t>{leased[0].job.id});
    EXPECT_GT(hb->extended_until, until);
  }
  // 800 ms after the lease was taken with 400 ms: still ours thanks to the heartbeats.
  EXPECT_TRUE(Lease(store_.get(), 1, 400, "other").empty());
  DS_ASSERT_OK(Complete(leased[0].job));
}

TEST_F(StoreTest, CompletingTwiceIsHarmless) {
  RunRow run = Submit(2);
  auto leased = Lease(store_.get(), 2);
  ASSERT_EQ(leased.size(), 2u);
  auto first = Complete(leased[0].job, v1::JOB_OUTCOME_FAILED, "sig-x", 4);
  DS_ASSERT_OK(first);
  EXPECT_FALSE(first->duplicate);
  auto second = Complete(leased[0].job, v1::JOB_OUTCOME_FAILED, "sig-x", 4);
  DS_ASSERT_OK(second);
  EXPECT_TRUE(second->duplicate);
  // A retry with a different outcome changes nothing either.
  auto third = Complete(leased[0].job, v1::JOB_OUTCOME_PASSED);
  DS_ASSERT_OK(third);
  EXPECT_TRUE(third->duplicate);
  auto got = store_->GetRun(run.id);
  DS_ASSERT_OK(got);
  EXPECT_EQ(got->counts.failed, 1);
  EXPECT_EQ(got->counts.passed, 0);
  EXPECT_EQ(QueryInt("SELECT count(*) FROM counterexamples"), 1);
  EXPECT_EQ(QueryInt("SELECT count FROM findings"), 1);
  DS_ASSERT_OK(Complete(leased[1].job));
  DS_ASSERT_OK(Complete(leased[1].job));
  got = store_->GetRun(run.id);
  DS_ASSERT_OK(got);
  EXPECT_EQ(got->state, v1::RUN_STATE_FAILED);
  EXPECT_EQ(got->counts.passed, 1);
}

// Spec coverage (docs/coverage.md): each completion's covered branch ids
// are kept on its job (by the fast path, which only locks the job, and by
// the slow path that ends the run), and a run's coverage is their union.
TEST_F(StoreTest, ARunsCoverageIsTheUnionOfItsJobsAndMalformedIdsAreDroppedNotTheReport) {
  RunRow run = Submit(9);
  auto leased = Lease(store_.get(), 8);
  ASSERT_EQ(leased.size(), 8u);
  auto complete = [&](const JobRow& job, std::vector<int32_t> covered) {
    Completion c;
    c.job_id = job.id;
    c.lease_token = job.lease_token;
    c.outcome = v1::JOB_OUTCOME_PASSED;
    c.covered_branches = std::move(covered);
    return store_->CompleteJob(c);
  };
  auto ok = complete(leased[0].job, {0, 2, 5});  // the fast path: a job is still queued
  DS_ASSERT_OK(ok);
  EXPECT_EQ(ok->coverage_refused, "");
  DS_ASSERT_OK(complete(leased[1].job, {2, 7}));
  DS_ASSERT_OK(complete(leased[2].job, {}));
  // A malformed list is dropped and said so; the outcome is kept.
  std::vector<int32_t> too_many(kMaxCoveredBranches + 1);
  for (size_t i = 0; i < too_many.size(); ++i) too_many[i] = static_cast<int32_t>(i);
  const std::vector<std::vector<int32_t>> bad = {{3, 2}, {4, 4}, {-1}, {kMaxBranchId}, too_many};
  for (size_t i = 0; i < bad.size(); ++i) {
    auto r = complete(leased[3 + i].job, bad[i]);
    DS_ASSERT_OK(r);
    EXPECT_FALSE(r->coverage_refused.empty()) << bad[i].size() << " ids";
  }
  auto last = Lease(store_.get(), 1);
  ASSERT_EQ(last.size(), 1u);
  DS_ASSERT_OK(complete(last[0].job, {9, kMaxBranchId - 1}));  // the slow path ends the run
  auto got = store_->GetRun(run.id);
  DS_ASSERT_OK(got);
  EXPECT_EQ(got->counts.passed, 9) << "no report was lost to its coverage";
  auto coverage = store_->RunCoverage(run.id);
  DS_ASSERT_OK(coverage);
  EXPECT_EQ(coverage->spec_hash, run.tmpl.spec_hash);
  EXPECT_EQ(coverage->covered, (std::vector<int32_t>{0, 2, 5, 7, 9, kMaxBranchId - 1}));
  EXPECT_EQ(coverage->jobs, 3);
  EXPECT_EQ(store_->RunCoverage(run.id + 1000).status().code(), absl::StatusCode::kNotFound);
  RunRow other = Submit(1);
  auto none = store_->RunCoverage(other.id);
  DS_ASSERT_OK(none);
  EXPECT_TRUE(none->covered.empty());
  EXPECT_EQ(none->jobs, 0);
}

TEST_F(StoreTest, CancelStopsLeasing) {
  RunRow run = Submit(10);
  auto leased = Lease(store_.get(), 3);
  ASSERT_EQ(leased.size(), 3u);
  auto cancelled = store_->CancelRun(run.id);
  DS_ASSERT_OK(cancelled);
  EXPECT_EQ(cancelled->state, v1::RUN_STATE_CANCELLED);
  EXPECT_EQ(cancelled->counts.cancelled, 10);
  EXPECT_TRUE(Lease(store_.get(), 10).empty());
  // Leased jobs learn it at their next heartbeat...
  std::vector<HeartbeatJob> hb_jobs;
  for (const auto& lj : leased) hb_jobs.push_back({lj.job.id, lj.job.lease_token});
  auto hb = store_->Heartbeat("", hb_jobs, 30000);
  DS_ASSERT_OK(hb);
  EXPECT_EQ(hb->cancel.size(), 3u);
  EXPECT_TRUE(hb->extended.empty());
  // ... and a completion arriving anyway is recorded, not counted.
  auto late = Complete(leased[0].job);
  DS_ASSERT_OK(late);
  EXPECT_TRUE(late->run_stopped);
  auto got = store_->GetRun(run.id);
  DS_ASSERT_OK(got);
  EXPECT_EQ(got->state, v1::RUN_STATE_CANCELLED);
  EXPECT_EQ(got->counts.cancelled, 10);
  // Cancelling again is a no-op; a finished run stays finished.
  DS_ASSERT_OK(store_->CancelRun(run.id));
  RunRow other = Submit(1);
  auto l = Lease(store_.get(), 1);
  ASSERT_EQ(l.size(), 1u);
  DS_ASSERT_OK(Complete(l[0].job));
  auto after = store_->CancelRun(other.id);
  DS_ASSERT_OK(after);
  EXPECT_EQ(after->state, v1::RUN_STATE_PASSED);
}

TEST_F(StoreTest, TwoRunsShareTheSlotsFairly) {
  RunRow a = Submit(6);
  RunRow b = Submit(6);
  // One job at a time, as workers with free slots ask: the runs alternate
  // (the one with fewer leased jobs goes first), instead of run a taking
  // every slot until its queue is empty.
  std::map<int64_t, int> leased_per_run;
  std::vector<LeasedJob> held;
  for (int i = 0; i < 4; ++i) {
    auto l = Lease(store_.get(), 1);
    ASSERT_EQ(l.size(), 1u);
    ++leased_per_run[l[0].job.run_id];
    held.push_back(l[0]);
  }
  EXPECT_EQ(leased_per_run[a.id], 2);
  EXPECT_EQ(leased_per_run[b.id], 2);
  // A batch is shared too: completing run a's jobs makes it the less busy one.
  for (const auto& lj : held)
    if (lj.job.run_id == a.id) DS_ASSERT_OK(Complete(lj.job));
  auto batch = Lease(store_.get(), 1);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].job.run_id, a.id);
  // Within a run, jobs go in swarm order.
  auto jobs = store_->ListJobs(a.id);
  DS_ASSERT_OK(jobs);
  EXPECT_EQ((*jobs)[0].state, v1::JOB_STATE_PASSED);
  EXPECT_EQ((*jobs)[1].state, v1::JOB_STATE_PASSED);
  EXPECT_EQ((*jobs)[2].state, v1::JOB_STATE_LEASED);
  EXPECT_EQ((*jobs)[3].state, v1::JOB_STATE_QUEUED);
}

TEST_F(StoreTest, StopAtFirstFinding) {
  RunRow run = Submit(10, /*stop_at_first=*/true);
  auto leased = Lease(store_.get(), 3);
  ASSERT_EQ(leased.size(), 3u);
  DS_ASSERT_OK(Complete(leased[0].job, v1::JOB_OUTCOME_PASSED));
  auto failed = Complete(leased[1].job, v1::JOB_OUTCOME_FAILED);
  DS_ASSERT_OK(failed);
  auto got = store_->GetRun(run.id);
  DS_ASSERT_OK(got);
  EXPECT_EQ(got->state, v1::RUN_STATE_FAILED);
  EXPECT_EQ(got->counts.passed, 1);
  EXPECT_EQ(got->counts.failed, 1);
  EXPECT_EQ(got->counts.cancelled, 8);
  EXPECT_TRUE(Lease(store_.get(), 10).empty());
  auto hb = store_->Heartbeat("", {{leased[2].job.id, leased[2].job.lease_token}}, 30000);
  DS_ASSERT_OK(hb);
  EXPECT_EQ(hb->cancel, std::vector<int64_t>{leased[2].job.id});
}

TEST_F(StoreTest, ExpiredLeasesRequeueAndGiveUpAfterMaxAttempts) {
  store_.reset();
  Store::Options o = StoreOptions();
  o.max_attempts = 2;
  auto s = Store::Open(o);
  DS_ASSERT_OK(s);
  store_ = std::move(*s);
  RunRow run = Submit(2);
  ASSERT_EQ(Lease(store_.get(), 2, 150).size(), 2u);
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  auto requeued = store_->RequeueExpiredLeases();
  DS_ASSERT_OK(requeued);
  EXPECT_EQ(*requeued, 2);
  auto got = store_->GetRun(run.id);
  DS_ASSERT_OK(got);
  EXPECT_EQ(got->counts.queued, 2);
  auto again = Lease(store_.get(), 2, 150);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].job.attempts, 2);
  DS_ASSERT_OK(Complete(again[0].job));
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  EXPECT_TRUE(Lease(store_.get(), 2, 150).empty()) << "attempts exhausted";
  requeued = store_->RequeueExpiredLeases();
  DS_ASSERT_OK(requeued);
  EXPECT_EQ(*requeued, 1);
  got = store_->GetRun(run.id);
  DS_ASSERT_OK(got);
  EXPECT_EQ(got->counts.error, 1);
  EXPECT_EQ(got->counts.passed, 1);
  EXPECT_EQ(got->state, v1::RUN_STATE_ERROR);
  EXPECT_NE(got->error, "");
}

TEST_F(StoreTest, LeasesMatchAdaptersAndLabels) {
  TargetRow t;
  t.name = "labelled";
  t.adapter = "http";
  t.address = "127.0.0.1:80";
  t.labels = {"gpu"};
  auto target = store_->CreateTarget(t);
  DS_ASSERT_OK(target);
  bool created;
  auto spec = store_->PutSpec("s", "s.dspec", "spec s;", 0, &created);
  DS_ASSERT_OK(spec);
  RunTemplate tmpl;
  tmpl.spec_hash = spec->hash;
  tmpl.target_id = target->id;
  tmpl.jobs = 2;
  DS_ASSERT_OK(store_->SubmitRun(tmpl, ""));
  LeaseRequest req;
  req.max_jobs = 2;
  req.adapters = {"jsonl"};
  req.labels = {"gpu"};
  EXPECT_TRUE(store_->LeaseJobs(req)->empty()) << "wrong adapter";
  req.adapters = {"http", "jsonl"};
  req.labels = {"cpu"};
  EXPECT_TRUE(store_->LeaseJobs(req)->empty()) << "missing label";
  req.labels = {"cpu", "gpu"};
  auto got = store_->LeaseJobs(req);
  DS_ASSERT_OK(got);
  EXPECT_EQ(got->size(), 2u);
  req.max_jobs = 0;
  EXPECT_EQ(store_->LeaseJobs(req).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(StoreTest, FailuresGroupIntoFindingsBySignature) {
  RunRow run = Submit(4);
  auto leased = Lease(store_.get(), 4);
  ASSERT_EQ(leased.size(), 4u);
  DS_ASSERT_OK(Complete(leased[0].job, v1::JOB_OUTCOME_FAILED, "sig-a", 9));
  DS_ASSERT_OK(Complete(leased[1].job, v1::JOB_OUTCOME_FAILED, "sig-a", 2));
  DS_ASSERT_OK(Complete(leased[2].job, v1::JOB_OUTCOME_FAILED, "sig-b", 5));
  DS_ASSERT_OK(Complete(leased[3].job, v1::JOB_OUTCOME_PASSED));
  auto list = store_->ListFindings(run.tmpl.spec_hash, 0, 0, Page{});
  DS_ASSERT_OK(list);
  ASSERT_EQ(list->items.size(), 2u);
  std::map<std::string, FindingRow> by_sig;
  for (const auto& f : list->items) by_sig[f.signature] = f;
  EXPECT_EQ(by_sig["sig-a"].count, 2);
  EXPECT_EQ(by_sig["sig-b"].count, 1);
  auto cxs = store_->ListCounterexamples(by_sig["sig-a"].id, 10);
  DS_ASSERT_OK(cxs);
  ASSERT_EQ(cxs->size(), 2u);
  EXPECT_EQ((*cxs)[0].cx.size, 2) << "smallest first";
  EXPECT_EQ(by_sig["sig-a"].smallest_counterexample_id, (*cxs)[0].id);
  EXPECT_EQ(by_sig["sig-a"].reason, "bad response (size 2)");
  EXPECT_EQ((*cxs)[0].seed, leased[1].job.seed) << "replayable: the job's swarm dimensions";
  EXPECT_EQ((*cxs)[0].feature_mask, leased[1].job.feature_mask);
  auto got = store_->GetRun(run.id);
  DS_ASSERT_OK(got);
  EXPECT_EQ(got->state, v1::RUN_STATE_FAILED);
  // A failed completion without its counterexample is malformed.
  RunRow r2 = Submit(1);
  auto l2 = Lease(store_.get(), 1);
  ASSERT_EQ(l2.size(), 1u);
  Completion c;
  c.job_id = l2[0].job.id;
  c.lease_token = l2[0].job.lease_token;
  c.outcome = v1::JOB_OUTCOME_FAILED;
  EXPECT_EQ(store_->CompleteJob(c).status().code(), absl::StatusCode::kInvalidArgument);
  c.outcome = static_cast<v1::JobOutcome>(99);  // not a value the API defines
  EXPECT_EQ(store_->CompleteJob(c).status().code(), absl::StatusCode::kInvalidArgument);
  // So is one without its signature: the store never computes one of its
  // own (one definition, harness::ComputeSignature, on the worker).
  auto unsigned_failure = Complete(l2[0].job, v1::JOB_OUTCOME_FAILED, "");
  EXPECT_EQ(unsigned_failure.status().code(), absl::StatusCode::kInvalidArgument) << unsigned_failure.status();
  EXPECT_TRUE(absl::StrContains(unsigned_failure.status().message(), "signature")) << unsigned_failure.status();
  (void)r2;
}

// A violated spec property (docs/spec-language.md: properties) is a finding
// of its own kind, which the schema's CHECK allows since migration 14.
TEST_F(StoreTest, APropertyFindingIsStoredWithItsKind) {
  RunRow run = Submit(1);
  auto leased = Lease(store_.get(), 1);
  ASSERT_EQ(leased.size(), 1u);
  DS_ASSERT_OK(Complete(leased[0].job, v1::JOB_OUTCOME_FAILED, "sig-property", 1, v1::VERDICT_KIND_PROPERTY));
  auto list = store_->ListFindings(run.tmpl.spec_hash, 0, 0, Page{});
  DS_ASSERT_OK(list);
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0].kind, v1::VERDICT_KIND_PROPERTY);
  EXPECT_EQ(QueryInt("SELECT count(*) FROM findings WHERE kind = 'property'"), 1);
}

TEST_F(StoreTest, DatabaseOutageIsUnavailableThenRecovers) {
  RunRow run = Submit(3);
  auto leased = Lease(store_.get(), 1);
  ASSERT_EQ(leased.size(), 1u);
  // Fill the pool with several connections, all stale after the restart.
  {
    std::vector<std::thread> readers;
    for (int i = 0; i < 6; ++i)
      readers.emplace_back([&] {
        for (int k = 0; k < 20; ++k) (void)store_->GetRun(run.id);
      });
    for (auto& t : readers) t.join();
  }
  int port = pg_->port();
  DS_ASSERT_OK(pg_->Stop());

  auto down = store_->GetRun(run.id);
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.status().code(), absl::StatusCode::kUnavailable) << down.status();
  auto lease_down = store_->LeaseJobs(LeaseRequest{});
  EXPECT_EQ(lease_down.status().code(), absl::StatusCode::kUnavailable) << lease_down.status();
  auto complete_down = Complete(leased[0].job);
  EXPECT_EQ(complete_down.status().code(), absl::StatusCode::kUnavailable);

  StartDb(port);  // same port: the store's URL still points there
  ASSERT_FALSE(HasFatalFailure());
  auto up = store_->GetRun(run.id);
  DS_ASSERT_OK(up);
  EXPECT_EQ(up->counts.leased, 1);
  // The completion that failed during the outage succeeds on retry.
  DS_ASSERT_OK(Complete(leased[0].job));
  auto after = store_->GetRun(run.id);
  DS_ASSERT_OK(after);
  EXPECT_EQ(after->counts.passed, 1);
}

}  // namespace
}  // namespace dualswarm::coord
