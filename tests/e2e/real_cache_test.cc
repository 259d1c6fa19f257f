// Real HTTP caches from Debian against specs/http_cache.dspec, the tester
// playing their clients and their origin (docs/real-servers.md): each
// finding is a MUST of RFC 9110 or RFC 9111 the cache does not keep.
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "engine/check/checker.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"
#include "tests/common/job_runs.h"
#include "tests/common/shipped_spec.h"
#include "workers/runner/runner.h"

namespace dualswarm::workers {
namespace {

std::string NginxLaunch(bool via) {
  return absl::StrCat("sh ", DUALSWARM_SOURCE_DIR, "/tests/real/nginx_cache.sh {port} {origin_port} {dir} ",
                      via ? "on" : "off");
}

JobResult RunCache(std::shared_ptr<const lang::Spec> spec, const std::string& launch, uint64_t seed, uint64_t steps) {
  JobOptions o = testing::JobOptionsFor(launch, "http", seed, steps);
  o.origins = 1;
  auto r = RunJob(std::move(spec), o);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : JobResult{};
}

bool HasReason(const JobResult& r, const std::string& field) {
  for (const auto& reason : r.verdict.reasons)
    if (reason.field == field) return true;
  return false;
}

// nginx's proxy module sends no Via on the requests it forwards, which RFC
// 9110 §7.6.3 requires of a gateway ("MUST send an appropriate Via header
// field in each inbound request message"): found at the first request.
TEST(RealServers, NginxCacheSendsNoViaOnTheRequestsItForwards) {
  ASSERT_EQ(::access("/usr/sbin/nginx", X_OK), 0) << "nginx is installed by scripts/setup.sh";
  const JobResult r = RunCache(Shipped("http_cache.dspec"), NginxLaunch(false), 1, 200);
  ASSERT_EQ(r.outcome, Outcome::kSafety) << testing::DescribeJobResult(r);
  EXPECT_TRUE(HasReason(r, "headers.via")) << testing::DescribeJobResult(r);
}

// With a Via added by configuration, nginx answers from its cache without
// an Age field, which RFC 9111 §4 requires ("When a stored response is
// used to satisfy a request without validation, a cache MUST generate an
// Age header field").
TEST(RealServers, NginxCacheSendsNoAgeWithAStoredResponse) {
  ASSERT_EQ(::access("/usr/sbin/nginx", X_OK), 0) << "nginx is installed by scripts/setup.sh";
  const JobResult r = RunCache(Shipped("http_cache.dspec"), NginxLaunch(true), 1, 1000);
  ASSERT_EQ(r.outcome, Outcome::kSafety) << testing::DescribeJobResult(r);
  EXPECT_TRUE(HasReason(r, "headers.age")) << testing::DescribeJobResult(r);
}

// Without the Age rule (a copy of the spec whose stored responses need no
// Age), what is left: nginx keeps serving a stored response after a
// successful PUT, POST or DELETE of its path, which RFC 9111 §4.4 forbids
// ("A cache MUST invalidate the target URI when it receives a non-error
// status code in response to an unsafe request method"). The rejected
// response is a stored one that a later unsafe request made stale.
TEST(RealServers, NginxCacheServesWhatAnUnsafeRequestInvalidated) {
  ASSERT_EQ(::access("/usr/sbin/nginx", X_OK), 0) << "nginx is installed by scripts/setup.sh";
  const std::string source = ShippedSource("http_cache.dspec");
  const std::string age_rule = R"(headers: if validated { headers } else { set(headers, "age", fresh string) },)";
  ASSERT_NE(source.find(age_rule), std::string::npos) << "the shipped spec changed; update this test";
  auto no_age =
      lang::LoadSpec("http_cache-no-age.dspec", absl::StrReplaceAll(source, {{age_rule, "headers: headers,"}}));
  ASSERT_TRUE(no_age.ok()) << no_age.status();
  const JobResult r = RunCache(*no_age, NginxLaunch(true), 1, 1000);
  ASSERT_EQ(r.outcome, Outcome::kSafety) << testing::DescribeJobResult(r);
  // The trace before the rejected response has a successful unsafe
  // request of the same path answered after that path's stored response.
  bool unsafe_before = false;
  for (const check::Observation& o : r.trace) {
    if (o.side != check::Side::kOrigin || o.kind != check::Observation::Kind::kReceived) continue;
    const ir::Value* method = o.msg.Find("method");
    unsafe_before |= method != nullptr && method->is_string() &&
                     (method->as_string() == "PUT" || method->as_string() == "POST" || method->as_string() == "DELETE");
  }
  EXPECT_TRUE(unsafe_before) << testing::DescribeJobResult(r);
}

}  // namespace
}  // namespace dualswarm::workers
