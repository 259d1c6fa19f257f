// `dualswarm explore` (engine/explore): the gen block's requests enumerated
// per state, a planted assert and a deadlock found with their shortest
// request sequences in every action order, and a small kv space explored
// to its depth bound without either.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "engine/explore/explorer.h"
#include "engine/explore/request_alphabet.h"
#include "engine/ir/json.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"

namespace dualswarm::explore {
namespace {

std::shared_ptr<const lang::Spec> Load(const std::string& file, const std::string& src) {
  auto spec = lang::LoadSpec(file, src);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : nullptr;
}

std::string Json(const std::vector<ir::Value>& requests) {
  std::vector<std::string> out;
  for (const auto& r : requests) out.push_back(ir::ToJson(r));
  return absl::StrJoin(out, " ");
}

constexpr const char* kCounter = R"(spec counter;
var n: int = 0;
on recv q from c {
  if q.op == "inc" { n = n + 1; }
  assert n < 3;
  send c { n: n };
}
gen request { oneof { { op: "get" }, { op: "inc" } } }
)";

TEST(Explore, APlantedAssertIsFoundWithItsShortestSequenceInEveryOrder) {
  auto spec = Load("counter.dspec", kCounter);
  ASSERT_NE(spec, nullptr);
  for (ActionOrder order : {ActionOrder::kFirst, ActionOrder::kLast, ActionOrder::kRandom}) {
    ExploreOptions o;
    o.max_depth = 6;
    o.order = order;
    o.seed = 7;
    auto r = Explore(spec, o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->violations.size(), 1u) << ActionOrderName(order);
    const Violation& v = r->violations[0];
    EXPECT_EQ(v.kind, Violation::Kind::kSpecError);
    EXPECT_TRUE(absl::StrContains(v.message, "counter.dspec:5:3: assertion failed")) << v.message;
    EXPECT_EQ(Json(v.requests), R"({"op":"inc"} {"op":"inc"} {"op":"inc"})") << ActionOrderName(order);
    EXPECT_TRUE(r->stopped_by.empty()) << r->stopped_by;
    EXPECT_EQ(r->states, 3u) << "n = 0, 1, 2; 3 fails";
    EXPECT_GE(r->seconds_to_first_violation, 0);
  }
  ExploreOptions shallow;
  shallow.max_depth = 2;
  auto r = Explore(spec, shallow);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->violations.empty()) << "two requests cannot reach n = 3";
  EXPECT_EQ(r->depth_reached, 2);
}

TEST(Explore, ARequestTheSpecHasNoFeasiblePathForIsADeadlock) {
  auto spec = Load("lock.dspec", R"(spec lock;
var locked: bool = false;
on recv q from c {
  if q.op == "lock" {
    assume !locked;
    locked = true;
  } else {
    if q.op == "unlock" { locked = false; } else { assume !locked; }
  }
  send c { ok: true };
}
gen request { oneof { { op: "lock" }, { op: "unlock" }, { op: "get" } } }
)");
  ASSERT_NE(spec, nullptr);
  ExploreOptions o;
  o.max_depth = 5;
  auto r = Explore(spec, o);
  ASSERT_TRUE(r.ok()) << r.status();
  std::set<std::string> found;
  for (const Violation& v : r->violations) {
    EXPECT_EQ(v.kind, Violation::Kind::kDeadlock);
    found.insert(Json(v.requests));
    EXPECT_TRUE(absl::StrContains(v.message, "the spec can answer nothing to it")) << v.message;
  }
  EXPECT_EQ(found, (std::set<std::string>{R"({"op":"lock"} {"op":"lock"})", R"({"op":"lock"} {"op":"get"})"}));
  EXPECT_EQ(r->states, 2u);
  o.stop_at_first = true;
  r = Explore(spec, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->violations.size(), 1u);
  EXPECT_EQ(r->stopped_by, "first violation");
}

std::shared_ptr<const lang::Spec> Kv() {
  auto spec = lang::LoadSpecFile(std::string(DUALSWARM_SOURCE_DIR) + "/specs/kv.dspec");
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : nullptr;
}

TEST(Explore, TheKvGenMakesEveryOperationOnTwoKeysWithTwoWords) {
  auto spec = Kv();
  ASSERT_NE(spec, nullptr);
  lang::Interpreter interp(spec.get());
  AlphabetOptions o;
  auto requests = EnumerateRequests(interp, "request", spec->initial_globals, o);
  ASSERT_TRUE(requests.ok()) << requests.status();
  std::set<std::string> distinct;
  for (const auto& r : *requests) distinct.insert(ir::ToJson(r));
  EXPECT_EQ(distinct.size(), requests->size());
  EXPECT_TRUE(distinct.count(R"({"key":"a","op":"get"})")) << Json(*requests);
  EXPECT_TRUE(distinct.count(R"({"key":"b","op":"put","value":"b"})")) << Json(*requests);
  for (const auto& r : distinct) EXPECT_FALSE(absl::StrContains(r, "\"c\"")) << r;
  o.max_requests = 3;
  auto few = EnumerateRequests(interp, "request", spec->initial_globals, o);
  ASSERT_TRUE(few.ok());
  EXPECT_EQ(few->size(), 3u);
}

TEST(Explore, KvWithTwoKeysAndTwoValuesHasNoViolationToItsDepthBound) {
  auto spec = Kv();
  ASSERT_NE(spec, nullptr);
  ExploreOptions o;
  o.max_depth = 3;
  auto first = Explore(spec, o);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->violations.empty()) << first->violations[0].message;
  EXPECT_TRUE(first->stopped_by.empty()) << first->stopped_by;
  EXPECT_GT(first->states, 20u);
  EXPECT_EQ(first->depth_reached, 3);
  // Another order visits the same states (every state within the bound).
  o.order = ActionOrder::kRandom;
  o.seed = 3;
  auto random = Explore(spec, o);
  ASSERT_TRUE(random.ok());
  EXPECT_EQ(random->states, first->states);
  o.max_states = 5;
  auto bounded = Explore(spec, o);
  ASSERT_TRUE(bounded.ok());
  EXPECT_EQ(bounded->stopped_by, "state bound 5");
  const std::string json = ExploreResultToJson(*bounded);
  EXPECT_TRUE(absl::StrContains(json, R"("complete":false,"stopped_by":"state bound 5")")) << json;
}

// States equal up to the names of their `fresh` values, or the order of
// their constraints, are one state; a constraint about a value the state
// no longer holds is dropped.
TEST(Explore, StatesAreComparedUpToTheNamesOfTheirFreshValues) {
  auto spec = Load("tags.dspec", R"(spec tags;
var tags: map<string, any> = {};
on recv q from c {
  let t = fresh string;
  assume len(t) > 0;
  tags = set(tags, q.k, t);
  send c { t: t };
}
gen request { { k: random_word(1) } }
)");
  ASSERT_NE(spec, nullptr);
  ExploreOptions o;
  o.max_depth = 4;
  auto r = Explore(spec, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->states, 4u) << "{}, {a}, {b}, {a, b}: a tag replaced is a tag";
  EXPECT_TRUE(r->violations.empty());
}

TEST(Explore, SpecsItCannotExploreAreRefusedWithTheReason) {
  auto spec = Load("counter.dspec", kCounter);
  ASSERT_NE(spec, nullptr);
  ExploreOptions o;
  o.gen = "nope";
  auto r = Explore(spec, o);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "no client `gen nope")) << r.status();
}

}  // namespace
}  // namespace dualswarm::explore
