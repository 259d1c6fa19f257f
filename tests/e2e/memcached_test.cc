// The memcached adapter end to end: Debian's memcached (64 MB, UDP off, on
// a free loopback port) must pass specs/memcached.dspec for 20 seeds of
// 2,000 steps at 4 connections and when pipelined, and four specs that are
// each wrong about one documented behaviour (protocol.txt) must be
// rejected by the same server, so these runs can fail; under kills it
// comes back empty, as the spec's `on fault` says. The reference
// server (tests/suts/memcached_server.cc) must pass when correct and be
// caught in each of its mutants.
#include <unistd.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "engine/check/checker.h"
#include "engine/harness/executor.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"
#include "tests/common/job_runs.h"
#include "tests/common/processes.h"
#include "tests/common/shipped_spec.h"
#include "workers/runner/runner.h"

namespace dualswarm::workers {
namespace {

// -u root: memcached refuses to run as root without it (CI runs as root);
// it is ignored otherwise.
const char kMemcachedLaunch[] = "/usr/bin/memcached -l 127.0.0.1 -p {port} -U 0 -u root -m 64";

JobOptions Options(uint64_t seed, uint64_t steps) {
  return testing::JobOptionsFor(kMemcachedLaunch, "memcached", seed, steps);
}

bool MemcachedInstalled() { return ::access("/usr/bin/memcached", X_OK) == 0; }

// 20 seeds of 2,000 steps at 4 connections, every other seed with a random
// feature mask: each must pass.
void ExpectPasses20Seeds(const std::string& launch) {
  auto spec = Shipped("memcached.dspec");
  ASSERT_NE(spec, nullptr);
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    JobOptions o = testing::JobOptionsFor(launch, "memcached", seed, 2000);
    if (seed % 2 == 1) o.exec.mask = harness::FeatureMask::Random(seed, spec->ast.num_choice_sites);
    auto r = RunJob(spec, o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
    ASSERT_EQ(r->received, 2000u);
  }
}

std::string RefMemcached(int mutant) {
  return absl::StrCat(DS_REF_MEMCACHED, " --port {port} --dir {dir} --mutant ", mutant);
}

// memcached documents every reply the spec expects (docs/real-servers.md),
// so no finding may appear.
TEST(RealServers, MemcachedPasses20SeedsOf2000StepsAt4Connections) {
  ASSERT_TRUE(MemcachedInstalled()) << "memcached is installed by scripts/setup.sh";
  ExpectPasses20Seeds(kMemcachedLaunch);
}

// 16 requests in flight over 4 connections: memcached answers each
// connection's requests in order.
TEST(RealServers, MemcachedPassesPipelined) {
  ASSERT_TRUE(MemcachedInstalled()) << "memcached is installed by scripts/setup.sh";
  auto spec = Shipped("memcached.dspec");
  ASSERT_NE(spec, nullptr);
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    JobOptions o = Options(seed, 2000);
    o.exec.max_in_flight = 16;
    auto r = RunJob(spec, o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
    ASSERT_EQ(r->received, 2000u);
  }
}

struct WrongSpec {
  const char* what;  // the documented behaviour it gets wrong
  const char* right;
  const char* wrong;
};

// Each wrong spec is one line of the shipped spec changed; memcached shows
// the documented behaviour within 2,000 requests on every seed tried.
TEST(RealServers, MemcachedRejectsSpecsThatAreWrongAboutIt) {
  ASSERT_TRUE(MemcachedInstalled()) << "memcached is installed by scripts/setup.sh";
  const std::string source = ShippedSource("memcached.dspec");
  const WrongSpec wrong[] = {
      {"decr below 0 stops at 0", "let m = if up { n + by } else { if by > n { 0 } else { n - by } };",
       "let m = if up { n + by } else { n - by };"},
      {"add of a present key is NOT_STORED",
       "if present { { status: \"NOT_STORED\" } } else { store(k, q.value, q.flags) }", "store(k, q.value, q.flags)"},
      {"append/prepend keep the item's flags", "else { q.value + it.value }, it.flags),",
       "else { q.value + it.value }, 0),"},
      {"incr/decr may space-pad a shorter number",
       "either { digits + spaces(len(it.value) - len(digits)) } or { digits }", "digits"},
  };
  for (const WrongSpec& w : wrong) {
    ASSERT_NE(source.find(w.right), std::string::npos) << w.what << ": the shipped spec changed; update this test";
    auto spec = lang::LoadSpec("memcached-wrong.dspec", absl::StrReplaceAll(source, {{w.right, w.wrong}}));
    ASSERT_TRUE(spec.ok()) << w.what << ": " << spec.status();
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      auto r = RunJob(*spec, Options(seed, 2000));
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->outcome, Outcome::kSafety) << w.what << ", seed " << seed << ": " << testing::DescribeJobResult(*r);
    }
  }
}

// memcached killed -9 and restarted by the nemesis (a one-node cluster)
// comes back empty: the shipped spec says so in its `on fault` handler and
// passes; the same spec without the handler (memcached as a durable
// store) is rejected, so these runs can fail.
TEST(RealServers, MemcachedUnderKillsComesBackEmptyAsItsSpecSays) {
  ASSERT_TRUE(MemcachedInstalled()) << "memcached is installed by scripts/setup.sh";
  auto under_kills = [](uint64_t seed) {
    JobOptions o = Options(seed, 10000);
    o.nodes = 1;
    o.nemesis.faults = {"kill"};
    o.nemesis.interval_ms = 100;
    o.nemesis.duration_ms = 50;
    return o;
  };
  auto spec = Shipped("memcached.dspec");
  ASSERT_NE(spec, nullptr);
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    auto r = RunJob(spec, under_kills(seed));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
    // A kill every 100 ms of a run bounded by requests: on a fast machine
    // a run takes 0.3 s and sees one (at 100 ms, mid-run).
    EXPECT_GE(r->faults, 1) << "seed " << seed << ": the run took " << r->seconds << " s";
  }
  const std::string source = ShippedSource("memcached.dspec");
  const size_t begin = source.find("on fault f {");
  const size_t end = source.find("\n}\n", begin);
  ASSERT_TRUE(begin != std::string::npos && end != std::string::npos) << "the shipped spec changed; update this test";
  auto durable = lang::LoadSpec("memcached-durable.dspec", source.substr(0, begin) + source.substr(end + 3));
  ASSERT_TRUE(durable.ok()) << durable.status();
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    auto r = RunJob(*durable, under_kills(seed));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->outcome, Outcome::kSafety) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
  }
}

TEST(ReferenceServers, CorrectMemcachedAcceptedFor20Seeds) { ExpectPasses20Seeds(RefMemcached(0)); }

// Each mutant is a safety finding within 2,000 steps for every one of 5
// seeds (they are found in tens of requests).
TEST(ReferenceServers, EveryMemcachedMutantIsFound) {
  auto spec = Shipped("memcached.dspec");
  ASSERT_NE(spec, nullptr);
  for (int mutant = 1; mutant <= 4; ++mutant) {
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      auto r = RunJob(spec, testing::JobOptionsFor(RefMemcached(mutant), "memcached", seed, 2000));
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->outcome, Outcome::kSafety)
          << "mutant " << mutant << ", seed " << seed << ": " << testing::DescribeJobResult(*r);
    }
  }
}

// A finding through the CLI is shrunk: the reused cas unique comes down to
// a few requests. Whether it keeps a gets (a cas unique seen twice) or a
// cas with a literal unique that the reused one matches varies with the
// time-bounded shrinker.
TEST(ReferenceServers, ReusedCasUniqueIsShrunkByTheCli) {
  auto r = testing::RunCommand({DUALSWARM_CLI, "test", "--spec",
                                std::string(DUALSWARM_SOURCE_DIR) + "/specs/memcached.dspec", "--launch",
                                RefMemcached(1), "--seed", "1", "--steps", "2000", "--shrink-time", "20"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("safety"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("<== REJECTED"), std::string::npos) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "\"cmd\":\"cas\"") || absl::StrContains(r.out, "\"cmd\":\"gets\""))
      << "the counterexample shows no cas unique: " << r.out;
  const int shrunk = testing::ShrunkRequests(r.out);
  EXPECT_GE(shrunk, 1) << r.out;
  EXPECT_LE(shrunk, 8) << r.out;
}

}  // namespace
}  // namespace dualswarm::workers
