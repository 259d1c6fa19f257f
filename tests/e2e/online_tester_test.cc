// The online tester against real processes on loopback: the reference
// servers (correct ones must pass, every mutant must be caught), SUTs that
// fail to start, and Debian's nginx as a WebDAV server nobody here wrote.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/check/checker.h"
#include "engine/harness/executor.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"
#include "tests/common/job_runs.h"
#include "tests/common/shipped_spec.h"
#include "workers/runner/runner.h"

namespace dualswarm::workers {
namespace {

JobOptions Options(const std::string& launch, const std::string& adapter, uint64_t seed, uint64_t steps) {
  return testing::JobOptionsFor(launch, adapter, seed, steps);
}

void ExpectCorrectServerPasses(const std::string& spec_name, const std::string& bin, const std::string& adapter,
                               int seeds, uint64_t steps, int connections = 4) {
  auto spec = Shipped(spec_name);
  uint64_t total = 0;
  // Like a swarm: the seeds cycle through the branch orders, and every
  // other seed switches gen alternatives off with a random feature mask.
  static constexpr check::BranchOrder kOrders[] = {check::BranchOrder::kFirst, check::BranchOrder::kLast,
                                                   check::BranchOrder::kRandom, check::BranchOrder::kMostConstrained};
  for (int seed = 1; seed <= seeds; ++seed) {
    JobOptions o =
        Options(absl::StrCat(bin, " --port {port} --dir {dir}"), adapter, static_cast<uint64_t>(seed), steps);
    o.exec.connections = connections;
    o.exec.max_in_flight = connections;
    o.exec.checker.branch_order = kOrders[seed % 4];
    if (seed % 2 == 1)
      o.exec.mask = harness::FeatureMask::Random(static_cast<uint64_t>(seed), spec->ast.num_choice_sites);
    auto r = RunJob(spec, o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->outcome, Outcome::kPassed)
        << "seed " << seed << ", branch order " << check::BranchOrderName(o.exec.checker.branch_order) << ", mask "
        << o.exec.mask.ToString() << ": " << testing::DescribeJobResult(*r);
    ASSERT_EQ(r->sent, steps);
    ASSERT_EQ(r->received, steps);
    total += r->sent;
  }
  EXPECT_EQ(total, static_cast<uint64_t>(seeds) * steps);
}

TEST(ReferenceServers, CorrectWebdavAcceptedFor100Seeds) {
  ExpectCorrectServerPasses("http_webdav.dspec", DS_REF_WEBDAV, "http", 100, 2000);
}

TEST(ReferenceServers, CorrectKvAcceptedFor100SeedsAt8Connections) {
  ExpectCorrectServerPasses("kv.dspec", DS_REF_KV, "jsonl", 100, 2000, 8);
}

TEST(ReferenceServers, CorrectQueueAcceptedFor100Seeds) {
  ExpectCorrectServerPasses("queue.dspec", DS_REF_QUEUE, "jsonl", 100, 2000);
}

// The checker may take far longer than the response timeout between two
// observations (here a spec whose handler costs ~0.1 s, with a 0.2 s
// timeout and 4 requests in flight): liveness is judged on the wire, so a
// server that answers at once is never blamed for the checker's time.
TEST(Liveness, SlowCheckerIsNotBlamedOnTheServer) {
  auto spec = lang::LoadSpec("slow_kv.dspec", R"(
spec slow_kv;
use json;
var store: map<string, string> = {};
fn spin(n) { if n == 0 { 0 } else { spin(n - 1) + spin(n - 1) } }
on recv q from c {
  let cost = spin(18);
  match q {
    { op: "put", key: k, value: v } => { store = store.set(k, v); send c { ok: true }; },
    { op: "get", key: k } => send c { value: or_else(store.get(k), null) },
    _ => send c { error: fresh string },
  }
}
gen request {
  oneof {
    { op: "put", key: "a", value: random_word(2) },
    { op: "get", key: "a" },
  }
}
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  JobOptions o = Options(absl::StrCat(DS_REF_KV, " --port {port} --dir {dir}"), "jsonl", 1, 24);
  o.response_timeout_ms = 200;
  auto r = RunJob(*spec, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, Outcome::kPassed) << testing::DescribeJobResult(*r);
  EXPECT_EQ(r->received, 24u);
  // The checker really was slower than the server: in all, five response
  // timeouts' worth (its cost depends on the machine: 2.0-2.6 s seen), with
  // 4 requests in flight each costing over half a timeout.
  EXPECT_GT(r->stats.check_seconds, 5 * o.response_timeout_ms / 1000.0);
  EXPECT_GT(r->stats.max_observe_seconds, o.response_timeout_ms / 2 / 1000.0);
}

// Runs mutant N with default settings and increasing seeds until a finding
// or 60 s. Returns false when the server refuses the mutant number (the
// list has ended).
bool CatchMutant(const std::string& spec_name, const std::string& bin, const std::string& adapter, int mutant,
                 std::string* log) {
  auto spec = Shipped(spec_name);
  auto start = std::chrono::steady_clock::now();
  for (uint64_t seed = 1;; ++seed) {
    JobOptions o = Options(absl::StrCat(bin, " --port {port} --dir {dir} --mutant ", mutant), adapter, seed, 1000);
    o.response_timeout_ms = 2000;
    auto r = RunJob(spec, o);
    if (!r.ok()) {
      // A mutant number past the end: the server exits at once.
      EXPECT_GT(mutant, 1) << r.status();
      return false;
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r->outcome == Outcome::kSafety || r->outcome == Outcome::kLiveness || r->outcome == Outcome::kSutCrash) {
      absl::StrAppend(log, "mutant ", mutant, ": ", OutcomeName(r->outcome), " with seed ", seed, " after ", r->sent,
                      " requests, ", absl::StrFormat("%.2f", secs), " s\n");
      return true;
    }
    EXPECT_EQ(r->outcome, Outcome::kPassed) << testing::DescribeJobResult(*r);
    if (secs > 60) {
      ADD_FAILURE() << "mutant " << mutant << " of " << bin << " survived " << seed << " seeds (60 s)";
      return true;
    }
  }
}

void ExpectAllMutantsCaught(const std::string& spec_name, const std::string& bin, const std::string& adapter,
                            int at_least) {
  std::string log;
  int n = 0;
  for (int m = 1; m < 200; ++m) {
    if (!CatchMutant(spec_name, bin, adapter, m, &log)) break;
    ++n;
  }
  std::printf("%s", log.c_str());
  EXPECT_GE(n, at_least) << "fewer mutants than required";
}

TEST(ReferenceServers, EveryWebdavMutantCaughtWithin60s) {
  ExpectAllMutantsCaught("http_webdav.dspec", DS_REF_WEBDAV, "http", 20);
}

TEST(ReferenceServers, EveryKvMutantCaughtWithin60s) { ExpectAllMutantsCaught("kv.dspec", DS_REF_KV, "jsonl", 6); }

TEST(ReferenceServers, EveryQueueMutantCaughtWithin60s) {
  ExpectAllMutantsCaught("queue.dspec", DS_REF_QUEUE, "jsonl", 5);
}

TEST(SutLifecycle, CommandThatExitsAtOnceIsAClearError) {
  auto r = RunJob(Shipped("kv.dspec"), Options("echo starting; exit 3", "jsonl", 1, 10));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("exit code 3"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("starting"), std::string::npos) << r.status();
}

// A SUT that wrote 64 MiB before dying: the error quotes the end of its
// output, read without loading the whole log into memory.
TEST(SutLifecycle, ChattyCommandIsQuotedByItsTail) {
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  auto r =
      RunJob(Shipped("kv.dspec"),
             Options("head -c 67108864 /dev/zero | tr '\\0' x; echo; echo the last words; exit 3", "jsonl", 1, 10));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("the last words"), std::string::npos);
  EXPECT_LT(r.status().message().size(), 4000u);
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 32 * 1024) << "KiB of peak memory grew while reading the log";
}

TEST(SutLifecycle, CommandThatNeverListensTimesOut) {
  JobOptions o = Options("sleep 30", "jsonl", 1, 10);
  o.ready_timeout_ms = 300;
  auto start = std::chrono::steady_clock::now();
  auto r = RunJob(Shipped("kv.dspec"), o);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(r.status())) << r.status();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(SutLifecycle, UnreachableTargetIsReportedNotCrashed) {
  JobOptions o = Options("", "jsonl", 1, 10);
  o.launch.clear();
  o.target = "127.0.0.1:1";
  auto r = RunJob(Shipped("kv.dspec"), o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, Outcome::kSutCrash);
  EXPECT_NE(r->reason.find("cannot connect"), std::string::npos) << r->reason;
}

// Debian's nginx with its WebDAV module: the tester must find its documented
// departures from RFC 9110 (docs/real-servers.md) and never report a spec
// error or give up.
TEST(RealServers, NginxWebdavDeparturesFromRfc9110AreFound) {
  ASSERT_EQ(::access("/usr/sbin/nginx", X_OK), 0) << "nginx is installed by scripts/setup.sh";
  auto spec = Shipped("http_webdav.dspec");
  std::string launch = absl::StrCat("sh ", DUALSWARM_SOURCE_DIR, "/tests/real/nginx_webdav.sh {port} {dir}");
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    auto r = RunJob(spec, Options(launch, "http", seed, 2000));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->outcome, Outcome::kSafety) << testing::DescribeJobResult(*r);
    ASSERT_EQ(r->verdict.kind, check::Verdict::Kind::kReject);
    ASSERT_FALSE(r->verdict.reasons.empty());
    // Every finding is one of the two documented ones: a precondition nginx
    // does not evaluate (the spec expects 412), or an entity tag reused for
    // different content (a constraint on the tag, or a 304/412 the reuse
    // implies, or a body the tag does not match).
    bool documented = false;
    for (const auto& reason : r->verdict.reasons) {
      const std::string& t = reason.text;
      documented |= t.find("expects 412") != std::string::npos || t.find("expects 304") != std::string::npos ||
                    t.find("fresh@") != std::string::npos || reason.field == "body" || reason.field == "status";
    }
    EXPECT_TRUE(documented) << testing::DescribeJobResult(*r);
  }
}

}  // namespace
}  // namespace dualswarm::workers
