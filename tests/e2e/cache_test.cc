// The tester playing a shared HTTP cache's clients and origin at once
// (specs/http_cache.dspec) against the reference cache
// (tests/suts/cache_server.cc): the correct cache passes with one and with
// several pooled origin connections while answering from its store,
// revalidating and invalidating; every mutant is found by each of a few
// seeds; and the CLI shrinks a finding and replays it.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/check/checker.h"
#include "gtest/gtest.h"
#include "tests/common/job_runs.h"
#include "tests/common/processes.h"
#include "tests/common/shipped_spec.h"
#include "workers/runner/runner.h"

namespace dualswarm::workers {
namespace {

std::string RefCache(int mutant, int origin_connections) {
  return absl::StrCat(DS_REF_CACHE, " --port {port} --origin-port {origin_port} --origin-connections ",
                      origin_connections, " --mutant ", mutant);
}

JobOptions CacheJob(int mutant, int origin_connections, uint64_t seed, uint64_t steps) {
  JobOptions o = testing::IntermediaryJobOptionsFor(RefCache(mutant, origin_connections), "http", seed, steps);
  return o;
}

// How the cache answered: from its store (a client response with Age),
// after revalidating (a conditional request the origin answered 304), or
// by invalidating (a client GET after a successful unsafe request).
struct CacheUse {
  size_t hits = 0, conditionals = 0, not_modified = 0;
};

CacheUse UseOf(const std::vector<check::Observation>& trace) {
  CacheUse u;
  for (const check::Observation& o : trace) {
    const ir::Value* headers = o.msg.Find("headers");
    const ir::Value* status = o.msg.Find("status");
    if (o.side == check::Side::kClient && o.kind == check::Observation::Kind::kReceived)
      u.hits += headers != nullptr && headers->Find("age") != nullptr;
    if (o.side != check::Side::kOrigin) continue;
    u.conditionals += o.kind == check::Observation::Kind::kReceived && headers != nullptr &&
                      headers->Find("if-none-match") != nullptr;
    u.not_modified +=
        o.kind == check::Observation::Kind::kSent && status != nullptr && status->is_int() && status->as_int() == 304;
  }
  return u;
}

TEST(HttpCache, TheCorrectCachePassesWithOneOrSeveralOriginConnections) {
  auto spec = Shipped("http_cache.dspec");
  ASSERT_NE(spec, nullptr);
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const int origin_connections = 1 + static_cast<int>(seed % 3);
    auto r = RunJob(spec, CacheJob(0, origin_connections, seed, 1000));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
    EXPECT_EQ(r->received, 1000u);
    const CacheUse u = UseOf(r->trace);
    EXPECT_GE(u.hits, 100u) << "seed " << seed << ": the cache answers from its store";
    EXPECT_GE(u.conditionals, 20u) << "seed " << seed << ": the cache revalidates";
    EXPECT_GE(u.not_modified, 10u) << "seed " << seed << ": the origin confirms stored responses";
  }
}

TEST(HttpCache, EveryCacheMutantIsFound) {
  auto spec = Shipped("http_cache.dspec");
  ASSERT_NE(spec, nullptr);
  for (int mutant = 1; mutant <= 10; ++mutant) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      auto r = RunJob(spec, CacheJob(mutant, 2, seed, 1000));
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->outcome, Outcome::kSafety)
          << "mutant " << mutant << ", seed " << seed << ": " << testing::DescribeJobResult(*r);
    }
  }
}

// A cache that keeps serving what a DELETE removed: shrunk to a few
// requests and replayed.
TEST(HttpCache, AMissedInvalidationIsShrunkAndReplayedByTheCli) {
  auto r = testing::RunCommand(
      {DUALSWARM_CLI, "test", "--spec", std::string(DUALSWARM_SOURCE_DIR) + "/specs/http_cache.dspec", "--launch",
       RefCache(5, 2), "--origins", "1", "--seed", "1", "--steps", "1000", "--shrink-time", "20"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "<== REJECTED")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "DELETE") || absl::StrContains(r.out, "PUT") || absl::StrContains(r.out, "POST"))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "of 5 reproduced")) << r.out;
  const int shrunk = testing::ShrunkRequests(r.out);
  EXPECT_GE(shrunk, 1) << r.out;
  EXPECT_LE(shrunk, 8) << r.out;
}

// A cache that does not merge a 304's fields into what it stored: the
// finding needs the origin's answers to a GET and to its revalidation, and
// those answers travel with their client requests through shrinking
// (engine/harness/origin_answers.h), so it shrinks to the few requests
// that store and revalidate a response and replays.
TEST(HttpCache, AnUnmerged304IsShrunkToAFewRequestsThatReplay) {
  auto r = testing::RunCommand(
      {DUALSWARM_CLI, "test", "--spec", std::string(DUALSWARM_SOURCE_DIR) + "/specs/http_cache.dspec", "--launch",
       RefCache(4, 2), "--origins", "1", "--seed", "1", "--steps", "1000", "--shrink-time", "30"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "<== REJECTED")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "if-none-match")) << r.out;  // the revalidation is kept
  const int shrunk = testing::ShrunkRequests(r.out);
  EXPECT_GE(shrunk, 2) << r.out;
  EXPECT_LE(shrunk, 8) << r.out;
  // At least half of the replays (issue 18's bar): the shrunk input may
  // keep a GET and a HEAD in flight at once, which replays by timing (3 of
  // 5 once in CI, with the 2 cores busy).
  EXPECT_GE(testing::ReplaysReproduced(r.out), 3) << r.out;
}

// A cache that revalidates with the entity-tag of the path's previous
// response: a sequential bug (store, replace, revalidate), but at 4
// connections with 2 origin connections the run usually reaches it through
// a race (which origin connection answers first decides what is stored),
// and many found inputs replay too rarely to shrink. So the shrinker first
// tests again one request at a time (shrink_job.cc: TryFoundOneAtATime)
// and shrinks what that finds: a few requests that replay.
TEST(HttpCache, AStaleEntityTagIsShrunkToAFewRequestsThatReplay) {
  auto r = testing::RunCommand(
      {DUALSWARM_CLI, "test", "--spec", std::string(DUALSWARM_SOURCE_DIR) + "/specs/http_cache.dspec", "--launch",
       RefCache(7, 2), "--origins", "1", "--seed", "2", "--steps", "1000", "--shrink-time", "30"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  // (Seed 2's second one-at-a-time run, seed 2000008, meets this failure,
  // as a GET answered 200; the run may have found it as a GET answered
  // 500, as the origin's answer fell: the same failure for an
  // intermediary, whose status is the origin's.)
  EXPECT_TRUE(absl::StrContains(r.out, "if-none-match")) << r.out;  // the revalidation is kept
  const int shrunk = testing::ShrunkRequests(r.out);
  EXPECT_GE(shrunk, 2) << r.out;
  EXPECT_LE(shrunk, 8) << r.out;
  EXPECT_GE(testing::ReplaysReproduced(r.out), 4) << r.out;
}

}  // namespace
}  // namespace dualswarm::workers
