// J-expressions (parsing, strict and loose filling, fallbacks, functions),
// swarm feature masks and the executor state machine without any sockets.
#include "absl/strings/str_cat.h"
#include "engine/harness/executor.h"
#include "engine/ir/jexpr.h"
#include "engine/ir/json.h"
#include "gtest/gtest.h"

namespace dualswarm {
namespace {

using ir::Value;

Value J(const char* text) {
  auto v = ir::ParseJson(text);
  EXPECT_TRUE(v.ok()) << v.status();
  return *v;
}

TEST(JPath, ParsesBothForms) {
  auto a = ir::ParseJPath("@headers@etag");
  auto b = ir::ParseJPath("headers.etag");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(ir::JPathToString(*a), "@headers@etag");
  EXPECT_EQ(ir::JPathToString(*b), "@headers@etag");
  auto c = ir::ParseJPath("@items#2@v");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(ir::JPathToString(*c), "@items#2@v");
  EXPECT_FALSE(ir::ParseJPath("@items#x").ok());
  EXPECT_EQ(ir::JPathToString(*ir::ParseJPath("this")), "this");
}

TEST(JRef, RoundTripsAndRejectsUnknownFunctions) {
  auto r = ir::ParseJRef("4.@headers@etag.weaken");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->label, 4);
  EXPECT_EQ(ir::JRefToString(*r), "4.@headers@etag.weaken");
  EXPECT_FALSE(ir::ParseJRef("4.@headers@etag.explode").ok());
  EXPECT_FALSE(ir::ParseJRef("x.@a.id").ok());
  EXPECT_FALSE(ir::ParseJRef("4.@a").ok());
}

// Found by tests/fuzz/fuzz_jexpr: field names are the SUT's (HTTP header
// names may contain '.' and '#', JSON keys anything), and a reference to
// one used to print as text that parses to other steps, or not at all.
TEST(JRef, FieldNamesWithSeparatorsRoundTrip) {
  for (const std::string name : {"x.trace-id", "a#b", "m@n", "50%", "%41", ""}) {
    ir::JRef r{4, {{false, "headers", 0}, {false, name, 0}}, "id"};
    std::string text = ir::JRefToString(r);
    auto back = ir::ParseJRef(text);
    ASSERT_TRUE(back.ok()) << name << " -> " << text << ": " << back.status();
    ASSERT_EQ(back->path.size(), 2u) << text;
    EXPECT_EQ(back->path[1].field, name) << text;
    std::vector<ir::LabeledMessage> trace = {{4, Value::Map({{"headers", Value::Map({{name, Value::String("v")}})}})}};
    auto filled = ir::Instantiate(ir::MakeHole(r, nullptr), trace);
    ASSERT_TRUE(filled.ok()) << text << ": " << filled.status();
    EXPECT_EQ(*filled, Value::String("v"));
  }
  // The fuzzer's input: a dotted path whose one field holds '@'.
  auto d = ir::ParseJRef("6.2@headercsa@oltion.id");
  ASSERT_TRUE(d.ok());
  auto again = ir::ParseJRef(ir::JRefToString(*d));
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->path.size(), 1u);
  EXPECT_EQ(again->path[0].field, "2@headercsa@oltion");
}

// Found by tests/fuzz/fuzz_jexpr (UBSan): succ of the largest int was a
// signed overflow; a SUT chooses that value.
TEST(JFn, SuccOfTheLargestIntIsAnError) {
  auto r = ir::ApplyJFn("succ", Value::Int(INT64_MAX));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*ir::ApplyJFn("succ", Value::Int(INT64_MAX - 1)), Value::Int(INT64_MAX));
  std::vector<ir::LabeledMessage> trace = {{2, Value::Map({{"v", Value::Int(INT64_MAX)}})}};
  EXPECT_FALSE(ir::Instantiate(ir::MakeHole(*ir::ParseJRef("2.@v.succ"), nullptr), trace).ok());
}

TEST(JFn, Library) {
  EXPECT_EQ(*ir::ApplyJFn("weaken", Value::String("\"t\"")), Value::String("W/\"t\""));
  EXPECT_EQ(*ir::ApplyJFn("weaken", Value::String("W/\"t\"")), Value::String("W/\"t\""));
  EXPECT_EQ(*ir::ApplyJFn("strip_weak", Value::String("W/\"t\"")), Value::String("\"t\""));
  EXPECT_EQ(*ir::ApplyJFn("succ", Value::Int(41)), Value::Int(42));
  EXPECT_FALSE(ir::ApplyJFn("succ", Value::String("x")).ok());
}

std::vector<ir::LabeledMessage> Trace() {
  return {{1, J(R"({"method":"GET","path":"/a","headers":{}})")},
          {2, J(R"({"status":200,"headers":{"etag":"\"one\""}})")},
          {3, J(R"({"method":"GET","path":"/b","headers":{}})")},
          {4, J(R"({"status":200,"headers":{"etag":"\"two\""}})")},
          {6, J(R"({"status":404,"headers":{}})")}};
}

TEST(Instantiate, StrictReference) {
  Value q = Value::Map(
      {{"headers", Value::Map({{"if-match", ir::MakeHole(*ir::ParseJRef("2.@headers@etag.id"), nullptr)}})}});
  auto v = ir::Instantiate(q, Trace());
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(ir::ToJson(*v), R"({"headers":{"if-match":"\"one\""}})");
}

TEST(Instantiate, LooseWhenTheLabelLacksThePath) {
  // Label 6 has no etag in this run: the most recent message that has one is used.
  Value hole = ir::MakeHole(*ir::ParseJRef("6.@headers@etag.weaken"), nullptr);
  auto v = ir::Instantiate(hole, Trace());
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, Value::String("W/\"two\""));
  // A label that does not exist at all behaves the same.
  auto w = ir::Instantiate(ir::MakeHole(*ir::ParseJRef("99.@headers@etag.id"), nullptr), Trace());
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(*w, Value::String("\"two\""));
}

TEST(Instantiate, FallbackOnlyWhenNothingFits) {
  Value fb = Value::String("\"remembered\"");
  Value hole = ir::MakeHole(*ir::ParseJRef("2.@headers@location.id"), &fb);
  auto v = ir::Instantiate(hole, Trace());
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, fb);
  auto none = ir::Instantiate(ir::MakeHole(*ir::ParseJRef("2.@headers@location.id"), nullptr), Trace());
  EXPECT_TRUE(absl::IsNotFound(none.status()));
  EXPECT_TRUE(ir::HasHoles(hole));
  EXPECT_FALSE(ir::HasHoles(fb));
}

TEST(ResponseHeaderIndex, FindsAnEtagAnyDistanceBackInEitherForm) {
  harness::ResponseHeaderIndex index;
  index.Add(2, J(R"({"status":201,"headers":{"etag":"\"old\""}})"));
  for (int i = 0; i < 500; ++i)
    index.Add(4 + 2 * i, J(absl::StrCat(R"({"status":200,"headers":{"etag":"\"t)", i, R"(\""}})").c_str()));
  auto strong = index.ReferenceTo("\"old\"");
  ASSERT_TRUE(strong.has_value());
  EXPECT_EQ(strong->Find("$ref")->as_string(), "2.@headers@etag.id");
  EXPECT_EQ(*strong->Find("$else"), Value::String("\"old\""));
  auto weak = index.ReferenceTo("W/\"old\"");
  ASSERT_TRUE(weak.has_value());
  EXPECT_EQ(weak->Find("$ref")->as_string(), "2.@headers@etag.weaken");
  // The newest response carrying a value is the one referred to.
  index.Add(2000, J(R"({"status":304,"headers":{"etag":"W/\"old\""}})"));
  auto newest = index.ReferenceTo("\"old\"");
  ASSERT_TRUE(newest.has_value());
  EXPECT_EQ(newest->Find("$ref")->as_string(), "2000.@headers@etag.strip_weak");
  EXPECT_FALSE(index.ReferenceTo("\"never-sent\"").has_value());
  EXPECT_FALSE(index.ReferenceTo("*").has_value());
}

TEST(FeatureMask, ParseAndPrint) {
  auto m = harness::FeatureMask::Parse("0:5,2:b0");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_TRUE(m->Disabled(0, 0));
  EXPECT_FALSE(m->Disabled(0, 1));
  EXPECT_TRUE(m->Disabled(0, 2));
  EXPECT_TRUE(m->Disabled(2, 4));
  EXPECT_FALSE(m->Disabled(1, 0));
  EXPECT_EQ(m->ToString(), "0:5,2:b0");
  EXPECT_FALSE(harness::FeatureMask::Parse("zz").ok());
}

const char kSpec[] = R"(
spec echo;
use json;
var seen = 0;
on recv q from c {
  seen = seen + 1;
  send c { n: seen, k: q.k };
}
gen request {
  oneof { { k: "a" }, { k: "b" }, { k: "c" } }
}
)";

TEST(Executor, MaskNeverDisablesEverySiteAlternative) {
  auto spec = *lang::LoadSpec("echo.dspec", kSpec);
  harness::ExecutorOptions o;
  o.connections = 1;
  o.max_in_flight = 1;
  o.steps = 30;
  o.mask.disabled = {0x7};  // all three alternatives of site 0
  auto ex = harness::Executor::Create(spec, o);
  ASSERT_TRUE(ex.ok()) << ex.status();
  int n = 0;
  while (!(*ex)->finished()) {
    auto r = (*ex)->Next();
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(r->has_value());
    ASSERT_TRUE((*ex)->Sent(**r, n).ok());
    Value resp = Value::Map({{"n", Value::Int(n + 1)}, {"k", *(*r)->msg.Find("k")}});
    ASSERT_TRUE((*ex)->Received(0, resp, n).ok());
    ++n;
  }
  EXPECT_EQ(n, 30);
  EXPECT_EQ((*ex)->verdict().kind, check::Verdict::Kind::kAccept);
}

TEST(Executor, MaskSwitchesAlternativesOff) {
  auto spec = *lang::LoadSpec("echo.dspec", kSpec);
  harness::ExecutorOptions o;
  o.connections = 2;
  o.max_in_flight = 2;
  o.steps = 20;
  o.mask.disabled = {0x3};  // only { k: "c" } is left
  auto ex = harness::Executor::Create(spec, o);
  ASSERT_TRUE(ex.ok());
  for (int i = 0; i < 2; ++i) {
    auto r = (*ex)->Next();
    ASSERT_TRUE(r.ok() && r->has_value());
    EXPECT_EQ(*(*r)->msg.Find("k"), Value::String("c"));
    ASSERT_TRUE((*ex)->Sent(**r, i).ok());
  }
  // The in-flight limit holds further requests back.
  auto r = (*ex)->Next();
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
  EXPECT_EQ((*ex)->in_flight(), 2u);
}

// Requests go only to available connections below the per-connection
// limit (a killed node's connections; an adapter that carries one call
// at a time); with none left, Next waits instead of drawing a request.
TEST(Executor, RequestsGoOnlyWhereTheyCanBeCarried) {
  auto spec = *lang::LoadSpec("echo.dspec", kSpec);
  harness::ExecutorOptions o;
  o.connections = 3;
  o.max_in_flight = 3;
  o.max_in_flight_per_connection = 1;
  o.steps = 100;
  auto ex = harness::Executor::Create(spec, o);
  ASSERT_TRUE(ex.ok()) << ex.status();
  (*ex)->SetConnectionAvailable(1, false);
  std::vector<int> used;
  for (int i = 0; i < 3; ++i) {
    auto r = (*ex)->Next();
    ASSERT_TRUE(r.ok()) << r.status();
    if (!r->has_value()) break;
    used.push_back((*r)->conn);
    ASSERT_TRUE((*ex)->Sent(**r, i).ok());
  }
  // Connections 0 and 2 carry one request each; 1 is down.
  ASSERT_EQ(used.size(), 2u);
  EXPECT_NE(used[0], used[1]);
  for (int c : used) EXPECT_NE(c, 1);
  (*ex)->SetConnectionAvailable(1, true);
  auto r = (*ex)->Next();
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->conn, 1);
}

// A request whose data contains maps that look like holes or quotes (a
// JSON-schema "$ref") is sent as written: only observed() makes holes.
TEST(Executor, DataThatLooksLikeAHoleIsSentLiterally) {
  auto spec = lang::LoadSpec("schema.dspec", R"(spec schema;
use json;
on recv q from c {
  send c { ok: true };
}
gen request {
  { op: "put", doc: { "$ref": "#/definitions/a" }, also: [{ "$quote": 1 }] }
}
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  harness::ExecutorOptions o;
  o.connections = 1;
  o.max_in_flight = 1;
  o.steps = 1;
  auto ex = harness::Executor::Create(*spec, o);
  ASSERT_TRUE(ex.ok()) << ex.status();
  auto r = (*ex)->Next();
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(ir::ToJson((*r)->msg), R"({"also":[{"$quote":1}],"doc":{"$ref":"#/definitions/a"},"op":"put"})");
  EXPECT_FALSE(ir::HasHoles((*r)->jexpr));
  // The input replays to the same request.
  auto again = ir::Instantiate((*r)->jexpr, {});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, (*r)->msg);
}

TEST(Executor, WrongResponseIsRejectedAndOverdueIsReported) {
  auto spec = *lang::LoadSpec("echo.dspec", kSpec);
  harness::ExecutorOptions o;
  o.connections = 1;
  o.max_in_flight = 1;
  o.steps = 5;
  auto ex = harness::Executor::Create(spec, o);
  ASSERT_TRUE(ex.ok());
  auto r = (*ex)->Next();
  ASSERT_TRUE(r.ok() && r->has_value());
  ASSERT_TRUE((*ex)->Sent(**r, 0).ok());
  EXPECT_FALSE((*ex)->Overdue(1'000, 5'000).has_value());
  EXPECT_EQ((*ex)->Overdue(10'000, 5'000).value_or(-1), 1);
  // A response where nothing is outstanding is an error, not a crash.
  EXPECT_FALSE((*ex)->Received(3, J("{}"), 1).ok());
  ASSERT_TRUE((*ex)->Received(0, J(R"({"n":7})"), 2).ok());
  EXPECT_EQ((*ex)->verdict().kind, check::Verdict::Kind::kReject);
  EXPECT_TRUE((*ex)->finished());
}

TEST(Executor, ReplaysAGivenInputExactly) {
  auto spec = *lang::LoadSpec("echo.dspec", kSpec);
  harness::ExecutorOptions o;
  o.connections = 2;
  o.max_in_flight = 1;
  o.replay = std::vector<harness::InputItem>{{1, J(R"({"k":"x"})")}, {0, J(R"({"k":"y"})")}};
  auto ex = harness::Executor::Create(spec, o);
  ASSERT_TRUE(ex.ok());
  for (int i = 0; i < 2; ++i) {
    auto r = (*ex)->Next();
    ASSERT_TRUE(r.ok() && r->has_value());
    EXPECT_EQ((*r)->conn, i == 0 ? 1 : 0);
    ASSERT_TRUE((*ex)->Sent(**r, i).ok());
    Value resp = Value::Map({{"n", Value::Int(i + 1)}, {"k", *(*r)->msg.Find("k")}});
    ASSERT_TRUE((*ex)->Received((*r)->conn, resp, i).ok());
  }
  EXPECT_TRUE((*ex)->finished());
  EXPECT_EQ((*ex)->verdict().kind, check::Verdict::Kind::kAccept);
  EXPECT_EQ((*ex)->inputs().size(), 2u);
  o.replay = std::vector<harness::InputItem>{{5, J("{}")}};
  EXPECT_FALSE(harness::Executor::Create(spec, o).ok());
}

}  // namespace
}  // namespace dualswarm
