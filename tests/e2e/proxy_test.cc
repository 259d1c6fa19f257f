// The tester playing an HTTP forward proxy's clients and origin at once
// (specs/http_proxy.dspec) against the reference proxy
// (tests/suts/proxy_server.cc): the correct proxy passes with one and with
// several pooled origin connections, every mutant is found by each of a
// few seeds, and the CLI shrinks a finding to the request that shows it and
// replays it.
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

std::string RefProxy(int mutant, int origin_connections) {
  return absl::StrCat(DS_REF_PROXY, " --port {port} --origin-port {origin_port} --origin-connections ",
                      origin_connections, " --mutant ", mutant);
}

JobOptions ProxyJob(int mutant, int origin_connections, uint64_t seed, uint64_t steps) {
  JobOptions o = testing::IntermediaryJobOptionsFor(RefProxy(mutant, origin_connections), "http", seed, steps);
  return o;
}

TEST(HttpProxy, TheCorrectProxyPassesWithOneOrSeveralOriginConnections) {
  auto spec = Shipped("http_proxy.dspec");
  ASSERT_NE(spec, nullptr);
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const int origin_connections = 1 + static_cast<int>(seed % 3);
    auto r = RunJob(spec, ProxyJob(0, origin_connections, seed, 1000));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
    EXPECT_EQ(r->received, 1000u);
    size_t origin_requests = 0, aborts = 0;
    for (const check::Observation& o : r->trace) {
      if (o.side != check::Side::kOrigin) continue;
      origin_requests += o.kind == check::Observation::Kind::kReceived;
      aborts += o.kind == check::Observation::Kind::kSent && o.msg.Find("abort") != nullptr;
    }
    EXPECT_GE(origin_requests, 1000u) << "seed " << seed << ": every request goes through the origin";
    EXPECT_GE(aborts, 10u) << "seed " << seed << ": the origin sometimes closes instead of answering";
  }
}

TEST(HttpProxy, EveryProxyMutantIsFound) {
  auto spec = Shipped("http_proxy.dspec");
  ASSERT_NE(spec, nullptr);
  for (int mutant = 1; mutant <= 9; ++mutant) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      auto r = RunJob(spec, ProxyJob(mutant, 2, seed, 1000));
      ASSERT_TRUE(r.ok()) << r.status();
      // Mutant 6 may relay a HEAD's answer (a content-length, no body) to
      // another request, whose client then waits for a body that never
      // comes: a liveness finding.
      const bool found = r->outcome == Outcome::kSafety || (mutant == 6 && r->outcome == Outcome::kLiveness);
      EXPECT_TRUE(found) << "mutant " << mutant << ", seed " << seed << ": " << testing::DescribeJobResult(*r);
    }
  }
}

TEST(HttpProxy, AKeptHostIsShrunkAndReplayedByTheCli) {
  auto r = testing::RunCommand(
      {DUALSWARM_CLI, "test", "--spec", std::string(DUALSWARM_SOURCE_DIR) + "/specs/http_proxy.dspec", "--launch",
       RefProxy(3, 2), "--origins", "1", "--seed", "1", "--steps", "1000", "--shrink-time", "20"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "the SUT sent on origin conn")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "headers.host: spec expects \"origin-0\", observed \"elsewhere.example\""))
      << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "5 of 5 reproduced")) << r.out;
}

}  // namespace
}  // namespace dualswarm::workers
