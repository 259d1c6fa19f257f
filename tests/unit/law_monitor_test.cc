// Library interfaces (docs/interfaces.md): the `type`/`op`/law syntax and
// its checks, and the checker judging laws on hand-made traces: a law that
// holds, one whose body is false, a `when` that aborts, an exception in the
// body, and calls that are not the law's (a rerun that dropped one) set
// aside rather than judged.
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/check/checker.h"
#include "engine/check/observation.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"

namespace dualswarm::monitor {
namespace {

constexpr const char* kSignature = R"(spec iset;
use json;
type set;
op empty() -> set;
op add(set, int) -> set;
op remove(set, int) -> set;
op size(set) -> int;
property add_grows(s: set, x: int) when size(s) < 100 { size(add(s, x)) >= size(s) }
)";

std::shared_ptr<const lang::Spec> Load(const std::string& text) {
  auto spec = lang::LoadSpec("iset.dspec", text);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : nullptr;
}

TEST(InterfaceSyntax, ASignatureWithLawsLoadsWithoutAHandler) {
  auto spec = Load(kSignature);
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->ast.types.size(), 1u);
  EXPECT_EQ(spec->ast.ops.size(), 4u);
  ASSERT_EQ(spec->ast.laws.size(), 1u);
  EXPECT_EQ(spec->ast.laws[0].param_types[0], "set");
}

TEST(InterfaceSyntax, MistakesAreReportedWithTheirPlace) {
  auto bad = [](const std::string& extra, const std::string& want) {
    auto spec = lang::LoadSpec("iset.dspec", absl::StrCat(kSignature, extra));
    ASSERT_FALSE(spec.ok()) << extra;
    EXPECT_TRUE(absl::StrContains(spec.status().message(), want)) << spec.status().message();
  };
  bad("op f(tree) -> set;\n", "unknown type 'tree' in the signature");
  bad("type set;\n", "type 'set' is declared twice");
  bad("type int;\n", "cannot name an abstract type");
  bad("property p(s: set) { size(s, 1) == 0 }\n", "'size' takes 1 argument(s), got 2");
  bad("var n = 0;\nproperty p(s: set) { size(s) == n }\n", "'n' is server state");
  bad("property p(s: set) { size(s) == fresh int }\n", "must be deterministic");
  bad("fn f(s) { size(s) }\n", "only an interface's properties call it");
  bad("var n = 0;\nproperty p(s: set) { n = 1; size(s) == 0 }\n", "'n' is server state");
  bad("property p(x: int) { x < 10 }\n", "calls no operation of the library");
}

TEST(InterfaceSyntax, ALawMayTakeNoParameters) {
  auto spec = Load(absl::StrCat(kSignature, "property empty_is_empty() { size(empty()) == 0 }\n"));
  ASSERT_NE(spec, nullptr);
  ASSERT_EQ(spec->ast.laws.size(), 2u);
  EXPECT_TRUE(spec->ast.laws[1].params.empty());
  // The generator's two choice sites (op, law) follow the spec's own.
  EXPECT_EQ(spec->ast.num_choice_sites, 2);
}

std::vector<check::Observation> Trace(const std::vector<std::string>& lines) {
  std::vector<check::Observation> out;
  for (const auto& l : lines) {
    auto o = check::ParseObservationLine(l);
    EXPECT_TRUE(o.ok()) << o.status() << ": " << l;
    if (o.ok()) out.push_back(*o);
  }
  return out;
}

// A law run of add_grows on s = handle 0, x = 5: size(s), then
// size(add(s, 5)), then size(s) again, answered with `sizes`.
std::vector<std::string> AddGrowsRun(int64_t before, int64_t after,
                                     const std::string& add_answer = R"({"ret":{"$set":1}})") {
  const std::string tag = R"("law":{"name":"add_grows","run":1,"args":[{"$set":0},5]})";
  return {
      R"({"label":1,"conn":0,"dir":"sent","msg":{"call":"empty","args":[]}})",
      R"({"label":2,"conn":0,"dir":"received","msg":{"ret":{"$set":0}}})",
      absl::StrCat(R"({"label":3,"conn":0,"dir":"sent","msg":{"call":"size","args":[{"$set":0}],)", tag, "}}"),
      absl::StrCat(R"({"label":4,"conn":0,"dir":"received","msg":{"ret":)", before, "}}"),
      absl::StrCat(R"({"label":5,"conn":0,"dir":"sent","msg":{"call":"add","args":[{"$set":0},5],)", tag, "}}"),
      absl::StrCat(R"({"label":6,"conn":0,"dir":"received","msg":)", add_answer, "}"),
      absl::StrCat(R"({"label":7,"conn":0,"dir":"sent","msg":{"call":"size","args":[{"$set":1}],)", tag, "}}"),
      absl::StrCat(R"({"label":8,"conn":0,"dir":"received","msg":{"ret":)", after, "}}"),
      absl::StrCat(R"({"label":9,"conn":0,"dir":"sent","msg":{"call":"size","args":[{"$set":0}],)", tag, "}}"),
      absl::StrCat(R"({"label":10,"conn":0,"dir":"received","msg":{"ret":)", before, "}}"),
  };
}

TEST(LawMonitor, AHoldingLawIsAccepted) {
  auto spec = Load(kSignature);
  ASSERT_NE(spec, nullptr);
  auto v = check::CheckTrace(spec, Trace(AddGrowsRun(2, 3)), {});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->kind, check::Verdict::Kind::kAccept) << v->message;
}

TEST(LawMonitor, AFalseBodyIsAViolationNamingTheLawAndItsCalls) {
  auto spec = Load(kSignature);
  ASSERT_NE(spec, nullptr);
  auto v = check::CheckTrace(spec, Trace(AddGrowsRun(2, 1)), {});
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->kind, check::Verdict::Kind::kReject) << v->message;
  EXPECT_EQ(v->property, "add_grows");
  EXPECT_EQ(v->observation.label, 10);
  EXPECT_TRUE(absl::StrContains(v->message, "s = {\"$set\":0}, x = 5")) << v->message;
  ASSERT_EQ(v->reasons.size(), 1u);
  EXPECT_TRUE(absl::StrContains(v->reasons[0].text, "add({\"$set\":0}, 5) -> {\"ret\":{\"$set\":1}}"))
      << v->reasons[0].text;
}

TEST(LawMonitor, AFalseConditionAbortsTheRun) {
  auto spec = Load(kSignature);
  ASSERT_NE(spec, nullptr);
  // size(s) = 200: the `when` is false after the first call; what follows
  // is not the law's and is no violation either.
  auto v = check::CheckTrace(spec, Trace(AddGrowsRun(200, 1)), {});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->kind, check::Verdict::Kind::kAccept) << v->message;
}

TEST(LawMonitor, AnExceptionInTheBodyIsAViolation) {
  auto spec = Load(kSignature);
  ASSERT_NE(spec, nullptr);
  auto v = check::CheckTrace(spec, Trace(AddGrowsRun(2, 3, R"({"exn":"MemoryError: "})")), {});
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->kind, check::Verdict::Kind::kReject) << v->message;
  EXPECT_TRUE(absl::StrContains(v->message, "'add' raised")) << v->message;
}

TEST(LawMonitor, AnAnswerOfTheWrongTypeIsAViolation) {
  auto spec = Load(kSignature);
  ASSERT_NE(spec, nullptr);
  // add answers an int where the signature says set.
  auto v = check::CheckTrace(spec, Trace(AddGrowsRun(2, 3, R"({"ret":7})")), {});
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->kind, check::Verdict::Kind::kReject) << v->message;
  EXPECT_TRUE(absl::StrContains(v->message, "'add' returned 7, which is not what its signature says")) << v->message;
}

TEST(LawMonitor, ALawPassingAWrongTypeIsASpecError) {
  auto spec = Load(absl::StrCat(kSignature, "property swapped(s: set, x: int) { size(add(x, x)) > 0 }\n"));
  ASSERT_NE(spec, nullptr);
  const std::string tag = R"("law":{"name":"swapped","run":1,"args":[{"$set":0},5]})";
  auto v = check::CheckTrace(
      spec,
      Trace({absl::StrCat(R"({"label":1,"conn":0,"dir":"sent","msg":{"call":"add","args":[5,5],)", tag, "}}"),
             R"({"label":2,"conn":0,"dir":"received","msg":{"exn":"AttributeError"}})"}),
      {});
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->kind, check::Verdict::Kind::kSpecError) << v->message;
  EXPECT_TRUE(absl::StrContains(v->message, "argument 1 of 'add' must be a handle")) << v->message;
}

TEST(LawMonitor, CallsThatAreNotTheLawsAreSetAsideNotJudged) {
  auto spec = Load(kSignature);
  ASSERT_NE(spec, nullptr);
  // A rerun lost the add: its size call reads another set, the shim
  // refused a handle, or the call differs. None is evidence.
  std::vector<std::string> lines = AddGrowsRun(2, 1);
  lines.erase(lines.begin() + 4, lines.begin() + 6);
  auto v = check::CheckTrace(spec, Trace(lines), {});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->kind, check::Verdict::Kind::kAccept) << v->message;
  v = check::CheckTrace(spec, Trace(AddGrowsRun(2, 1, R"({"error":"unknown handle"})")), {});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->kind, check::Verdict::Kind::kAccept) << v->message;
}

}  // namespace
}  // namespace dualswarm::monitor
