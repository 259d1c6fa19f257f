// Real forward proxies from Debian against specs/http_proxy.dspec, the
// tester playing their clients and their origins (docs/real-servers.md).
// The second seed of tinyproxy and squid plays two origins: each request
// must reach the one its target names.
#include <unistd.h>

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/check/checker.h"
#include "gtest/gtest.h"
#include "tests/common/job_runs.h"
#include "tests/common/shipped_spec.h"
#include "workers/runner/runner.h"

namespace dualswarm::workers {
namespace {

// The origin endpoints that received requests in `trace`.
std::set<std::string> OriginsReached(const std::vector<check::Observation>& trace) {
  std::set<std::string> reached;
  for (const check::Observation& ob : trace) {
    if (ob.side != check::Side::kOrigin || ob.kind != check::Observation::Kind::kReceived) continue;
    if (const ir::Value* endpoint = ob.msg.Find("origin"); endpoint != nullptr) reached.insert(endpoint->as_string());
  }
  return reached;
}

// tinyproxy serves one request per client connection (it asks the origin
// to close after each, and relays what follows on the client connection
// as it is), so its clients send the next request on a connection only
// after the previous answer: pipelined requests are the subject of
// docs/real-servers.md, not of this test.
TEST(RealServers, TinyproxyForwardsAndRelaysAsRfc9110Says) {
  ASSERT_EQ(::access("/usr/bin/tinyproxy", X_OK), 0) << "tinyproxy-bin is installed by scripts/setup.sh";
  auto spec = Shipped("http_proxy.dspec");
  ASSERT_NE(spec, nullptr);
  const std::string launch = absl::StrCat("sh ", DUALSWARM_SOURCE_DIR, "/tests/real/tinyproxy_forward.sh {port} {dir}");
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    JobOptions o = testing::IntermediaryJobOptionsFor(launch, "http", seed, 1000);
    o.exec.max_in_flight_per_connection = 1;
    o.origins = static_cast<int>(seed);
    auto r = RunJob(spec, o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
    size_t forwarded = 0, aborts = 0, vias = 0;
    for (const check::Observation& ob : r->trace) {
      if (ob.side != check::Side::kOrigin) continue;
      const bool request = ob.kind == check::Observation::Kind::kReceived;
      forwarded += request;
      aborts += !request && ob.msg.Find("abort") != nullptr;
      const ir::Value* headers = request ? ob.msg.Find("headers") : nullptr;
      const ir::Value* via = headers != nullptr ? headers->Find("via") : nullptr;
      vias += via != nullptr && via->as_string().find("ds-tinyproxy") != std::string::npos;
    }
    // A request sent just as tinyproxy closed its connection after the
    // previous answer is lost (the tester then gives up on it): most go through.
    EXPECT_GE(forwarded, 950u) << "seed " << seed;
    EXPECT_EQ(vias, forwarded) << "seed " << seed << ": tinyproxy names itself in Via";
    EXPECT_GE(aborts, 10u) << "seed " << seed << ": the origin sometimes closes instead of answering";
    EXPECT_EQ(OriginsReached(r->trace).size(), seed) << "seed " << seed;
  }
}

// squid as a forward proxy that caches nothing: pipelined requests, origin
// connections kept open and reused, and retries of idempotent requests
// after the origin closed without answering (RFC 9110 §9.2.2).
TEST(RealServers, SquidForwardsAndRelaysAsRfc9110Says) {
  ASSERT_EQ(::access("/usr/sbin/squid", X_OK), 0) << "squid is installed by scripts/setup.sh";
  auto spec = Shipped("http_proxy.dspec");
  ASSERT_NE(spec, nullptr);
  const std::string launch = absl::StrCat("sh ", DUALSWARM_SOURCE_DIR, "/tests/real/squid_forward.sh {port} {dir}");
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    JobOptions o = testing::IntermediaryJobOptionsFor(launch, "http", seed, 1000);
    o.origins = static_cast<int>(seed);
    auto r = RunJob(spec, o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
    size_t forwarded = 0, vias = 0;
    for (const check::Observation& ob : r->trace) {
      if (ob.side != check::Side::kOrigin || ob.kind != check::Observation::Kind::kReceived) continue;
      ++forwarded;
      const ir::Value* headers = ob.msg.Find("headers");
      const ir::Value* via = headers != nullptr ? headers->Find("via") : nullptr;
      vias += via != nullptr && via->as_string().find("ds-squid") != std::string::npos;
    }
    EXPECT_GT(forwarded, 1000u) << "seed " << seed << ": every request, and some again after an abort";
    EXPECT_EQ(vias, forwarded) << "seed " << seed << ": squid names itself in Via";
    EXPECT_EQ(OriginsReached(r->trace).size(), seed) << "seed " << seed;
  }
}

// squid again, its origins sometimes silent (origin gen
// `answer_or_silence`) and its read_timeout 1 s: it gives up on a silent
// origin and answers the client with a 5xx, or sends an idempotent
// request again (RFC 9110 §9.2.2, §15.6.5), as the spec allows.
TEST(RealServers, SquidGivesUpOnASilentOrigin) {
  ASSERT_EQ(::access("/usr/sbin/squid", X_OK), 0) << "squid is installed by scripts/setup.sh";
  auto spec = Shipped("http_proxy.dspec");
  ASSERT_NE(spec, nullptr);
  const std::string launch = absl::StrCat("sh ", DUALSWARM_SOURCE_DIR, "/tests/real/squid_forward.sh {port} {dir} 1");
  JobOptions o = testing::IntermediaryJobOptionsFor(launch, "http", 1, 200);
  o.exec.origin_gen = "answer_or_silence";
  auto r = RunJob(spec, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->outcome, Outcome::kPassed) << testing::DescribeJobResult(*r);
  EXPECT_GE(testing::OriginAborts(r->trace, "silence"), 3u);
  EXPECT_GE(testing::ClientStatuses(r->trace, 502, 599), 1u) << "some silent origin ends in a 5xx for its client";
}

// Apache as a forward proxy with `ProxyVia via`, for `steps` requests.
JobOptions ApacheJob(const std::string& via, uint64_t steps) {
  JobOptions o = testing::IntermediaryJobOptionsFor(
      absl::StrCat("sh ", DUALSWARM_SOURCE_DIR, "/tests/real/apache_forward.sh {port} {dir} ", via), "http", 1, steps);
  return o;
}

// Apache's mod_proxy as configured out of the box (ProxyVia Off) forwards
// without a Via field, which RFC 9110 §7.6.3 requires of a proxy: found
// at the first request and shrunk to it.
TEST(RealServers, ApacheForwardProxySendsNoViaByDefault) {
  ASSERT_EQ(::access("/usr/sbin/apache2", X_OK), 0) << "apache2-bin is installed by scripts/setup.sh";
  auto spec = Shipped("http_proxy.dspec");
  ASSERT_NE(spec, nullptr);
  auto r = RunJob(spec, ApacheJob("Off", 200));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->outcome, Outcome::kSafety) << testing::DescribeJobResult(*r);
  // What is rejected is a request Apache forwarded to the origin, and it
  // has no Via; the closest explanation (listed first) says so.
  EXPECT_EQ(r->verdict.observation.side, check::Side::kOrigin) << testing::DescribeJobResult(*r);
  const ir::Value* headers = r->verdict.observation.msg.Find("headers");
  ASSERT_TRUE(headers != nullptr && headers->is_map()) << testing::DescribeJobResult(*r);
  EXPECT_EQ(headers->Find("via"), nullptr) << testing::DescribeJobResult(*r);
  ASSERT_FALSE(r->verdict.reasons.empty()) << testing::DescribeJobResult(*r);
  EXPECT_EQ(r->verdict.reasons[0].field, "headers.via") << testing::DescribeJobResult(*r);
}

// With ProxyVia On, Apache does what RFC 9110 §7.6 asks of a forward
// proxy (it opens an origin connection per request: the forward proxy's
// default worker keeps none).
TEST(RealServers, ApacheForwardProxyWithViaPasses) {
  ASSERT_EQ(::access("/usr/sbin/apache2", X_OK), 0) << "apache2-bin is installed by scripts/setup.sh";
  auto spec = Shipped("http_proxy.dspec");
  ASSERT_NE(spec, nullptr);
  auto r = RunJob(spec, ApacheJob("On", 1000));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->outcome, Outcome::kPassed) << testing::DescribeJobResult(*r);
}

}  // namespace
}  // namespace dualswarm::workers
