// The resp adapter end to end: Debian's redis-server (no persistence, on a
// free loopback port) must pass specs/redis.dspec through `dualswarm test
// --adapter resp` for 20 seeds of 2,000 steps at 4 connections, and so must
// a primary with two replicas (a replica that takes writes must not); the
// reference RESP server (tests/suts/resp_server.cc) must pass when correct
// and be caught in each of its mutants.
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/check/checker.h"
#include "engine/harness/executor.h"
#include "gtest/gtest.h"
#include "tests/common/job_runs.h"
#include "tests/common/processes.h"
#include "tests/common/shipped_spec.h"
#include "workers/runner/runner.h"

namespace dualswarm::workers {
namespace {

const char kRedisLaunch[] = "/usr/bin/redis-server --save '' --appendonly no --port {port} --bind 127.0.0.1";

JobOptions Options(const std::string& launch, uint64_t seed, uint64_t steps) {
  return testing::JobOptionsFor(launch, "resp", seed, steps);
}

std::string RefResp(int mutant) { return absl::StrCat(DS_REF_RESP, " --port {port} --dir {dir} --mutant ", mutant); }

// Redis documents every reply the spec expects (docs/real-servers.md): any
// finding here is a spec bug or a departure to be documented, so none may
// appear. Through the CLI, as a user runs it; every other seed with a
// random feature mask.
TEST(RealServers, RedisPasses20SeedsOf2000StepsAt4Connections) {
  ASSERT_EQ(::access("/usr/bin/redis-server", X_OK), 0) << "redis-server is installed by scripts/setup.sh";
  for (int seed = 1; seed <= 20; ++seed) {
    std::vector<std::string> argv = {DUALSWARM_CLI,   "test",
                                     "--spec",        std::string(DUALSWARM_SOURCE_DIR) + "/specs/redis.dspec",
                                     "--adapter",     "resp",
                                     "--launch",      kRedisLaunch,
                                     "--seed",        absl::StrCat(seed),
                                     "--steps",       "2000",
                                     "--connections", "4",
                                     "--no-shrink"};
    if (seed % 2 == 1) argv.push_back("--swarm");
    auto r = testing::RunCommand(argv);
    ASSERT_EQ(r.exit_code, 0) << "seed " << seed << ":\n" << r.out << r.err;
    EXPECT_NE(r.out.find("PASSED: 2000 requests on 4 connections"), std::string::npos) << r.out << r.err;
  }
}

// Pipelining: 16 requests in flight over 4 connections, so a connection
// carries several at once and Redis answers them in order.
TEST(RealServers, RedisPassesPipelined) {
  ASSERT_EQ(::access("/usr/bin/redis-server", X_OK), 0) << "redis-server is installed by scripts/setup.sh";
  auto spec = Shipped("redis.dspec");
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    JobOptions o = Options(kRedisLaunch, seed, 2000);
    o.exec.max_in_flight = 16;
    auto r = RunJob(spec, o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
    ASSERT_EQ(r->received, 2000u);
  }
}

// A primary (node 0) and two replicas (`replicaof`, docs/real-servers.md).
// A replica starts once the primary answers, so that its first sync
// succeeds at once (one started before would retry a second later, after
// a short run has ended: it would have been tested while empty).
std::string RedisPrimaryAndReplicas(const std::string& replica_options = "") {
  return absl::StrCat(
      "if [ {node} -gt 0 ]; then until /usr/bin/redis-cli -p {port_0} ping >/dev/null 2>&1; do sleep 0.02; done; fi; "
      "exec /usr/bin/redis-server --save '' --appendonly no --dir {dir} --port {port} --bind 127.0.0.1 "
      "--repl-diskless-sync-delay 0 $([ {node} -gt 0 ] && echo --replicaof 127.0.0.1 {port_0} ",
      replica_options, ")");
}

// 20,000 requests: a run must outlast the replicas' first
// synchronisation to see them show written values (2,000 requests took
// 0.1-0.2 s once the checker got faster, and a CI run saw none).
JobOptions ReplicatedRedisOptions(const std::string& launch, uint64_t seed) {
  JobOptions o = Options(launch, seed, 20000);
  o.nodes = 3;
  o.exec.connections = 6;  // round-robin: connections 1, 2, 4, 5 talk to replicas
  return o;
}

// The cluster above under a nemesis that injects `faults`, one every
// `every_ms` milliseconds, each lasting as long.
JobOptions ReplicatedRedisUnder(std::vector<std::string> faults, int every_ms, uint64_t seed) {
  JobOptions o = ReplicatedRedisOptions(RedisPrimaryAndReplicas(), seed);
  o.nemesis.faults = std::move(faults);
  o.nemesis.interval_ms = every_ms;
  o.nemesis.duration_ms = every_ms;
  return o;
}

// How many replies on replica connections showed a value (replication at
// work) and how many refused a write.
struct ReplicaReplies {
  int values = 0;
  int readonly = 0;
};

ReplicaReplies CountReplicaReplies(const JobResult& r) {
  ReplicaReplies n;
  for (const auto& o : r.trace) {
    if (o.kind != check::Observation::Kind::kReceived || o.conn % 3 == 0 || !o.msg.is_map()) continue;
    if (o.msg.Find("bulk") != nullptr) ++n.values;
    const ir::Value* err = o.msg.Find("err");
    if (err != nullptr && err->is_string() && err->as_string().rfind("READONLY ", 0) == 0) ++n.readonly;
  }
  return n;
}

// Replicas lag but never go back, and refuse writes (specs/redis.dspec):
// Redis's own replication docs promise both, so no finding may appear.
TEST(RealServers, RedisPrimaryAndTwoReplicasPass) {
  ASSERT_EQ(::access("/usr/bin/redis-cli", X_OK), 0) << "redis-tools is installed by scripts/setup.sh";
  auto spec = Shipped("redis.dspec");
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    auto r = RunJob(spec, ReplicatedRedisOptions(RedisPrimaryAndReplicas(), seed));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
    ASSERT_EQ(r->received, 20000u);
    ReplicaReplies n = CountReplicaReplies(*r);
    EXPECT_GT(n.values, 0) << "seed " << seed << ": no replica ever showed a written value";
    EXPECT_GT(n.readonly, 0) << "seed " << seed;
  }
}

// Under pauses and partitions (a replica cut off from its primary keeps
// serving what it has: stale, never older) the cluster still passes.
TEST(RealServers, RedisPrimaryAndTwoReplicasPassUnderPausesAndPartitions) {
  auto spec = Shipped("redis.dspec");
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    auto r = RunJob(spec, ReplicatedRedisUnder({"pause", "partition"}, 200, seed));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
    EXPECT_GE(r->faults, 1) << "seed " << seed << ": the run took " << r->seconds << " s";
    EXPECT_GT(CountReplicaReplies(*r).values, 0) << "seed " << seed;
  }
}

// Under kills: without persistence a restarted node is empty, and a
// primary restarted empty wipes its replicas too, which Redis documents
// and the spec says in its `on fault` (docs/real-servers.md). That the
// handler is needed and judged exactly is
// Sensitivity.RedisKillsEmptyTheNodeAndAPrimaryKillWipesTheReplicas
// (checker_soundness_test.cc): a spec without it rejects this cluster, but
// can take minutes to, so it is not run here.
TEST(RealServers, RedisPrimaryAndTwoReplicasComeBackEmptyAfterKillsAsTheSpecSays) {
  auto spec = Shipped("redis.dspec");
  ASSERT_NE(spec, nullptr);
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    JobOptions o = ReplicatedRedisUnder({"kill"}, 300, seed);
    o.exec.steps = 20000;
    auto r = RunJob(spec, o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
    EXPECT_GE(r->faults, 1) << "seed " << seed << ": the run took " << r->seconds << " s";
  }
}

// A replica configured to take writes (`replica-read-only no`: Redis keeps
// such writes local and never replicates them) is not what the spec
// allows: a write there is a finding.
TEST(RealServers, RedisWritableReplicaIsFound) {
  auto spec = Shipped("redis.dspec");
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    auto r = RunJob(spec, ReplicatedRedisOptions(RedisPrimaryAndReplicas("--replica-read-only no"), seed));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->outcome, Outcome::kSafety) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
  }
}

TEST(ReferenceServers, CorrectRespAcceptedFor20Seeds) {
  auto spec = Shipped("redis.dspec");
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    JobOptions o = Options(RefResp(0), seed, 2000);
    if (seed % 2 == 1) o.exec.mask = harness::FeatureMask::Random(seed, spec->ast.num_choice_sites);
    auto r = RunJob(spec, o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
    ASSERT_EQ(r->received, 2000u);
  }
}

// Each mutant is a safety finding within 2,000 steps for every one of 5
// seeds (they are found in tens to hundreds of requests).
TEST(ReferenceServers, EveryRespMutantIsFound) {
  auto spec = Shipped("redis.dspec");
  for (int mutant = 1; mutant <= 4; ++mutant) {
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      auto r = RunJob(spec, Options(RefResp(mutant), seed, 2000));
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->outcome, Outcome::kSafety)
          << "mutant " << mutant << ", seed " << seed << ": " << testing::DescribeJobResult(*r);
    }
  }
}

// A finding through the CLI is shrunk and reproduced: the lost INCR comes
// down to a few requests.
TEST(ReferenceServers, LostIncrIsShrunkByTheCli) {
  auto r =
      testing::RunCommand({DUALSWARM_CLI, "test", "--spec", std::string(DUALSWARM_SOURCE_DIR) + "/specs/redis.dspec",
                           "--launch", RefResp(1), "--seed", "1", "--steps", "2000", "--shrink-time", "20"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("safety"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("<== REJECTED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"INCR"), std::string::npos) << r.out;  // INCR or INCRBY
}

// Bytes that are no protocol at all (tests/suts/garbage_server.cc, mode 0)
// are a finding that quotes them, never a crash.
TEST(RespAdapter, GarbageIsAFindingThatQuotesTheBytes) {
  JobOptions o = Options(absl::StrCat(DS_GARBAGE_SERVER, " --port {port} --mutant 0"), 1, 50);
  o.exec.connections = 2;
  o.exec.max_in_flight = 2;
  auto r = RunJob(Shipped("redis.dspec"), o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, Outcome::kSafety) << r->reason;
  EXPECT_NE(r->reason.find("that are not a valid response"), std::string::npos) << r->reason;
  EXPECT_NE(r->reason.find("(bytes: \""), std::string::npos) << r->reason;
}

// The CLI names the known adapters (one list, adapter_kinds.h) when given
// another.
TEST(RespAdapter, UnknownAdapterIsBadInput) {
  auto r =
      testing::RunCommand({DUALSWARM_CLI, "test", "--spec", std::string(DUALSWARM_SOURCE_DIR) + "/specs/redis.dspec",
                           "--adapter", "redis", "--target", "127.0.0.1:1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown adapter \"redis\" (known: http, jsonl, resp, memcached, grpc, fs)"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace dualswarm::workers
