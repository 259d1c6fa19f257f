// The worker's job plan (workers/daemon/job_plan.h): a leased job's budget
// becomes the runner's options — here coverage-guided generation, which a
// lease may ask for and whose bound the worker checks itself.
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "engine/harness/coverage_guide.h"
#include "gtest/gtest.h"
#include "workers/daemon/job_plan.h"

namespace dualswarm::workers {
namespace {

v1::LeasedJob KvJob() {
  std::ifstream in(std::string(DUALSWARM_SOURCE_DIR) + "/specs/kv.dspec");
  std::stringstream src;
  src << in.rdbuf();
  v1::LeasedJob job;
  job.mutable_spec()->set_source(src.str());
  job.mutable_spec()->set_file_name("kv.dspec");
  job.mutable_target()->set_name("kv");
  job.mutable_target()->set_adapter("jsonl");
  job.mutable_target()->set_launch("/bin/true --port {port}");
  job.set_seed(3);
  return job;
}

TEST(JobPlan, ACoverageGuidedBudgetDrawsItsCandidates) {
  v1::LeasedJob job = KvJob();
  auto plain = PlanJob(job, "/tmp");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->options.exec.guide_candidates, 0);
  job.mutable_budget()->set_guide_candidates(8);
  auto guided = PlanJob(job, "/tmp");
  ASSERT_TRUE(guided.ok()) << guided.status();
  EXPECT_EQ(guided->options.exec.guide_candidates, 8);
  job.mutable_budget()->set_guide_candidates(harness::kMaxGuideCandidates + 1);
  auto refused = PlanJob(job, "/tmp");
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "budget.guide_candidates")) << refused.status();
}

// What the run's other jobs covered reaches a guided job's guide; a job
// that is not guided has no use for it.
TEST(JobPlan, AGuidedJobStartsFromWhatItsRunCovered) {
  v1::LeasedJob job = KvJob();
  job.add_run_covered_branches(1);
  job.add_run_covered_branches(4);
  auto plain = PlanJob(job, "/tmp");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(plain->options.exec.guide_reached.empty());
  job.mutable_budget()->set_guide_candidates(8);
  auto guided = PlanJob(job, "/tmp");
  ASSERT_TRUE(guided.ok()) << guided.status();
  EXPECT_EQ(guided->options.exec.guide_reached, (std::vector<int32_t>{1, 4}));
}

}  // namespace
}  // namespace dualswarm::workers
