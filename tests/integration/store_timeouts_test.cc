// The store against a database that answers slowly or not at all, on a real
// PostgreSQL: a statement blocked by another session's lock is cancelled by
// statement_timeout; a frozen server (every PostgreSQL process SIGSTOPped,
// so it cannot even cancel) is given up on by the socket watchdog. Both
// answer UNAVAILABLE within a bound, no call hangs, and the store works
// again once the database does.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "tests/common/processes.h"
#include "tests/integration/pg_fixture.h"

namespace dualswarm::coord::testing {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr int kStatementTimeoutMs = 500;
const double kGiveUpSeconds = GiveUpOnDatabaseAfter(kStatementTimeoutMs).count() / 1000.0;

class StoreTimeoutsTest : public PgTest {
 protected:
  Store::Options StoreOptions() override {
    Store::Options o = PgTest::StoreOptions();
    o.statement_timeout_ms = kStatementTimeoutMs;
    o.pool_size = 4;
    return o;
  }

  void Signal(int sig) {
    for (pid_t p : dualswarm::testing::PostgresProcesses(pg_->cluster_dir())) kill(p, sig);
  }
};

TEST_F(StoreTimeoutsTest, AStatementBlockedByALockEndsUnavailableAndTheStoreCarriesOn) {
  RunRow run = Submit(2);
  pqxx::connection other(pg_->ConnectionString());
  auto locker = std::make_unique<pqxx::work>(other);
  locker->exec("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE");

  auto t0 = Clock::now();
  auto blocked = store_->GetRun(run.id);
  double took = SecondsSince(t0);
  ASSERT_FALSE(blocked.ok());
  EXPECT_TRUE(absl::IsUnavailable(blocked.status())) << blocked.status();
  EXPECT_TRUE(absl::StrContains(blocked.status().message(), "too slow")) << blocked.status();
  EXPECT_GE(took, kStatementTimeoutMs / 1000.0 * 0.9);
  EXPECT_LT(took, kGiveUpSeconds) << "the server's statement_timeout, not the watchdog, should end it";

  locker->abort();
  locker.reset();
  auto again = store_->GetRun(run.id);
  DS_ASSERT_OK(again);
  EXPECT_EQ(again->id, run.id);
}

TEST_F(StoreTimeoutsTest, AFrozenDatabaseIsGivenUpOnAndTheStoreRecoversWhenItThaws) {
  RunRow run = Submit(2);
  DS_ASSERT_OK(store_->GetRun(run.id));  // a pooled connection to the live server
  ASSERT_FALSE(dualswarm::testing::PostgresProcesses(pg_->cluster_dir()).empty());
  Signal(SIGSTOP);
  absl::Cleanup thaw = [&] { Signal(SIGCONT); };

  // The pooled connection: the server never answers; the watchdog ends it.
  auto t0 = Clock::now();
  auto frozen = store_->GetRun(run.id);
  double took = SecondsSince(t0);
  ASSERT_FALSE(frozen.ok());
  EXPECT_TRUE(absl::IsUnavailable(frozen.status())) << frozen.status();
  EXPECT_TRUE(absl::StrContains(frozen.status().message(), "no answer within")) << frozen.status();
  EXPECT_GE(took, kGiveUpSeconds * 0.9);
  EXPECT_LT(took, kGiveUpSeconds + 3);

  // More callers than pooled connections, all at once: new connections
  // wait for the frozen server up to connect_timeout (5 s), waiting for a
  // free connection ends too; every call answers UNAVAILABLE, none hangs.
  std::vector<std::thread> callers;
  std::atomic<int> unavailable{0}, other{0};
  std::atomic<double> slowest{0};
  t0 = Clock::now();
  for (int i = 0; i < 10; ++i)
    callers.emplace_back([&] {
      auto r = store_->GetRun(run.id);
      (absl::IsUnavailable(r.status()) ? unavailable : other)++;
      double s = SecondsSince(t0);
      double seen = slowest.load();
      while (s > seen && !slowest.compare_exchange_weak(seen, s)) {
      }
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(unavailable.load(), 10);
  EXPECT_EQ(other.load(), 0);
  EXPECT_LT(slowest.load(), 2 * (5 + kGiveUpSeconds) + 2) << "a call waited far longer than its bounds";

  std::move(thaw).Invoke();
  bool back = dualswarm::testing::WaitFor([&] { return store_->GetRun(run.id).ok(); }, std::chrono::seconds(20));
  EXPECT_TRUE(back) << "the store did not recover after the database thawed";
  auto after = store_->GetRun(run.id);
  DS_ASSERT_OK(after);
  EXPECT_EQ(after->tmpl.jobs, 2);
}

}  // namespace
}  // namespace dualswarm::coord::testing
