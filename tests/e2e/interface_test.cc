// Library interfaces (docs/interfaces.md): the tester builds values through
// a spec's signature and checks its laws, against the reference libraries:
// an AVL set in Python (tests/suts/pylib/avl_set.py, the Python shim), a
// binary heap and a union-find in C++ (tests/suts/lib_*.cc, the C++ shim).
// Each correct library keeps every law over several seeds; each mutant
// breaks the law it should, and the finding shrinks to a few calls.
#include <map>
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

JobOptions LibraryJob(const std::string& launch, uint64_t seed, uint64_t steps) {
  JobOptions o = testing::JobOptionsFor(launch, "jsonl", seed, steps);
  o.exec.connections = 1;
  o.exec.max_in_flight = 1;
  return o;
}

std::string CppLibraryLaunch(const char* binary, int mutant) {
  return absl::StrCat(binary, " --port {port} --arg mutant=", mutant);
}

// The correct library behind `launch` keeps every law of `spec_name`.
void ExpectEveryLawKept(const std::string& spec_name, const std::string& launch) {
  auto spec = Shipped(spec_name);
  ASSERT_NE(spec, nullptr);
  // Seeds 1-3 draw each pool depth once (8, 16, 32: executor.h).
  std::map<std::string, uint64_t> passed;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    auto r = RunJob(spec, LibraryJob(launch, seed, 2000));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
    // None set aside: a live run is all evidence.
    for (const check::LawTally& t : r->stats.laws) {
      passed[t.name] += t.passed;
      EXPECT_EQ(t.set_aside, 0u) << spec_name << " seed " << seed << ": law " << t.name;
    }
  }
  // Every law was tested on values, not only aborted.
  ASSERT_EQ(passed.size(), spec->ast.laws.size());
  for (const auto& [law, n] : passed) EXPECT_GT(n, 0u) << spec_name << ": law " << law << " never ran to its end";
}

TEST(Interfaces, TheCorrectAvlSetKeepsEveryLaw) { ExpectEveryLawKept("avl_set.dspec", AvlSetLaunch(0)); }
TEST(Interfaces, TheCorrectHeapKeepsEveryLaw) { ExpectEveryLawKept("heap.dspec", CppLibraryLaunch(DS_LIB_HEAP, 0)); }
TEST(Interfaces, TheCorrectUnionFindKeepsEveryLaw) {
  ExpectEveryLawKept("union_find.dspec", CppLibraryLaunch(DS_LIB_UNION_FIND, 0));
}

// The mutant behind `launch` breaks `law` (tests/suts/MUTANTS.md), and the
// finding shrinks within `shrink_seconds` to at most `max_calls` calls that
// still break it.
void ExpectFoundAndShrunk(const std::string& spec_name, const std::string& launch, int mutant, const std::string& law,
                          double shrink_seconds, size_t max_calls) {
  auto spec = Shipped(spec_name);
  ASSERT_NE(spec, nullptr);
  JobOptions o = LibraryJob(launch, 1, 3000);
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
  ExpectFoundAndShrunk("avl_set.dspec", AvlSetLaunch(1), 1, "tree_invariant", 25, 16);
}
TEST(Interfaces, ALostSubtreeBreaksRemoveShrinksByOne) {
  ExpectFoundAndShrunk("avl_set.dspec", AvlSetLaunch(2), 2, "remove_shrinks_by_one", 25, 12);
}
TEST(Interfaces, ACountedDuplicateBreaksAddIsIdempotent) {
  ExpectFoundAndShrunk("avl_set.dspec", AvlSetLaunch(3), 3, "add_is_idempotent", 15, 12);
}

// The C++ libraries' mutants: which law each breaks first is what the test
// pins (seed 1); each is found within the first few hundred calls.
void ExpectCppMutant(const char* spec_name, const char* binary, int mutant, const std::string& law) {
  ExpectFoundAndShrunk(spec_name, CppLibraryLaunch(binary, mutant), mutant, law, 10, 12);
}
TEST(Interfaces, HeapEarlyStopMutant) { ExpectCppMutant("heap.dspec", DS_LIB_HEAP, 1, "insert_keeps_the_min"); }
TEST(Interfaces, HeapLargerChildMutant) { ExpectCppMutant("heap.dspec", DS_LIB_HEAP, 2, "drains_in_order"); }
TEST(Interfaces, HeapGhostSizeMutant) { ExpectCppMutant("heap.dspec", DS_LIB_HEAP, 3, "drains_in_order"); }
TEST(Interfaces, UnionFindSameJoinsMutant) {
  ExpectCppMutant("union_find.dspec", DS_LIB_UNION_FIND, 1, "make_separates");
}
TEST(Interfaces, UnionFindRecountMutant) {
  ExpectCppMutant("union_find.dspec", DS_LIB_UNION_FIND, 2, "union_within_a_class");
}

// Libraries nobody here wrote, from Debian, against laws taken from their
// documentation (Debian's own python3, where the packages are installed):
// every law holds over 5 seeds, and every one is tested on values, not
// only aborted.
void ExpectRealLibraryKeepsItsLaws(const std::string& spec_name, const std::string& interface_file) {
  auto spec = Shipped(spec_name);
  ASSERT_NE(spec, nullptr);
  const std::string launch =
      absl::StrCat("/usr/bin/python3 ", DUALSWARM_SOURCE_DIR, "/shims/python/dualswarm_shim.py --port {port} ",
                   DUALSWARM_SOURCE_DIR, "/tests/real/", interface_file);
  std::map<std::string, uint64_t> passed;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    auto r = RunJob(spec, LibraryJob(launch, seed, 2000));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
    for (const check::LawTally& t : r->stats.laws) {
      passed[t.name] += t.passed;
      EXPECT_EQ(t.set_aside, 0u) << "seed " << seed << ": law " << t.name;
    }
  }
  ASSERT_EQ(passed.size(), spec->ast.laws.size());
  for (const auto& [law, n] : passed) EXPECT_GT(n, 0u) << "law " << law << " was never tested on a value";
}

TEST(RealLibraries, SortedContainersSortedListKeepsItsDocumentedLaws) {
  ExpectRealLibraryKeepsItsLaws("sortedlist.dspec", "sortedlist_iface.py");
}

TEST(RealLibraries, PyrsistentVectorsAndMapsKeepTheirDocumentedLaws) {
  ExpectRealLibraryKeepsItsLaws("pyrsistent.dspec", "pyrsistent_iface.py");
}

}  // namespace
}  // namespace dualswarm::workers
