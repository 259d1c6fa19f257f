// Spec coverage: branch numbering (lang/branches.h), the branches a handler
// run and a `gen` run take (interp.h), the ones the checker's explanation
// took (Checker::CoveredBranches), and how a run reports them
// (harness/coverage.h).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "engine/check/checker.h"
#include "engine/check/observation.h"
#include "engine/harness/coverage.h"
#include "engine/harness/coverage_guide.h"
#include "engine/harness/executor.h"
#include "engine/ir/json.h"
#include "engine/lang/branches.h"
#include "engine/lang/interp.h"
#include "engine/lang/spec.h"
#include "engine/sym/solver.h"
#include "engine/sym/term.h"
#include "gtest/gtest.h"
#include "tests/common/fixed_gen.h"

namespace dualswarm {
namespace {

using lang::BranchKind;

// Branch ids, in order: 0 if-then, 1 if-else (unwritten), 2-3 either,
// 4-5 match arms, 6-7 the gen's oneof.
constexpr const char* kSpec = R"(spec t;
var n: int = 0;
fn tag(x) {
  match x {
    "inc" => 1,
    _ => 0,
  }
}
on recv q from c {
  if q.op == "inc" { n = n + tag(q.op); }
  either { send c { v: "a" }; } or { send c { v: "b" }; }
}
gen request {
  oneof { { op: pick([]) }, { op: "inc" } }
}
)";

std::shared_ptr<const lang::Spec> Load() {
  auto spec = lang::LoadSpec("t.dspec", kSpec);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : nullptr;
}

TEST(Coverage, EveryArmOfEveryChoiceHasAnIdInSourceOrderWithinItsDeclaration) {
  auto spec = Load();
  ASSERT_NE(spec, nullptr);
  ASSERT_EQ(spec->branches.size(), 8u);
  // Functions come first: the match in `fn tag`.
  EXPECT_EQ(spec->branches[0].kind, BranchKind::kMatchArm);
  EXPECT_EQ(spec->branches[0].scope, "fn tag");
  EXPECT_EQ(spec->branches[0].loc.line, 5);
  EXPECT_EQ(lang::BranchLabel(spec->branches[1]), "match arm 2 of 2");
  EXPECT_EQ(spec->branches[2].kind, BranchKind::kIfThen);
  EXPECT_EQ(spec->branches[3].kind, BranchKind::kIfElse);
  EXPECT_EQ(spec->branches[3].loc.line, 10);  // not written: the `if`
  EXPECT_EQ(spec->branches[3].loc.col, 3);
  EXPECT_EQ(spec->branches[3].scope, "on recv");
  EXPECT_EQ(lang::BranchLabel(spec->branches[5]), "either alternative 2 of 2");
  EXPECT_EQ(spec->branches[7].kind, BranchKind::kAlternative);
  EXPECT_EQ(spec->branches[7].scope, "gen request");
}

class FirstPaths : public lang::Oracle {
 public:
  int Choose(int, lang::Loc) override { return 1; }
  ir::Value Fresh(sym::Sort, lang::Loc) override { return ir::Value::Null(); }
  bool Decide(const sym::TermRef&, lang::Loc) override { return true; }
  bool Assume(const sym::TermRef&, lang::Loc) override { return true; }
  bool Possible(const sym::TermRef&) override { return true; }
};

TEST(Coverage, AHandlerRunRecordsTheBranchesItTookInOrderOnlyWhenAsked) {
  auto spec = Load();
  ASSERT_NE(spec, nullptr);
  lang::Interpreter interp(spec.get());
  FirstPaths oracle;
  lang::StepOutput out;
  std::vector<int32_t> taken = {99};  // cleared by the run
  out.branches = &taken;
  auto request = ir::ParseJson(R"({"op":"inc"})");
  ASSERT_TRUE(request.ok());
  ASSERT_TRUE(interp.RunHandler(spec->initial_globals, *request, ir::Value::Int(0), &oracle, &out).ok());
  EXPECT_EQ(taken, (std::vector<int32_t>{2, 0, 5}));  // then, tag's "inc" arm, either's second
  auto get = ir::ParseJson(R"({"op":"get"})");
  ASSERT_TRUE(interp.RunHandler(spec->initial_globals, *get, ir::Value::Int(0), &oracle, &out).ok());
  EXPECT_EQ(taken, (std::vector<int32_t>{3, 5}));
  lang::StepOutput unrecorded;
  ASSERT_TRUE(interp.RunHandler(spec->initial_globals, *get, ir::Value::Int(0), &oracle, &unrecorded).ok());
  EXPECT_EQ(unrecorded.branches, nullptr);
}

TEST(Coverage, AGenReportsTheAlternativesOfTheRequestItMadeNotThoseThatFailed) {
  auto spec = Load();
  ASSERT_NE(spec, nullptr);
  lang::Interpreter interp(spec.get());
  testing::FixedGen gen;
  auto v = interp.RunGen("request", spec->initial_globals, &gen);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(ir::ToJson(*v), R"({"op":"inc"})");
  EXPECT_EQ(gen.took, (std::vector<int32_t>{7}));  // the first one found nothing to pick
}

std::vector<check::Observation> Trace(std::initializer_list<const char*> lines) {
  std::vector<check::Observation> trace;
  for (const char* line : lines) {
    auto o = check::ParseObservationLine(line);
    EXPECT_TRUE(o.ok()) << o.status() << ": " << line;
    if (o.ok()) trace.push_back(*o);
  }
  return trace;
}

TEST(Coverage, TheCheckerCountsTheBranchesOfItsExplanationNotThoseItTriedAndDropped) {
  auto spec = Load();
  ASSERT_NE(spec, nullptr);
  // The checker tries either's first alternative first ("a"), which the
  // response rules out.
  const auto trace = Trace({R"({"label":1,"conn":0,"dir":"sent","msg":{"op":"inc"}})",
                            R"({"label":2,"conn":0,"dir":"received","msg":{"v":"b"}})",
                            R"({"label":3,"conn":0,"dir":"sent","msg":{"op":"get"}})",
                            R"({"label":4,"conn":0,"dir":"received","msg":{"v":"b"}})"});
  check::CheckerOptions co;
  co.record_coverage = true;
  auto checker = check::Checker::Create(spec, co);
  ASSERT_TRUE(checker.ok()) << checker.status();
  for (const auto& o : trace) ASSERT_TRUE((*checker)->Observe(o).ok());
  (*checker)->Finish();
  ASSERT_EQ((*checker)->verdict().kind, check::Verdict::Kind::kAccept);
  EXPECT_EQ((*checker)->CoveredBranches(), (std::vector<int32_t>{0, 2, 3, 5}));

  check::CheckerOptions off;
  auto unrecorded = check::Checker::Create(spec, off);
  ASSERT_TRUE(unrecorded.ok());
  for (const auto& o : trace) ASSERT_TRUE((*unrecorded)->Observe(o).ok());
  (*unrecorded)->Finish();
  EXPECT_TRUE((*unrecorded)->CoveredBranches().empty());
}

TEST(Coverage, ARunReportsCountsAndTheBranchesNeverTaken) {
  auto spec = Load();
  ASSERT_NE(spec, nullptr);
  const std::vector<int32_t> covered = {0, 2, 3, 5, 7, 1000};  // 1000: no such branch
  const harness::CoverageCount n = harness::CountCoverage(*spec, covered);
  EXPECT_EQ(n.covered, 5u);
  EXPECT_EQ(n.total, 8u);
  const std::string json = harness::CoverageToJson(*spec, covered);
  auto parsed = ir::ParseJson(json);
  ASSERT_TRUE(parsed.ok()) << json;
  EXPECT_EQ(ir::ToJson(*parsed->Find("branches")), "[0,2,3,5,7]");
  EXPECT_TRUE(
      absl::StrContains(json, R"({"id":4,"at":"t.dspec:11:10","in":"on recv","branch":"either alternative 1 of 2"})"))
      << json;
  const std::string text = harness::FormatCoverage(*spec, covered, 2);
  EXPECT_TRUE(absl::StartsWith(text, "spec coverage: 5 of 8 branches (62 %); never taken:\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "  t.dspec:6:5  fn tag: match arm 2 of 2\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "  and 1 more (--json lists them all)\n")) << text;
  EXPECT_EQ(harness::MergeCoverage({1, 3}, {2, 3, 9}), (std::vector<int32_t>{1, 2, 3, 9}));
}

// A rare request (1 in 50 drawn) whose branch nothing else reaches.
constexpr const char* kRare = R"(spec rare;
use json;
var n: int = 0;
on recv q from c {
  if q.op == "inc" { n = n + 1; }
  send c { n: n };
}
gen request { freq { 49: { op: "get" }, 1: { op: "inc" } } }
)";

// Sends what `ex` generates on its one connection, answers each request
// with `answer(request)` (null: stop there), and expects the checker to
// accept the run.
void DriveOneConnection(harness::Executor& ex,
                        const std::function<std::optional<ir::Value>(const ir::Value&)>& answer) {
  int n = 0;
  while (!ex.finished()) {
    auto r = ex.Next();
    EXPECT_TRUE(r.ok() && r->has_value());
    if (!r.ok() || !r->has_value()) break;
    std::optional<ir::Value> reply = answer((*r)->msg);
    if (!reply) break;
    EXPECT_TRUE(ex.Sent(**r, n).ok());
    EXPECT_TRUE(ex.Received(0, *reply, n).ok());
    ++n;
  }
  EXPECT_EQ(ex.verdict().kind, check::Verdict::Kind::kAccept);
}

// How many "inc" requests a run of `steps` sends (one connection, each
// answered as the spec does).
int IncsSent(uint64_t seed, int guide_candidates, int steps, std::vector<int32_t> reached = {}) {
  auto spec = lang::LoadSpec("rare.dspec", kRare);
  EXPECT_TRUE(spec.ok()) << spec.status();
  harness::ExecutorOptions o;
  o.connections = 1;
  o.max_in_flight = 1;
  o.steps = static_cast<uint64_t>(steps);
  o.seed = seed;
  o.guide_candidates = guide_candidates;
  o.guide_reached = std::move(reached);
  auto ex = harness::Executor::Create(*spec, o);
  EXPECT_TRUE(ex.ok()) << ex.status();
  int incs = 0;
  if (ex.ok())
    DriveOneConnection(**ex, [&](const ir::Value& q) {
      incs += *q.Find("op") == ir::Value::String("inc");
      return ir::Value::Map({{"n", ir::Value::Int(incs)}});
    });
  return incs;
}

// Coverage-guided generation (harness/coverage_guide.h): of 8 requests
// drawn, the one predicted to reach a branch no earlier request reached
// goes out, so a rare request that takes the `then` arm is sent once it
// is drawn at all (in 20 requests: 1 - (49/50)^160 = 96 %); drawn one at
// a time it is sent 1 time in 50 (in 20 requests: 33 %).
TEST(Coverage, GuidedGenerationSendsTheRequestThatReachesANewBranch) {
  int guided_found = 0, random_found = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    guided_found += IncsSent(seed, 8, 20) > 0;
    random_found += IncsSent(seed, 0, 20) > 0;
  }
  EXPECT_GE(guided_found, 8);
  EXPECT_LE(random_found, 6);
  // Once reached, the branch is not sought again: guided runs stay mostly
  // on the common request.
  EXPECT_LE(IncsSent(1, 8, 20), 3);
}

// A guide told that another job of the run reached the `then` arm (branch
// 0; ExecutorOptions::guide_reached) does not seek it: the rare request
// goes out no more often than unguided (checked against the same seeds
// without it).
TEST(Coverage, AGuideStartsFromTheBranchesOtherJobsReached) {
  int seeking = 0, told = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    seeking += IncsSent(seed, 8, 20) > 0;
    told += IncsSent(seed, 8, 20, {0}) > 0;
  }
  EXPECT_GE(seeking, 8);
  EXPECT_LE(told, 6);
}

TEST(Coverage, APredictionIsEveryBranchSomeFeasiblePathTakes) {
  auto spec = lang::LoadSpec("rare.dspec", kRare);
  ASSERT_TRUE(spec.ok()) << spec.status();
  harness::CoverageGuide guide(*spec, {});
  auto inc = ir::ParseJson(R"({"op":"inc"})");
  ASSERT_TRUE(inc.ok());
  const std::vector<int32_t> predicted = guide.Predict((*spec)->initial_globals, *inc);
  EXPECT_EQ(predicted, (std::vector<int32_t>{0}));  // `then`
  EXPECT_EQ(guide.Novelty(predicted), 1u);
  guide.Reach(predicted);
  EXPECT_EQ(guide.Novelty(predicted), 0u);
  auto spec2 = Load();  // either: both alternatives are feasible
  ASSERT_NE(spec2, nullptr);
  harness::CoverageGuide both(spec2, {});
  auto get = ir::ParseJson(R"({"op":"get"})");
  EXPECT_EQ(both.Predict(spec2->initial_globals, *get), (std::vector<int32_t>{3, 4, 5}));
}

// Branches behind values a random draw almost never hits (1 in 10^6, 1 in
// 26^5): concolic generation asks Z3 for them. The gen block's own
// branches on a draw (always the `else` arm concolically) keep `big` and
// `small` true to the numbers sent — also `m`, which no handler path
// constrains (its draw is kept only when it fits the arm); a word of a
// drawn length stays a-z.
constexpr const char* kMagic = R"(spec magic;
use json;
var hits: int = 0;
on recv q from c {
  if q.n == 4711 { hits = hits + 1; }
  if q.w == "zebra" { hits = hits + 10; }
  if len(q.v) == 7 { hits = hits + 100; }
  send c { hits: hits };
}
gen request {
  let n = random_int(0, 1000000);
  let big = if n > 900000 { true } else { false };
  let m = random_int(0, 9);
  let small = if m < 5 { true } else { false };
  { n: n, big: big, m: m, small: small, w: random_word(5), v: random_word(random_int(0, 30)) }
}
)";

struct MagicRun {
  int magic_numbers = 0, magic_words = 0, lengths_seven = 0;
  bool well_formed = true;  // every request within the gen block's domain
};

MagicRun RunMagic(uint64_t seed, bool concolic, int steps) {
  auto spec = lang::LoadSpec("magic.dspec", kMagic);
  EXPECT_TRUE(spec.ok()) << spec.status();
  harness::ExecutorOptions o;
  o.connections = 1;
  o.max_in_flight = 1;
  o.steps = static_cast<uint64_t>(steps);
  o.seed = seed;
  o.guide_candidates = 8;
  o.guide_concolic = concolic;
  auto ex = harness::Executor::Create(*spec, o);
  EXPECT_TRUE(ex.ok()) << ex.status();
  MagicRun run;
  int hits = 0;
  auto lowercase = [](const std::string& w) {
    for (char ch : w)
      if (ch < 'a' || ch > 'z') return false;
    return true;
  };
  if (ex.ok())
    DriveOneConnection(**ex, [&](const ir::Value& q) -> std::optional<ir::Value> {
      EXPECT_TRUE(q.IsConcrete());
      if (!q.IsConcrete()) return std::nullopt;
      const int64_t num = q.Find("n")->as_int();
      const int64_t m = q.Find("m")->as_int();
      run.well_formed &= m >= 0 && m <= 9 && q.Find("small")->as_bool() == (m < 5);
      const std::string& w = q.Find("w")->as_string();
      const std::string& v = q.Find("v")->as_string();
      run.well_formed &= num >= 0 && num <= 1000000 && q.Find("big")->as_bool() == (num > 900000) && w.size() == 5 &&
                         lowercase(w) && v.size() <= 30 && lowercase(v);
      if (num == 4711) ++run.magic_numbers, hits += 1;
      if (w == "zebra") ++run.magic_words, hits += 10;
      if (v.size() == 7) ++run.lengths_seven, hits += 100;
      return ir::Value::Map({{"hits", ir::Value::Int(hits)}});
    });
  return run;
}

// Concolic generation (docs/coverage.md): the three branches are reached
// within 5 requests, every request inside the gen block's domain; drawing
// alone (8 candidates a request) reaches neither magic value in 50.
TEST(Coverage, ConcolicGenerationSolvesForValuesDrawsAlmostNeverHit) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const MagicRun solved = RunMagic(seed, true, 5);
    EXPECT_GE(solved.magic_numbers, 1) << seed;
    EXPECT_GE(solved.magic_words, 1) << seed;
    EXPECT_GE(solved.lengths_seven, 1) << seed;
    EXPECT_TRUE(solved.well_formed) << seed;
    const MagicRun drawn = RunMagic(seed, false, 50);
    EXPECT_EQ(drawn.magic_numbers, 0) << seed;
    EXPECT_EQ(drawn.magic_words, 0) << seed;
    EXPECT_TRUE(drawn.well_formed) << seed;
  }
}

TEST(Coverage, ASolverModelSatisfiesItsConstraints) {
  sym::Solver solver;
  const sym::TermRef n = sym::MkVar(sym::Sort::kInt, 1, "n");
  const sym::TermRef w = sym::MkVar(sym::Sort::kString, 2, "w");
  auto model = solver.Model({sym::MkLt(sym::MkInt(10), n), sym::MkLt(n, sym::MkInt(12)),
                             sym::MkEq(sym::MkConcat(sym::MkString("a"), w), sym::MkString("a\x01z"))},
                            {n, w});
  ASSERT_TRUE(model.has_value());
  EXPECT_EQ(model->at(1)->ival, 11);
  EXPECT_EQ(model->at(2)->sval, std::string("\x01z"));
  EXPECT_FALSE(solver.Model({sym::MkLt(n, sym::MkInt(0)), sym::MkLt(sym::MkInt(0), n)}, {n}).has_value());
}

}  // namespace
}  // namespace dualswarm
