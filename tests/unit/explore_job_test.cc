// Explore jobs (workers/daemon/explore_job.h): a lease whose budget asks for
// model checking becomes the explorer's options (order from the job's
// branch order, bounds checked by the worker too), and what the explorer
// found becomes the CompleteJob request the coordinator records.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "engine/harness/counterexample.h"
#include "gtest/gtest.h"
#include "workers/daemon/explore_job.h"

namespace dualswarm::workers {
namespace {

constexpr const char* kCounter = R"(spec counter;
var n: int = 0;
on recv q from c {
  if q.op == "inc" { n = n + 1; }
  assert n < 3;
  send c { n: n };
}
gen request { oneof { { op: "get" }, { op: "inc" } } }
)";

v1::LeasedJob ExploreJob(const std::string& source, int depth) {
  v1::LeasedJob job;
  job.set_job_id(5);
  job.set_lease_token("t");
  job.mutable_spec()->set_source(source);
  job.mutable_spec()->set_file_name("counter.dspec");
  job.mutable_spec()->set_hash("h");
  job.mutable_target()->set_name("explore");
  job.mutable_target()->set_adapter("explore");
  job.mutable_budget()->set_explore_depth(depth);
  job.set_seed(9);
  return job;
}

TEST(ExploreJob, TheJobsBranchOrderAndBudgetBecomeTheExplorersOptions) {
  v1::LeasedJob job = ExploreJob(kCounter, 6);
  EXPECT_TRUE(IsExploreJob(job));
  job.set_branch_order(v1::BRANCH_ORDER_LAST);
  job.mutable_budget()->set_time_budget_ms(1500);
  auto o = ExploreOptionsFor(job, nullptr);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->order, explore::ActionOrder::kLast);
  EXPECT_EQ(o->max_depth, 6);
  EXPECT_EQ(o->max_states, 200000u);
  EXPECT_DOUBLE_EQ(o->max_seconds, 1.5);
  EXPECT_EQ(o->seed, 9u);
  EXPECT_TRUE(o->stop_at_first);
  job.set_branch_order(v1::BRANCH_ORDER_MOST_CONSTRAINED);
  EXPECT_EQ(ExploreOptionsFor(job, nullptr)->order, explore::ActionOrder::kRandom);
  // Past the run's first two jobs, first and last would repeat their
  // searches: those jobs draw a permutation from their own seeds.
  job.set_index(4);
  job.set_branch_order(v1::BRANCH_ORDER_FIRST);
  EXPECT_EQ(ExploreOptionsFor(job, nullptr)->order, explore::ActionOrder::kRandom);
  job.set_index(1);
  job.set_branch_order(v1::BRANCH_ORDER_LAST);
  EXPECT_EQ(ExploreOptionsFor(job, nullptr)->order, explore::ActionOrder::kLast);
  job.mutable_budget()->set_explore_depth(65);
  EXPECT_TRUE(absl::IsInvalidArgument(ExploreOptionsFor(job, nullptr).status()));
  EXPECT_FALSE(IsExploreJob(v1::LeasedJob()));
}

TEST(ExploreJob, AViolationIsAFindingWhoseInputIsItsRequestSequence) {
  v1::CompleteJobRequest req = RunExploreJob(ExploreJob(kCounter, 6), nullptr);
  ASSERT_EQ(req.outcome(), v1::JOB_OUTCOME_FAILED) << req.reason();
  EXPECT_EQ(req.job_id(), 5);
  const v1::Counterexample& cx = req.counterexample();
  EXPECT_EQ(cx.kind(), v1::VERDICT_KIND_SPEC_ERROR);
  EXPECT_TRUE(absl::StrContains(cx.reason(), "counter.dspec:5:3: assertion failed")) << cx.reason();
  EXPECT_EQ(cx.size(), 3);
  EXPECT_EQ(cx.input_json(),
            R"([{"conn":0,"jexpr":{"op":"inc"}},{"conn":0,"jexpr":{"op":"inc"}},{"conn":0,"jexpr":{"op":"inc"}}])");
  EXPECT_EQ(cx.signature().size(), 16u);
  EXPECT_TRUE(absl::StrContains(cx.document_json(), R"("after":[1])")) << "one request at a time";
  EXPECT_EQ(req.sent(), 0u) << "no SUT";
  // Without a trace, the diagram lists the requests.
  auto doc = harness::CounterexampleFromJson(cx.document_json());
  ASSERT_TRUE(doc.ok()) << doc.status();
  const std::string drawn = harness::RenderSequenceDiagram(*doc);
  EXPECT_TRUE(
      absl::StrContains(drawn, " --> #1 {\"op\":\"inc\"}\n --> #3 {\"op\":\"inc\"}\n --> #5 {\"op\":\"inc\"}\n"))
      << drawn;
  // The same violation found in another order groups with it.
  v1::LeasedJob last = ExploreJob(kCounter, 6);
  last.set_index(1);
  last.set_branch_order(v1::BRANCH_ORDER_LAST);
  EXPECT_EQ(RunExploreJob(last, nullptr).counterexample().signature(), cx.signature());
}

TEST(ExploreJob, NoViolationWithinTheDepthPassesAndACutSearchIsInconclusive) {
  const std::string safe = absl::StrReplaceAll(kCounter, {{"assert n < 3;", "assert n < 100;"}});
  v1::CompleteJobRequest passed = RunExploreJob(ExploreJob(safe, 4), nullptr);
  EXPECT_EQ(passed.outcome(), v1::JOB_OUTCOME_PASSED) << passed.reason();
  EXPECT_TRUE(absl::StrContains(passed.reason(), "no violation within the depth bound")) << passed.reason();
  v1::LeasedJob bounded = ExploreJob(safe, 4);
  bounded.mutable_budget()->set_explore_max_states(2);
  v1::CompleteJobRequest cut = RunExploreJob(bounded, nullptr);
  EXPECT_EQ(cut.outcome(), v1::JOB_OUTCOME_INCONCLUSIVE) << cut.reason();
  EXPECT_TRUE(absl::StrContains(cut.reason(), "state bound 2")) << cut.reason();
  v1::CompleteJobRequest broken = RunExploreJob(ExploreJob("spec x; on recv", 4), nullptr);
  EXPECT_EQ(broken.outcome(), v1::JOB_OUTCOME_ERROR);
  EXPECT_TRUE(absl::StrContains(broken.reason(), "the spec does not load")) << broken.reason();
}

}  // namespace
}  // namespace dualswarm::workers
