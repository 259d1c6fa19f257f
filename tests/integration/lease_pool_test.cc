// Integration tests of the coordinator's lease pool (lease_pool.h) on a real
// PostgreSQL: prefetched jobs are handed out once and recorded under the
// worker that got them (at its heartbeat or completion); held jobs nobody took go back to the queue as if
// never leased; a cancelled run's held jobs are not handed out; shutdown
// returns what is held; many concurrent lessees through one pool never share
// a job and the run ends passed; slow demand prefetches nothing.
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "services/coordinator/lease_pool.h"
#include "tests/integration/pg_fixture.h"

namespace dualswarm::coord {
namespace {

using testing::PgTest;

class LeasePoolTest : public PgTest {
 protected:
  // Options for a pool that holds jobs for `hold_ms` and prefetches at
  // least `min_prefetch` with every database lease.
  static LeasePool::Options Holding(int64_t hold_ms, int min_prefetch) {
    LeasePool::Options o;
    o.hold_ms = hold_ms;
    o.min_prefetch = min_prefetch;
    return o;
  }

  static LeaseRequest Request(const std::string& worker, int max_jobs) {
    LeaseRequest req;
    req.worker_id = worker;
    req.max_jobs = max_jobs;
    req.lease_ms = 30000;
    return req;
  }

  std::vector<LeasedJob> Lease(LeasePool& pool, const std::string& worker, int max_jobs) {
    auto got = pool.Lease(Request(worker, max_jobs));
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? *got : std::vector<LeasedJob>{};
  }

  void Complete(const LeasedJob& lj) {
    Completion c;
    c.job_id = lj.job.id;
    c.lease_token = lj.job.lease_token;
    c.worker_id = lj.job.worker_id;
    c.outcome = v1::JOB_OUTCOME_PASSED;
    auto res = store_->CompleteJob(c);
    EXPECT_TRUE(res.ok()) << res.status();
  }

  std::string QueryText(const std::string& sql) {
    pqxx::connection c(pg_->ConnectionString());
    pqxx::work w(c);
    auto f = w.exec1(sql)[0];
    return f.is_null() ? "<null>" : f.as<std::string>();
  }
};

TEST_F(LeasePoolTest, PrefetchedJobsAreHandedOutOnceUnderTheWorkerThatGotThem) {
  RunRow run = Submit(40);
  LeasePool pool(store_.get(), Holding(10000, 5));  // nothing is returned during the test
  auto first = Lease(pool, "a", 1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(pool.stats().held, 5);
  EXPECT_EQ(pool.stats().database_leases, 1);
  // Worker b is served from what a's call prefetched, without the database.
  auto second = Lease(pool, "b", 2);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(pool.stats().database_leases, 1);
  EXPECT_EQ(pool.stats().from_pool, 2);
  for (const auto& lj : second) EXPECT_EQ(lj.job.worker_id, "b");
  // The database names b as the holder from b's first heartbeat (the lease
  // was taken out in a's name) ...
  auto JobWorker = [&](const LeasedJob& lj) {
    return QueryText(absl::StrCat("SELECT worker_id FROM jobs WHERE id = ", lj.job.id));
  };
  auto AttemptWorker = [&](const LeasedJob& lj) {
    return QueryText(absl::StrCat("SELECT worker_id FROM job_attempts WHERE job_id = ", lj.job.id));
  };
  EXPECT_EQ(JobWorker(second[0]), "a");
  auto hb = store_->Heartbeat("b", {{second[0].job.id, second[0].job.lease_token}}, 30000);
  DS_ASSERT_OK(hb);
  EXPECT_EQ(hb->extended.size(), 1u);
  EXPECT_EQ(JobWorker(second[0]), "b");
  EXPECT_EQ(AttemptWorker(second[0]), "b");
  // ... or from its completion.
  {
    Completion c;
    c.job_id = second[1].job.id;
    c.lease_token = second[1].job.lease_token;
    c.worker_id = "b";
    c.outcome = v1::JOB_OUTCOME_PASSED;
    DS_ASSERT_OK(store_->CompleteJob(c));
  }
  EXPECT_EQ(JobWorker(second[1]), "b");
  EXPECT_EQ(AttemptWorker(second[1]), "b");
  EXPECT_EQ(JobWorker(first[0]), "a");
  // Everything, through the pool, exactly once.
  std::map<int64_t, int> times;
  for (const auto& lj : first) ++times[lj.job.id];
  for (const auto& lj : second) ++times[lj.job.id];
  std::vector<LeasedJob> all = first;
  all.insert(all.end(), second.begin(), second.end());
  for (int i = 0; i < 100; ++i) {
    auto got = Lease(pool, i % 2 ? "a" : "b", 3);
    if (got.empty()) break;
    for (const auto& lj : got) {
      ++times[lj.job.id];
      all.push_back(lj);
    }
  }
  EXPECT_EQ(times.size(), 40u);
  for (const auto& [id, n] : times) EXPECT_EQ(n, 1) << "job " << id;
  for (const auto& lj : all) {
    EXPECT_EQ(lj.job.attempts, 1);
    if (lj.job.id != second[1].job.id) Complete(lj);
  }
  auto done = store_->GetRun(run.id);
  DS_ASSERT_OK(done);
  EXPECT_EQ(done->state, v1::RUN_STATE_PASSED);
  EXPECT_EQ(done->counts.passed, 40);
  EXPECT_EQ(QueryText("SELECT count(*) FROM job_attempts"), "40");
}

TEST_F(LeasePoolTest, HeldJobsNobodyTookGoBackToTheQueueAsIfNeverLeased) {
  RunRow run = Submit(10);
  std::atomic<int> woken{0};
  LeasePool::Options o = Holding(100, 4);
  o.on_returned = [&](int jobs) { woken += jobs; };
  LeasePool pool(store_.get(), o);
  auto got = Lease(pool, "a", 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(QueryText("SELECT count(*) FROM jobs WHERE state = 'leased'"), "5");
  // The maintenance thread returns them after the hold time.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (pool.stats().returned < 4 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(pool.stats().returned, 4);
  EXPECT_EQ(pool.stats().held, 0);
  EXPECT_EQ(woken.load(), 4);
  EXPECT_EQ(QueryText("SELECT count(*) FROM jobs WHERE state = 'leased'"), "1");
  EXPECT_EQ(QueryText("SELECT count(*) FROM jobs WHERE state = 'queued' AND attempts = 0"
                      " AND lease_token IS NULL AND worker_id IS NULL AND lease_expires_at IS NULL"),
            "9");
  EXPECT_EQ(QueryText("SELECT count(*) FROM job_attempts"), "1");
  // Leased again later, they start at attempt 1 and the run completes.
  std::vector<LeasedJob> rest;
  for (;;) {
    LeaseRequest req = Request("b", 4);
    auto more = store_->LeaseJobs(req);
    DS_ASSERT_OK(more);
    if (more->empty()) break;
    rest.insert(rest.end(), more->begin(), more->end());
  }
  ASSERT_EQ(rest.size(), 9u);
  for (const auto& lj : rest) EXPECT_EQ(lj.job.attempts, 1);
  Complete(got[0]);
  for (const auto& lj : rest) Complete(lj);
  auto done = store_->GetRun(run.id);
  DS_ASSERT_OK(done);
  EXPECT_EQ(done->state, v1::RUN_STATE_PASSED);
}

TEST_F(LeasePoolTest, ACompletedOrCancelledJobIsNotReturned) {
  RunRow run = Submit(6);
  LeasePool pool(store_.get(), Holding(10000, 3));
  auto got = Lease(pool, "a", 1);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(pool.stats().held, 3);
  // Returning only touches a lease that is still current: cancel the run,
  // then return everything the pool holds.
  DS_ASSERT_OK(store_->CancelRun(run.id));
  ASSERT_TRUE(pool.Close().ok());
  EXPECT_EQ(pool.stats().returned, 0);
  EXPECT_EQ(QueryText("SELECT count(*) FROM jobs WHERE state = 'cancelled'"), "6");
}

TEST_F(LeasePoolTest, ACancelledRunsHeldJobsAreNotHandedOut) {
  RunRow a = Submit(6);
  LeasePool pool(store_.get(), Holding(10000, 4));
  auto got = Lease(pool, "w", 1);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].job.run_id, a.id);
  ASSERT_EQ(pool.stats().held, 4);
  DS_ASSERT_OK(store_->CancelRun(a.id));
  pool.DropRun(a.id);
  EXPECT_EQ(pool.stats().held, 0);
  RunRow b = Submit(2);
  auto next = Lease(pool, "w", 2);
  ASSERT_EQ(next.size(), 2u);
  for (const auto& lj : next) EXPECT_EQ(lj.job.run_id, b.id);
}

TEST_F(LeasePoolTest, CloseReturnsWhatIsHeldAndPrefetchesNothingAfterwards) {
  Submit(20);
  LeasePool pool(store_.get(), Holding(10000, 6));
  ASSERT_EQ(Lease(pool, "w", 2).size(), 2u);
  ASSERT_EQ(pool.stats().held, 6);
  ASSERT_TRUE(pool.Close().ok());
  EXPECT_EQ(pool.stats().returned, 6);
  EXPECT_EQ(QueryText("SELECT count(*) FROM jobs WHERE state = 'queued'"), "18");
  ASSERT_EQ(Lease(pool, "w", 1).size(), 1u);
  EXPECT_EQ(pool.stats().held, 0);
  EXPECT_EQ(QueryText("SELECT count(*) FROM jobs WHERE state = 'leased'"), "3");
}

TEST_F(LeasePoolTest, ManyLesseesThroughOnePoolNeverShareAJob) {
  constexpr int kJobs = 600;
  RunRow run = Submit(kJobs);
  // Demand-driven prefetch, refills and returns all happen.
  LeasePool pool(store_.get(), Holding(200, 0));
  std::mutex mu;
  std::map<int64_t, int> times;
  std::map<int64_t, std::string> got_by;
  std::atomic<int> errors{0}, handed{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
      while (std::chrono::steady_clock::now() < deadline) {
        auto got = pool.Lease(Request(absl::StrCat("w", i), 1 + i % 3));
        if (!got.ok()) {
          ++errors;
          return;
        }
        if (got->empty()) {
          // Another lessee's refill may still bring jobs: stop only when
          // every job was handed out.
          if (handed.load() == kJobs) return;
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          continue;
        }
        handed += static_cast<int>(got->size());
        for (const auto& lj : *got) {
          {
            std::lock_guard<std::mutex> lock(mu);
            ++times[lj.job.id];
            got_by[lj.job.id] = absl::StrCat("w", i);
          }
          Completion c;
          c.job_id = lj.job.id;
          c.lease_token = lj.job.lease_token;
          c.worker_id = absl::StrCat("w", i);
          c.outcome = v1::JOB_OUTCOME_PASSED;
          if (!store_->CompleteJob(c).ok()) ++errors;
        }
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(times.size(), static_cast<size_t>(kJobs));
  for (const auto& [id, n] : times) EXPECT_EQ(n, 1) << "job " << id;
  EXPECT_GT(pool.stats().from_pool, 0) << "demand this high prefetches";
  EXPECT_LT(pool.stats().database_leases, pool.stats().handed_out);
  auto done = store_->GetRun(run.id);
  DS_ASSERT_OK(done);
  EXPECT_EQ(done->state, v1::RUN_STATE_PASSED);
  EXPECT_EQ(done->counts.passed, kJobs);
  // Every job and attempt is recorded under the worker that got it.
  pqxx::connection conn(pg_->ConnectionString());
  pqxx::work w(conn);
  for (const auto& row : w.exec("SELECT id, COALESCE(worker_id, '') FROM jobs"))
    EXPECT_EQ(row[1].as<std::string>(), got_by[row[0].as<int64_t>()]) << "job " << row[0].as<int64_t>();
  EXPECT_EQ(QueryText("SELECT count(*) FROM job_attempts a JOIN jobs j ON j.id = a.job_id"
                      " WHERE a.worker_id IS DISTINCT FROM j.worker_id OR a.worker_id IS NULL"),
            "0");
}

TEST_F(LeasePoolTest, SlowDemandPrefetchesNothing) {
  Submit(10);
  LeasePool::Options o;  // the coordinator's default hold time
  LeasePool pool(store_.get(), o);
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(Lease(pool, "w", 2).size(), 2u);
    EXPECT_EQ(pool.stats().held, 0);
  }
  EXPECT_EQ(pool.stats().database_leases, 4);
  EXPECT_EQ(QueryText("SELECT count(*) FROM jobs WHERE state = 'queued'"), "2");
}

}  // namespace
}  // namespace dualswarm::coord
