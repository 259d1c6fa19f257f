// Test fixture for integration tests: a real PostgreSQL (EmbeddedPostgres)
// in a fresh temporary directory per test, a Store opened on it, and a way
// to submit a run (spec, target, jobs).
#ifndef DUALSWARM_TESTS_INTEGRATION_PG_FIXTURE_H_
#define DUALSWARM_TESTS_INTEGRATION_PG_FIXTURE_H_

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "services/coordinator/store/embedded_pg.h"
#include "services/coordinator/store/store.h"

namespace dualswarm::coord::testing {

template <typename T>
const absl::Status& StatusOf(const absl::StatusOr<T>& s) {
  return s.status();
}
inline const absl::Status& StatusOf(const absl::Status& s) { return s; }

// ASSERT that a Status or StatusOr is OK, printing it otherwise.
#define DS_ASSERT_OK(expr)                                                                      \
  do {                                                                                          \
    const auto& ds_st_ = (expr);                                                                \
    ASSERT_TRUE(ds_st_.ok()) << #expr << ": " << ::dualswarm::coord::testing::StatusOf(ds_st_); \
  } while (0)

// Expects `store` to refuse the target `t` with INVALID_ARGUMENT saying `why`.
inline void ExpectRefused(Store* store, const TargetRow& t, const std::string& why) {
  auto r = store->CreateTarget(t);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << t.name << ": " << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), why)) << t.name << ": " << r.status();
}

class PgTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ds-itest-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    tmp_ = tmpl;
    // As root the server runs as user postgres, which must reach the cluster.
    chmod(tmp_.c_str(), 0711);
    StartDb(0);
    if (HasFatalFailure()) return;
    auto store = Store::Open(StoreOptions());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  void TearDown() override {
    store_.reset();
    if (pg_ != nullptr) (void)pg_->Stop();
    pg_.reset();
    std::error_code ec;
    if (!tmp_.empty()) std::filesystem::remove_all(tmp_, ec);
  }

  // (Re)starts the database; port 0 picks a free one.
  void StartDb(int port) {
    EmbeddedPostgres::Options o;
    o.root = tmp_ + "/db";
    o.port = port;
    o.unsafe_fast = true;
    pg_ = std::make_unique<EmbeddedPostgres>(o);
    absl::Status st = pg_->Start();
    ASSERT_TRUE(st.ok()) << st;
  }

  // The jsonl target every run of these tests uses (created on first use).
  int64_t KvTarget() {
    if (target_id_ == 0) {
      TargetRow t;
      t.name = "kv-ref";
      t.adapter = "jsonl";
      t.launch = "/bin/kv --port {port}";
      auto target = store_->CreateTarget(t);
      EXPECT_TRUE(target.ok()) << target.status();
      target_id_ = target.ok() ? target->id : 0;
    }
    return target_id_;
  }

  // A spec, a target and a run of `jobs` jobs.
  RunRow Submit(int jobs, bool stop_at_first = false, uint64_t seed = 42, int choice_sites = 6) {
    bool created = false;
    auto spec = store_->PutSpec("kv", "kv.dspec", absl::StrCat("spec kv; // ", next_spec_++), choice_sites, &created);
    EXPECT_TRUE(spec.ok()) << spec.status();
    RunTemplate tmpl;
    tmpl.spec_hash = spec.ok() ? spec->hash : "";
    tmpl.target_id = KvTarget();
    tmpl.jobs = jobs;
    tmpl.seed = seed;
    tmpl.stop_at_first_finding = stop_at_first;
    auto run = store_->SubmitRun(tmpl, "test");
    EXPECT_TRUE(run.ok()) << run.status();
    return run.ok() ? *run : RunRow{};
  }

  virtual Store::Options StoreOptions() {
    Store::Options o;
    o.url = pg_->ConnectionString();
    return o;
  }

  std::string tmp_;
  std::unique_ptr<EmbeddedPostgres> pg_;
  std::unique_ptr<Store> store_;
  int64_t target_id_ = 0;
  int next_spec_ = 0;
};

}  // namespace dualswarm::coord::testing

#endif  // DUALSWARM_TESTS_INTEGRATION_PG_FIXTURE_H_
