// Debian's apache2 as a WebDAV server (mod_dav, mod_dav_fs; one process
// with threads, tests/real/apache_webdav.sh) against specs/http_webdav.dspec,
// with each finding explained in docs/real-servers.md:
// - on one connection, it compares If-None-Match strongly on a PUT (RFC
//   9110 §13.1.2 requires the weak comparison), found and shrunk to a few
//   requests; with those requests switched off it passes, so the spec is
//   right about everything else it sees sequentially;
// - under concurrent PUT and DELETE of the same paths, a PUT's 201 or 204
//   is decided before its write lands: two concurrent PUTs that create a
//   path both answer 201, a race that must shrink to at most 10 requests
//   that reproduce;
// - with a reset command, shrinking reuses running servers and reaches the
//   same counterexample, and a reset that fails falls back to fresh ones.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "engine/harness/counterexample.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"
#include "tests/common/job_runs.h"
#include "tests/common/shipped_spec.h"
#include "workers/runner/runner.h"
#include "workers/runner/shrink_job.h"

namespace dualswarm::workers {
namespace {

using Clock = std::chrono::steady_clock;

const std::string& Launch() {
  static const std::string launch =
      absl::StrCat("sh ", DUALSWARM_SOURCE_DIR, "/tests/real/apache_webdav.sh {port} {dir}");
  return launch;
}

bool ApacheInstalled() { return ::access("/usr/sbin/apache2", X_OK) == 0; }

JobOptions Options(uint64_t seed, uint64_t steps, int connections, const std::string& mask) {
  JobOptions o = testing::JobOptionsFor(Launch(), "http", seed, steps);
  o.exec.connections = connections;
  o.exec.max_in_flight = connections;
  // No pipelining: Apache answers a request pipelined behind a PUT about
  // 1 s late (measured; well within the response timeout, but a second
  // per shrinking rerun), and the races here need only connections.
  o.exec.max_in_flight_per_connection = 1;
  if (!mask.empty()) o.exec.mask = *harness::FeatureMask::Parse(mask);
  return o;
}

// Shrinking within a test's minute: two candidates at a time (Apache takes
// a few hundred milliseconds to start), five verification replays.
ShrinkJobOptions Budget(double seconds) {
  ShrinkJobOptions so;
  so.jobs = 2;
  so.max_seconds = seconds;
  so.verify = 5;
  return so;
}

// The `gen request` alternatives of http_webdav.dspec (site 2, in order):
// 0 GET, 1 GET+If-None-Match, 2 GET+If-Match, 3 PUT, 4 PUT+If-Match,
// 5 PUT+If-None-Match, 6 DELETE, 7 DELETE+If-Match.
constexpr char kNoPutIfNoneMatch[] = "2:20";
constexpr char kPlainPutAndDeleteOnly[] = "2:b7";

bool AnyReason(const check::Verdict& v, const std::string& text) {
  for (const auto& r : v.reasons)
    if (absl::StrContains(r.text, text)) return true;
  return false;
}

// What both sequential tests find: seed 1 of the shipped spec on one
// connection, a safety finding, as found (*o: the job that found it).
void FindOnOneConnection(std::shared_ptr<const lang::Spec>* spec, JobOptions* o, JobResult* found) {
  ASSERT_TRUE(ApacheInstalled()) << "apache2 is installed by scripts/setup.sh";
  *spec = Shipped("http_webdav.dspec");
  ASSERT_NE(*spec, nullptr);
  *o = Options(1, 2000, 1, "");
  auto r = RunJob(*spec, *o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->outcome, Outcome::kSafety) << testing::DescribeJobResult(*r);
  *found = *std::move(r);
}

// The If-None-Match finding shrunk: a few requests, every replay
// reproducing, Apache's weak tag compared. Returns the diagram.
std::string ExpectShrunkIfNoneMatch(const harness::Counterexample& cx) {
  const std::string diagram = harness::RenderSequenceDiagram(cx);
  EXPECT_LE(cx.shrunk_size, 4u) << diagram;
  EXPECT_EQ(cx.replays_reproduced, cx.replays_verified) << diagram;
  EXPECT_TRUE(absl::StrContains(diagram, "if-none-match: W/")) << "the tag compared is Apache's weak one\n" << diagram;
  return diagram;
}

TEST(RealServers, ApacheWebdavComparesIfNoneMatchStronglyOnPut) {
  std::shared_ptr<const lang::Spec> spec;
  JobOptions o;
  JobResult r;
  ASSERT_NO_FATAL_FAILURE(FindOnOneConnection(&spec, &o, &r));
  ASSERT_TRUE(AnyReason(r.verdict, "spec expects 412, observed 204")) << testing::DescribeJobResult(r);
  auto cx = MakeCounterexample(spec, o, r, Budget(25));
  ASSERT_TRUE(cx.ok()) << cx.status();
  const std::string diagram = ExpectShrunkIfNoneMatch(*cx);
  EXPECT_TRUE(absl::StrContains(diagram, "PUT")) << diagram;
  // Without PUT+If-None-Match, a sequential client finds nothing.
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    auto masked = RunJob(spec, Options(seed, 2000, 1, kNoPutIfNoneMatch));
    ASSERT_TRUE(masked.ok()) << masked.status();
    EXPECT_EQ(masked->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*masked);
  }
}

// With a reset command, shrinking reruns reuse running servers (emptied
// between reruns: Apache keeps its state in the document root) and reach
// the same counterexample, whose verification replays still run on fresh
// servers; a reset that fails falls back to fresh servers.
TEST(RealServers, ApacheWebdavShrinksOnWarmServersWithAResetCommand) {
  std::shared_ptr<const lang::Spec> spec;
  JobOptions o;
  JobResult r;
  ASSERT_NO_FATAL_FAILURE(FindOnOneConnection(&spec, &o, &r));
  char tmpl[] = "/tmp/ds-resets-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string log = absl::StrCat(tmpl, "/resets");
  for (const bool working : {true, false}) {
    ShrinkJobOptions budget = Budget(25);
    budget.reset_command = working ? absl::StrCat("find {dir}/root -mindepth 1 -delete && echo reset >> ", log)
                                   : absl::StrCat("echo failed >> ", log, "; exit 3");
    std::remove(log.c_str());
    auto cx = MakeCounterexample(spec, o, r, budget);
    ASSERT_TRUE(cx.ok()) << cx.status();
    ExpectShrunkIfNoneMatch(*cx);
    const std::string resets = lang::ReadFileToString(log).value_or("");
    const size_t lines = static_cast<size_t>(std::count(resets.begin(), resets.end(), '\n'));
    if (working) {
      EXPECT_GE(lines, 10u) << "the reruns did not reuse servers";
    } else {
      EXPECT_EQ(lines, 1u) << "a reset that failed was tried again";
    }
  }
  std::remove(log.c_str());
  ::rmdir(tmpl);
}

// http_webdav.dspec on two paths only, so that PUTs and DELETEs on four
// connections meet on the same path all the time.
std::shared_ptr<const lang::Spec> TwoPathSpec() {
  const std::string source = ShippedSource("http_webdav.dspec");
  const std::string paths = R"(let path = freq { 8: pick(keys(files)), 2: "/" + random_word(3) };)";
  if (!absl::StrContains(source, paths)) return nullptr;
  auto spec = lang::LoadSpec("http_webdav-two-paths.dspec",
                             absl::StrReplaceAll(source, {{paths, R"(let path = freq { 1: "/a", 1: "/b" };)"}}));
  return spec.ok() ? *std::move(spec) : nullptr;
}

// A PUT or DELETE answered with a status no serial order gives it: the
// documented cause (a PUT's status is decided before its write lands).
bool IsAStatusRace(const check::Verdict& v) {
  for (const char* observed : {"observed 201", "observed 204", "observed 404"})
    if (AnyReason(v, observed)) return true;
  return false;
}

// Two PUTs creating the same path, both answered 201.
bool IsConcurrentCreate(const check::Verdict& v) {
  return AnyReason(v, "spec expects 200, observed 201") || AnyReason(v, "spec expects 204, observed 201");
}

TEST(RealServers, ApacheWebdavConcurrentCreatesShrinkToAFewRequests) {
  ASSERT_TRUE(ApacheInstalled()) << "apache2 is installed by scripts/setup.sh";
  auto spec = TwoPathSpec();
  ASSERT_NE(spec, nullptr) << "http_webdav.dspec's path choice changed; update this test";
  const auto start = Clock::now();
  int shrunk = 0;
  for (uint64_t seed = 1; seed <= 8 && shrunk < 2; ++seed) {
    JobOptions o = Options(seed, 500, 4, kPlainPutAndDeleteOnly);
    auto r = RunJob(spec, o);
    ASSERT_TRUE(r.ok()) << r.status();
    if (r->outcome == Outcome::kPassed) continue;
    ASSERT_EQ(r->outcome, Outcome::kSafety) << testing::DescribeJobResult(*r);
    EXPECT_TRUE(IsAStatusRace(r->verdict)) << "undocumented: " << testing::DescribeJobResult(*r);
    if (!IsConcurrentCreate(r->verdict)) continue;
    auto cx = MakeCounterexample(spec, o, *r, Budget(20));
    ASSERT_TRUE(cx.ok()) << cx.status();
    ++shrunk;
    const std::string diagram = harness::RenderSequenceDiagram(*cx);
    std::printf("seed %llu: %zu -> %zu requests in %d reruns (%.1f s), %d of %d replays reproduce\n",
                static_cast<unsigned long long>(seed), cx->original_size, cx->shrunk_size, cx->shrink_reruns,
                cx->shrink_seconds, cx->replays_reproduced, cx->replays_verified);
    if (cx->shrunk_size > 10 || cx->replays_reproduced * 2 < cx->replays_verified) continue;  // one more try
    EXPECT_TRUE(absl::StrContains(diagram, "201")) << diagram;
    SUCCEED() << diagram;
    return;
  }
  ADD_FAILURE() << "no concurrent create shrank to at most 10 requests reproducing in at least half of 5 replays ("
                << shrunk << " tried, " << std::chrono::duration<double>(Clock::now() - start).count() << " s)";
}

}  // namespace
}  // namespace dualswarm::workers
