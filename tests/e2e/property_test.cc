// Properties on live runs (engine/monitor): a property stricter than the
// spec is a finding of its own kind against the correct reference queue,
// named by the property, shrunk to the one request that breaks it; the
// same server passes with the spec's shipped properties.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"
#include "tests/common/job_runs.h"
#include "tests/common/shipped_spec.h"
#include "workers/runner/runner.h"
#include "workers/runner/shrink_job.h"

namespace dualswarm::workers {
namespace {

// The queue spec with a property the spec does not imply: a deq never
// finds the queue empty.
std::shared_ptr<const lang::Spec> QueueThatMayNeverBeEmpty() {
  auto shipped = Shipped("queue.dspec");
  auto spec = lang::LoadSpec(
      "queue_never_empty.dspec",
      absl::StrCat(shipped->source,
                   "\nproperty never_empty(q, r) = always { r == none || q.op != \"deq\" || r.value != null };\n"));
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : nullptr;
}

TEST(Properties, AViolatedPropertyIsAFindingOfItsOwnKindNamedByIt) {
  auto spec = QueueThatMayNeverBeEmpty();
  ASSERT_NE(spec, nullptr);
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    JobOptions o = testing::JobOptionsFor(absl::StrCat(DS_REF_QUEUE, " --port {port} --dir {dir}"), "jsonl", seed, 500);
    o.exec.connections = 4;
    o.exec.max_in_flight = 4;
    auto r = RunJob(spec, o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->outcome, Outcome::kProperty) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
    EXPECT_EQ(r->verdict.property, "never_empty");
    EXPECT_FALSE(r->verdict.deadline_missed);
    EXPECT_TRUE(absl::StrContains(r->reason, "property 'never_empty'")) << r->reason;
    EXPECT_EQ(VerdictOf(*r).kind, "property");
    EXPECT_EQ(VerdictOf(*r).field, "property:never_empty");
  }
}

TEST(Properties, APropertyFindingShrinksToTheRequestThatBreaksIt) {
  auto spec = QueueThatMayNeverBeEmpty();
  ASSERT_NE(spec, nullptr);
  JobOptions o = testing::JobOptionsFor(absl::StrCat(DS_REF_QUEUE, " --port {port} --dir {dir}"), "jsonl", 7, 500);
  o.exec.connections = 4;
  o.exec.max_in_flight = 4;
  auto r = RunJob(spec, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->outcome, Outcome::kProperty) << testing::DescribeJobResult(*r);
  ShrinkJobOptions so;
  so.max_seconds = 30;
  auto cx = MakeCounterexample(spec, o, *r, so);
  ASSERT_TRUE(cx.ok()) << cx.status();
  const std::string diagram = harness::RenderSequenceDiagram(*cx);
  EXPECT_EQ(cx->verdict.kind, "property");
  ASSERT_EQ(cx->input.size(), 1u) << diagram;
  EXPECT_TRUE(absl::StrContains(cx->input[0].jexpr.ToString(), "deq")) << diagram;
  EXPECT_TRUE(absl::StrContains(diagram, "<== PROPERTY VIOLATED")) << diagram;
}

}  // namespace
}  // namespace dualswarm::workers
