// Property monitors (engine/monitor): the `property` syntax and its checks,
// the monitor's verdicts on hand-made event sequences (always, next,
// eventually within N and its missed deadline, weak until, nesting), its
// obligation bound, the checker's use of it on traces (a property's
// rejection, a condition that is not a bool), and explore checking
// properties against the spec.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/check/checker.h"
#include "engine/check/observation.h"
#include "engine/explore/explorer.h"
#include "engine/ir/json.h"
#include "engine/lang/spec.h"
#include "engine/monitor/property_monitor.h"
#include "gtest/gtest.h"

namespace dualswarm::monitor {
namespace {

using ir::Value;

constexpr const char* kHead = R"(spec counter;
use json;
var n: int = 0;
on recv q from c {
  if q.op == "inc" { n = n + 1; }
  send c { n: n };
}
gen request { oneof { { op: "get" }, { op: "inc" } } }
)";

std::shared_ptr<const lang::Spec> WithProperties(const std::string& props) {
  auto spec = lang::LoadSpec("counter.dspec", absl::StrCat(kHead, props));
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : nullptr;
}

std::string LoadError(const std::string& props) {
  auto spec = lang::LoadSpec("counter.dspec", absl::StrCat(kHead, props));
  return spec.ok() ? "" : std::string(spec.status().message());
}

MonitorEvent Sent(const std::string& op, int64_t conn = 0) {
  return {Value::Map({{"op", Value::String(op)}}), Value::None(), conn};
}
MonitorEvent Answered(const std::string& op, int64_t n, int64_t conn = 0) {
  return {Value::Map({{"op", Value::String(op)}}), Value::Map({{"n", Value::Int(n)}}), conn};
}

// Steps a monitor of the spec's only property over `events`; the number of
// events after which it was violated, or -1.
int ViolatedAfter(const std::string& prop, const std::vector<MonitorEvent>& events, bool* deadline = nullptr) {
  auto spec = WithProperties(prop);
  if (spec == nullptr) return -2;
  PropertyMonitor m(spec.get(), 0);
  for (size_t i = 0; i < events.size(); ++i) {
    absl::Status s = m.Step(events[i]);
    EXPECT_TRUE(s.ok()) << s;
    if (m.violated()) {
      if (deadline) *deadline = m.deadline_missed();
      return static_cast<int>(i) + 1;
    }
  }
  return -1;
}

TEST(PropertySyntax, MistakesAreReportedWithTheirPlace) {
  EXPECT_TRUE(absl::StrContains(LoadError("property p(q) = eventually { true };"),
                                "`eventually` needs a bound: `eventually within N F`"));
  EXPECT_TRUE(
      absl::StrContains(LoadError("property p(q, r) = always { r == none || r.n < n };"), "'n' is server state"));
  EXPECT_TRUE(absl::StrContains(LoadError("property p(q) = always { fresh int == 1 };"), "must be deterministic"));
  EXPECT_TRUE(absl::StrContains(LoadError("property p(q) = always { true };\nproperty p(q) = always { true };"),
                                "property 'p' is defined twice"));
  EXPECT_TRUE(absl::StrContains(LoadError("property p() = always { true };"), "names 1 to 3 parts of an event"));
  EXPECT_TRUE(absl::StrContains(LoadError("property p(q) = always true;"), "expected a condition `{ EXPR }`"));
  EXPECT_TRUE(absl::StrContains(LoadError("property p(q) = eventually within -1 { true };"), "after `within`"));
  // The temporal words stay ordinary names outside properties.
  auto spec = lang::LoadSpec("n.dspec", R"(spec n;
var always: int = 0;
on recv q from c { let next = q.until; send c { within: next }; }
)");
  EXPECT_TRUE(spec.ok()) << spec.status();
}

TEST(PropertyMonitor, AlwaysFailsAtTheFirstEventThatBreaksIt) {
  const std::string small = "property small(q, r) = always { r == none || r.n < 2 };";
  EXPECT_EQ(ViolatedAfter(small, {Sent("inc"), Answered("inc", 1), Sent("inc"), Answered("inc", 2), Sent("get")}), 4);
  EXPECT_EQ(ViolatedAfter(small, {Sent("inc"), Answered("inc", 1)}), -1);
}

TEST(PropertyMonitor, NextLooksAtTheFollowingEventOnly) {
  const std::string p = "property p(q, r) = next { r != none };";
  EXPECT_EQ(ViolatedAfter(p, {Sent("get"), Sent("get")}), 2);
  EXPECT_EQ(ViolatedAfter(p, {Sent("get"), Answered("get", 0), Sent("get")}), -1);
  EXPECT_EQ(ViolatedAfter(p, {Sent("get")}), -1) << "a trace that ends owes nothing (weak)";
}

TEST(PropertyMonitor, AnEventualityFailsWhenItsWindowClosesAndSaysSo) {
  const std::string p =
      "property p(q, r) = always ({ r == none && q.op == \"inc\" } => eventually within 2 { r != none && q.op == "
      "\"get\" });";
  bool deadline = false;
  EXPECT_EQ(ViolatedAfter(p, {Sent("inc"), Answered("inc", 1), Sent("inc"), Sent("get")}, &deadline), 3);
  EXPECT_TRUE(deadline);
  EXPECT_EQ(ViolatedAfter(
                p, {Sent("inc"), Sent("get"), Answered("get", 1), Sent("inc"), Answered("inc", 2), Answered("get", 2)}),
            -1);
  EXPECT_EQ(ViolatedAfter(p, {Sent("get"), Sent("inc")}), -1) << "the window is still open when the trace ends";
  // `within 0`: at the event itself.
  EXPECT_EQ(ViolatedAfter("property z(q) = eventually within 0 { q.op == \"get\" };", {Sent("inc")}, &deadline), 1);
  EXPECT_TRUE(deadline);
  EXPECT_EQ(ViolatedAfter("property s(q, r) = always { r == none };", {Sent("inc"), Answered("inc", 1)}, &deadline), 2);
  EXPECT_FALSE(deadline) << "a plain safety violation is no missed deadline";
}

TEST(PropertyMonitor, UntilIsWeak) {
  const std::string p = "property p(q, r) = { q.op == \"get\" } until { q.op == \"inc\" };";
  EXPECT_EQ(ViolatedAfter(p, {Sent("get"), Answered("get", 0), Sent("inc"), Sent("get"), Sent("inc")}), -1);
  EXPECT_EQ(ViolatedAfter(p, {Sent("get"), Answered("get", 0)}), -1) << "no inc yet: not a violation (weak)";
  EXPECT_EQ(
      ViolatedAfter("property p(q, r) = { r == none } until { q.op == \"inc\" };", {Sent("get"), Answered("get", 0)}),
      2);
}

TEST(PropertyMonitor, OperatorsNestAndNegate) {
  // Never two answers in a row.
  const std::string p = "property p(q, r) = always ({ r != none } => next { r == none });";
  EXPECT_EQ(ViolatedAfter(p, {Sent("get"), Sent("get"), Answered("get", 0), Answered("get", 0)}), 4);
  EXPECT_EQ(ViolatedAfter("property p(q) = !always { q.op == \"get\" };", {Sent("get"), Sent("inc")}), -1);
  EXPECT_EQ(ViolatedAfter("property p(q, r, c) = always { c == 0 } || always { c == 1 };",
                          {Sent("get", 1), Sent("get", 1), Sent("get", 0)}),
            3);
}

TEST(PropertyMonitor, ALeftSideThatDecidesLeavesTheRightOneUnread) {
  // `r.n` of a request being sent (r is none) would be a spec error.
  const std::string guarded = "property p(q, r) = always ({ r != none } => { r.n < 2 });";
  EXPECT_EQ(ViolatedAfter(guarded, {Sent("inc"), Answered("inc", 1), Sent("inc"), Answered("inc", 2)}), 4);
  EXPECT_EQ(
      ViolatedAfter("property p(q, r) = always ({ r == none } || { r.n < 9 });", {Sent("inc"), Answered("inc", 1)}),
      -1);
  EXPECT_EQ(ViolatedAfter("property p(q, r) = always ({ r != none } && { r.n < 9 });", {Sent("inc")}), 1);
}

TEST(PropertyMonitor, ResidualsReadTheSameInEveryProcess) {
  // The text keys explore's states (and seeds its random orders): it may
  // name formulas by their place, never by an address or a seeded hash.
  auto spec = WithProperties(
      "property p(q, r) = always ({ q.op == \"inc\" } => eventually within 5 { r != none } && next { r == none });");
  PropertyMonitor m(spec.get(), 0);
  ASSERT_TRUE(m.Step(Sent("inc")).ok());
  // `eventually` reaches to the end: the window holds `{ r != none } && next ...`.
  EXPECT_EQ(m.Describe(), "(@9:49/4 && @9:20)") << m.Describe();
}

TEST(PropertyMonitor, DeepNestingIsBoundedLikeSize) {
  // `F until G` with eventualities on both sides nests a level per event.
  auto spec = WithProperties(
      "property p(q) = (eventually within 100000 { q.op == \"a\" }) until (eventually within 100000 { q.op == \"b\" "
      "});");
  PropertyMonitor m(spec.get(), 0);
  absl::Status s;
  int i = 0;
  for (; i < 5000 && s.ok(); ++i) s = m.Step(Sent("inc"));
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s << " after " << i;
  EXPECT_TRUE(absl::StrContains(s.message(), "nests them more than 500 deep")) << s;
}

TEST(PropertyMonitor, OverlappingWindowsOfOneEventualityAreOneObligation) {
  auto spec = WithProperties("property p(q, r) = always ({ true } => eventually within 1000 { q.op == \"get\" });");
  PropertyMonitor m(spec.get(), 0);
  for (int i = 0; i < 900; ++i) ASSERT_TRUE(m.Step(Sent("inc")).ok());
  EXPECT_FALSE(m.violated());
  EXPECT_LT(m.Describe().size(), 200u) << m.Describe().substr(0, 400);
}

TEST(PropertyMonitor, TooManyObligationsIsAnErrorNamingTheLimit) {
  // Windows of different eventualities do not merge: each event adds one
  // disjunction of 8 obligations.
  std::string any_of;
  for (char c = 'a'; c < 'i'; ++c)
    absl::StrAppend(&any_of, any_of.empty() ? "" : " || ", "eventually within 9000 { q.op == \"", std::string(1, c),
                    "\" }");
  auto spec = WithProperties(absl::StrCat("property p(q) = always (", any_of, ");"));
  PropertyMonitor m(spec.get(), 0);
  absl::Status s;
  int i = 0;
  for (; i < 5000 && s.ok(); ++i) s = m.Step(Sent("inc"));
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s << " after " << i;
  EXPECT_TRUE(absl::StrContains(s.message(), "limit: monitor obligations")) << s;
}

TEST(PropertyMonitor, AConditionThatIsNotABoolIsASpecError) {
  auto spec = WithProperties("property p(q, r) = always { r };");
  PropertyMonitor m(spec.get(), 0);
  absl::Status s = m.Step(Answered("get", 0));
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "a condition must be a bool")) << s;
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

TEST(PropertyChecker, ATraceTheSpecExplainsIsRejectedForAViolatedPropertyWhichItNames) {
  auto spec = WithProperties("property small(q, r) = always { r == none || r.n < 2 };");
  const std::vector<std::string> ok = {
      R"({"label":1,"conn":0,"dir":"sent","msg":{"op":"inc"}})",
      R"({"label":2,"conn":0,"dir":"received","msg":{"n":1}})",
  };
  auto v = check::CheckTrace(spec, Trace(ok), {});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->kind, check::Verdict::Kind::kAccept) << check::FormatVerdict(*v);

  std::vector<std::string> bad = ok;
  bad.push_back(R"({"label":3,"conn":1,"dir":"sent","msg":{"op":"inc"}})");
  bad.push_back(R"({"label":4,"conn":1,"dir":"received","msg":{"n":2}})");
  v = check::CheckTrace(spec, Trace(bad), {});
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->kind, check::Verdict::Kind::kReject) << check::FormatVerdict(*v);
  EXPECT_EQ(v->property, "small");
  EXPECT_FALSE(v->deadline_missed);
  EXPECT_EQ(v->observation.label, 4);
  EXPECT_TRUE(absl::StrContains(v->message, "property 'small' (counter.dspec:9:1) is violated by response label 4"))
      << v->message;
  EXPECT_TRUE(absl::StrContains(check::VerdictToJson(*v, nullptr), R"("property":"small")"));

  // The spec's own rejection of an earlier response comes first.
  std::vector<std::string> wrong = bad;
  wrong[1] = R"({"label":2,"conn":0,"dir":"received","msg":{"n":7}})";
  v = check::CheckTrace(spec, Trace(wrong), {});
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->kind, check::Verdict::Kind::kReject);
  EXPECT_EQ(v->property, "") << check::FormatVerdict(*v);
  EXPECT_EQ(v->observation.label, 2);
}

// Held observations (the tester holds the checker over one poll's
// responses) are judged in trace order: the spec's rejection of an earlier
// response beats a later property violation, and a violation beats the
// spec's rejection of a later response, which the search is not even given.
TEST(PropertyChecker, HeldObservationsAreJudgedInTraceOrder) {
  auto spec = WithProperties("property small(q, r) = always { r == none || r.n < 2 };");
  auto run = [&](const std::vector<std::string>& lines) {
    check::CheckerOptions co;
    co.defer_when_stalled = true;
    auto c = check::Checker::Create(spec, co);
    EXPECT_TRUE(c.ok()) << c.status();
    (*c)->Hold();
    for (const auto& o : Trace(lines)) EXPECT_TRUE((*c)->Observe(o).ok());
    (*c)->Release();
    (*c)->Finish();
    return (*c)->verdict();
  };
  const std::string inc1 = R"({"label":1,"conn":0,"dir":"sent","msg":{"op":"inc"}})";
  const std::string inc2 = R"({"label":3,"conn":1,"dir":"sent","msg":{"op":"inc"}})";
  const std::string get = R"({"label":5,"conn":2,"dir":"sent","msg":{"op":"get"}})";
  check::Verdict v = run({inc1, R"({"label":2,"conn":0,"dir":"received","msg":{"n":5}})", inc2,
                          R"({"label":4,"conn":1,"dir":"received","msg":{"n":2}})"});
  EXPECT_EQ(v.kind, check::Verdict::Kind::kReject);
  EXPECT_EQ(v.property, "") << check::FormatVerdict(v);
  EXPECT_EQ(v.observation.label, 2);
  v = run({inc1, R"({"label":2,"conn":0,"dir":"received","msg":{"n":1}})", inc2,
           R"({"label":4,"conn":1,"dir":"received","msg":{"n":2}})", get,
           R"({"label":6,"conn":2,"dir":"received","msg":{"n":7}})"});
  EXPECT_EQ(v.kind, check::Verdict::Kind::kReject);
  EXPECT_EQ(v.property, "small") << check::FormatVerdict(v);
  EXPECT_EQ(v.observation.label, 4);
}

TEST(PropertyChecker, AConditionThatFailsOnAResponseIsASpecErrorNotAFinding) {
  auto spec = WithProperties("property p(q, r) = always { r == none || r.missing == 1 };");
  auto v = check::CheckTrace(spec,
                             Trace({R"({"label":1,"conn":0,"dir":"sent","msg":{"op":"get"}})",
                                    R"({"label":2,"conn":0,"dir":"received","msg":{"n":0}})"}),
                             {});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->kind, check::Verdict::Kind::kSpecError) << check::FormatVerdict(*v);
  EXPECT_TRUE(absl::StrContains(v->message, "counter.dspec:9:")) << v->message;
}

TEST(PropertyExplore, APropertyTheSpecCanBreakIsFoundWithItsShortestSequence) {
  auto spec = WithProperties("property small(q, r) = always { r == none || r.n < 2 };");
  for (auto order : {explore::ActionOrder::kFirst, explore::ActionOrder::kLast, explore::ActionOrder::kRandom}) {
    explore::ExploreOptions o;
    o.max_depth = 5;
    o.order = order;
    auto r = explore::Explore(spec, o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->violations.size(), 1u) << explore::ExploreResultToJson(*r);
    EXPECT_EQ(r->violations[0].kind, explore::Violation::Kind::kProperty);
    EXPECT_TRUE(absl::StrContains(r->violations[0].message, "property 'small'")) << r->violations[0].message;
    EXPECT_EQ(r->violations[0].requests.size(), 2u) << explore::ExploreResultToJson(*r);
  }
}

TEST(PropertyExplore, TheShippedQueueAndWebdavPropertiesHoldInTheirSpecs) {
  for (const auto& [file, depth] :
       std::vector<std::pair<std::string, int>>{{"queue.dspec", 7}, {"http_webdav.dspec", 3}}) {
    auto spec = lang::LoadSpecFile(std::string(DUALSWARM_SOURCE_DIR) + "/specs/" + file);
    ASSERT_TRUE(spec.ok()) << spec.status();
    ASSERT_FALSE((*spec)->ast.properties.empty()) << file;
    explore::ExploreOptions o;
    o.max_depth = depth;
    auto r = explore::Explore(*spec, o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->complete()) << file << ": " << explore::ExploreResultToJson(*r);
    EXPECT_TRUE(r->violations.empty()) << file << ": " << explore::ExploreResultToJson(*r);
  }
  // The queue's properties are no tautologies: a LIFO variant of the spec
  // that invents an item breaks one.
  auto queue = lang::LoadSpecFile(std::string(DUALSWARM_SOURCE_DIR) + "/specs/queue.dspec");
  ASSERT_TRUE(queue.ok());
  std::string src = (*queue)->source;
  const std::string empty_answer = "send c { value: null, error: none };";
  ASSERT_TRUE(absl::StrContains(src, empty_answer));
  src.replace(src.find(empty_answer), empty_answer.size(), "send c { value: \"ghost\", error: none };");
  auto inventive = lang::LoadSpec("queue_ghost.dspec", src);
  ASSERT_TRUE(inventive.ok()) << inventive.status();
  auto r = explore::Explore(*inventive, {});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->violations.empty());
  EXPECT_TRUE(absl::StrContains(r->violations[0].message, "nothing_from_nothing")) << r->violations[0].message;
  EXPECT_EQ(r->violations[0].requests.size(), 1u);
}

}  // namespace
}  // namespace dualswarm::monitor
