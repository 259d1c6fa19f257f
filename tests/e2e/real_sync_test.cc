// Unison, Debian's file synchronizer, against specs/filesync.dspec through
// the fs adapter (docs/real-servers.md: Unison): two local replicas in
// batch mode, with its fast check on and off.
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/check/checker.h"
#include "gtest/gtest.h"
#include "tests/common/job_runs.h"
#include "tests/common/shipped_spec.h"
#include "workers/runner/runner.h"

namespace dualswarm::workers {
namespace {

// Unison keeps its archive under $UNISON: the job's directory, so every
// job starts from an empty archive.
std::string UnisonLaunch(bool fastcheck) {
  return absl::StrCat("env UNISON={dir}/unison-home unison {a} {b} -batch -confirmbigdel=false -silent -fastcheck ",
                      fastcheck ? "true" : "false");
}

void ExpectUnisonPasses(bool fastcheck) {
  ASSERT_EQ(std::system("unison -version >/dev/null 2>&1"), 0) << "unison is not installed (scripts/setup.sh)";
  auto spec = Shipped("filesync.dspec");
  ASSERT_NE(spec, nullptr);
  testing::FsRuns all;
  // Seed 9 with the fast check: a missed change whose copy Unison then
  // refuses (exit 2), leaving a temporary file behind (docs/real-servers.md).
  for (uint64_t seed : {1, 2, 3, 4, 5, 9}) {
    if (seed == 9 && !fastcheck) continue;
    auto r = RunJob(spec, testing::JobOptionsFor(UnisonLaunch(fastcheck), "fs", seed, 200));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
    testing::FsRuns u = testing::FsRunsOf(r->trace);
    all.clean += u.clean;
    all.not_clean += u.not_clean;
  }
  EXPECT_GE(all.clean, 25u) << "Unison ran";
  EXPECT_GE(all.not_clean, 5u) << "the runs met conflicts";
}

TEST(RealSync, UnisonWithItsFastCheckKeepsTheReconciliationContract) { ExpectUnisonPasses(true); }

TEST(RealSync, UnisonWithoutItsFastCheckKeepsTheReconciliationContract) { ExpectUnisonPasses(false); }

}  // namespace
}  // namespace dualswarm::workers
