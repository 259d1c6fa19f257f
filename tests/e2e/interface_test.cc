// Library interfaces (docs/interfaces.md): the tester builds sets through
// specs/avl_set.dspec's signature, served by the Python shim from the
// reference AVL set (tests/suts/pylib/avl_set.py). The correct library
// passes every law over several seeds; each mutant breaks the law it
// should, and the finding shrinks to a few calls that replay.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/harness/counterexample.h"
#include "gtest/gtest.h"
#include "tests/common/job_runs.h"
#include "tests/common/shipped_spec.h"
#include "workers/runner/runner.h"
#include "workers/runner/shrink_job.h"

namespace dualswarm::workers {
namespace {

std::string AvlSetLaunch(int mutant) {
  return absl::StrCat("python3 ", DUALSWARM_SOURCE_DIR,
                      "/shims/python/dualswarm_shim.py --port {port} --arg mutant=", mutant, " ", DUALSWARM_SOURCE_DIR,
                      "/tests/suts/pylib/avl_set.py");
}

JobOptions AvlSetJob(int mutant, uint64_t seed, uint64_t steps) {
  JobOptions o = testing::JobOptionsFor(AvlSetLaunch(mutant), "jsonl", seed, steps);
  o.exec.connections = 1;
  o.exec.max_in_flight = 1;
  return o;
}

TEST(Interfaces, TheCorrectLibraryKeepsEveryLaw) {
  auto spec = Shipped("avl_set.dspec");
  ASSERT_NE(spec, nullptr);
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    auto r = RunJob(spec, AvlSetJob(0, seed, 2000));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
  }
}

// A mutant breaks `law` (tests/suts/MUTANTS.md), and the finding shrinks
// within `shrink_seconds` to at most `max_calls` calls that still break it.
void ExpectFoundAndShrunk(int mutant, const std::string& law, double shrink_seconds, size_t max_calls) {
  auto spec = Shipped("avl_set.dspec");
  ASSERT_NE(spec, nullptr);
  JobOptions o = AvlSetJob(mutant, 1, 3000);
  auto r = RunJob(spec, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->outcome, Outcome::kProperty) << "mutant " << mutant << ": " << testing::DescribeJobResult(*r);
  EXPECT_EQ(r->verdict.property, law) << "mutant " << mutant << ": " << r->reason;
  ShrinkJobOptions so;
  so.max_seconds = shrink_seconds;
  auto cx = MakeCounterexample(spec, o, *r, so);
  ASSERT_TRUE(cx.ok()) << cx.status();
  const std::string diagram = harness::RenderSequenceDiagram(*cx);
  EXPECT_EQ(cx->verdict.kind, "property") << diagram;
  EXPECT_LE(cx->input.size(), max_calls) << "mutant " << mutant << ":\n" << diagram;
  EXPECT_TRUE(absl::StrContains(diagram, "<== PROPERTY VIOLATED")) << diagram;
}

TEST(Interfaces, ABrokenRotationBreaksTheTreeInvariant) {
  // Found after ~2,000 calls; each rerun starts Python afresh.
  ExpectFoundAndShrunk(1, "tree_invariant", 25, 16);
}
TEST(Interfaces, ALostSubtreeBreaksRemoveShrinksByOne) { ExpectFoundAndShrunk(2, "remove_shrinks_by_one", 25, 12); }
TEST(Interfaces, ACountedDuplicateBreaksAddIsIdempotent) { ExpectFoundAndShrunk(3, "add_is_idempotent", 15, 12); }

}  // namespace
}  // namespace dualswarm::workers
