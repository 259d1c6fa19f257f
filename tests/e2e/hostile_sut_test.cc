// The online tester against systems under test that send what a tester
// must survive (tests/suts/garbage_server.cc): a reply field named like an
// error is data, never a finding; bytes that are no protocol, and a
// response that never ends, are findings that quote the bytes and name the
// bound, reached in bounded time and memory.
#include <sys/resource.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"
#include "tests/common/shipped_spec.h"
#include "workers/runner/runner.h"

namespace dualswarm::workers {
namespace {

JobOptions Against(int mutant, const std::string& adapter, uint64_t steps) {
  JobOptions o;
  o.launch = absl::StrCat(DS_GARBAGE_SERVER, " --port {port} --mutant ", mutant);
  o.adapter = adapter;
  o.exec.seed = 1;
  o.exec.steps = steps;
  o.exec.connections = 2;
  o.exec.max_in_flight = 2;
  o.response_timeout_ms = 10000;
  return o;
}

int64_t MaxRssKiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

TEST(HostileSut, AReplyFieldNamedMalformedIsData) {
  auto spec = lang::LoadSpec("echo.dspec", R"(spec echo;
use json;
on recv q from c {
  send c { malformed: "no", ok: true };
}
gen request {
  { op: "ping" }
}
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  auto r = RunJob(*spec, Against(1, "jsonl", 200));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, Outcome::kPassed) << r->reason;
  EXPECT_EQ(r->received, 200u);
}

TEST(HostileSut, BytesThatAreNoProtocolAreAFindingThatQuotesThem) {
  auto r = RunJob(Shipped("kv.dspec"), Against(0, "jsonl", 50));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, Outcome::kSafety) << r->reason;
  EXPECT_NE(r->reason.find("that are not a valid response"), std::string::npos) << r->reason;
  EXPECT_NE(r->reason.find("(bytes: \""), std::string::npos) << r->reason;
}

TEST(HostileSut, EndlessTrailersEndAtTheirBound) {
  int64_t rss_before = MaxRssKiB();
  auto r = RunJob(Shipped("http_webdav.dspec"), Against(2, "http", 50));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, Outcome::kSafety) << r->reason;
  EXPECT_NE(r->reason.find("trailer section larger than 65536 bytes"), std::string::npos) << r->reason;
  EXPECT_LT(r->seconds, 10.0);
  EXPECT_LT(MaxRssKiB() - rss_before, 64 * 1024) << "KiB of peak memory grew while the trailers arrived";
}

}  // namespace
}  // namespace dualswarm::workers
