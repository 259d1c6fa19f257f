// The executor's origin side (engine/harness/executor.h): for an
// intermediary's spec it records the requests the SUT sends the origin,
// answers each with the origin gen (oldest first per connection), and
// feeds both sides to the checker; for any other spec it refuses them.
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "engine/check/observation.h"
#include "engine/harness/executor.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"
#include "tests/common/shipped_spec.h"

namespace dualswarm::harness {
namespace {

using ir::Value;

Value Request(const std::string& id) {
  return Value::Map({{"op", Value::String("get")}, {"id", Value::String(id)}, {"origin", Value::String("origin-0")}});
}

// Sends two client requests on connection 0, ids "a" then "b".
void SendRequestsAAndB(Executor& e) {
  for (const char* id : {"a", "b"}) {
    auto next = e.Next();
    ASSERT_TRUE(next.ok() && next->has_value()) << next.status();
    PlannedRequest r = **next;
    r.msg = Value::Map({{"op", Value::String("get")}, {"id", Value::String(id)}});
    ASSERT_TRUE(e.Sent(r, 1).ok());
  }
}

TEST(ExecutorOrigin, AnswersEachOriginRequestInOrderAndChecksBothSides) {
  ExecutorOptions o;
  o.connections = 1;
  o.origin_hold_probability = 0;  // every answer due at once
  auto ex = Executor::Create(Shipped("examples/relay.dspec"), o);
  ASSERT_TRUE(ex.ok()) << ex.status();
  Executor& e = **ex;
  ASSERT_TRUE(e.plays_origin());
  // Two client requests, forwarded in reverse on one origin connection.
  SendRequestsAAndB(e);
  ASSERT_TRUE(e.OriginRequest(0, Request("b"), 2).ok());
  ASSERT_TRUE(e.OriginRequest(0, Request("a"), 3).ok());
  std::optional<OriginAnswer> first = e.NextOriginAnswer(3);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->label, 2);  // the origin side's: request 1's answer
  EXPECT_NE(first->msg.Find("v"), nullptr) << first->msg.ToString();
  ASSERT_TRUE(e.OriginAnswered(*first, 4).ok());
  std::optional<OriginAnswer> second = e.NextOriginAnswer(4);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->label, 4);
  // Out of order is refused: the first was sent already.
  EXPECT_EQ(e.OriginAnswered(*first, 5).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(e.OriginAnswered(*second, 5).ok());
  EXPECT_FALSE(e.NextOriginAnswer(5).has_value());
  // The client gets a's answer first (its request came first).
  ASSERT_TRUE(e.Received(0, second->msg, 6).ok());
  ASSERT_TRUE(e.Received(0, first->msg, 7).ok());
  EXPECT_FALSE(e.decided()) << check::FormatVerdict(e.verdict());
  ASSERT_TRUE(e.OriginClosed(0, 8).ok());
  ASSERT_TRUE(e.OriginClosed(5, 8).ok());  // never carried a request: not recorded
  size_t origin_lines = 0;
  for (const check::Observation& obs : e.observations()) origin_lines += obs.side == check::Side::kOrigin;
  EXPECT_EQ(origin_lines, 5u);  // two requests, two answers, one close
  e.FinishChecking();
  EXPECT_EQ(e.verdict().kind, check::Verdict::Kind::kAccept) << check::FormatVerdict(e.verdict());
}

// A proxy that pipelines two requests on one origin connection, which then
// ends before either is answered (the tester aborted the first, or the
// proxy closed it): both answers that were to go out are recorded as
// aborts, so the proxy's 502 for each client is explained.
TEST(ExecutorOrigin, AnswersThatCannotGoOutAreRecordedAsAborts) {
  ExecutorOptions o;
  o.connections = 1;
  o.origin_hold_probability = 0;
  o.checker.connection_nodes.origins = 1;  // the gen picks its target's origin from origins()
  auto ex = Executor::Create(Shipped("http_proxy.dspec"), o);
  ASSERT_TRUE(ex.ok()) << ex.status();
  Executor& e = **ex;
  auto request = [](const std::string& id) {
    return Value::Map({{"method", Value::String("GET")},
                       {"path", Value::String("http://origin-0/" + id)},
                       {"headers", Value::Map({{"x-ds-id", Value::String(id)}, {"x-e2e-a", Value::String("e")}})},
                       {"body", Value::String("")}});
  };
  auto forwarded = [](const std::string& id) {
    return Value::Map({{"method", Value::String("GET")},
                       {"path", Value::String("/" + id)},
                       {"origin", Value::String("origin-0")},
                       {"headers", Value::Map({{"host", Value::String("origin-0")},
                                               {"via", Value::String("1.1 p")},
                                               {"x-ds-id", Value::String(id)},
                                               {"x-e2e-a", Value::String("e")}})},
                       {"body", Value::String("")}});
  };
  for (const char* id : {"a", "b"}) {
    auto next = e.Next();
    ASSERT_TRUE(next.ok() && next->has_value()) << next.status();
    PlannedRequest r = **next;
    r.msg = request(id);
    ASSERT_TRUE(e.Sent(r, 1).ok());
  }
  ASSERT_TRUE(e.OriginRequest(0, forwarded("a"), 2).ok());
  ASSERT_TRUE(e.OriginRequest(0, forwarded("b"), 3).ok());
  ASSERT_TRUE(e.AbortOriginAnswers(0, 4).ok());
  EXPECT_FALSE(e.NextOriginAnswer(5).has_value());
  ASSERT_TRUE(e.OriginClosed(0, 5).ok());
  size_t aborts = 0;
  for (const check::Observation& obs : e.observations())
    aborts += obs.side == check::Side::kOrigin && obs.kind == check::Observation::Kind::kSent &&
              obs.msg.Find("abort") != nullptr;
  EXPECT_EQ(aborts, 2u);
  const Value bad_gateway = Value::Map({{"status", Value::Int(502)},
                                        {"headers", Value::Map({{"via", Value::String("1.1 p")}})},
                                        {"body", Value::String("bad gateway")}});
  ASSERT_TRUE(e.Received(0, bad_gateway, 6).ok());
  ASSERT_TRUE(e.Received(0, bad_gateway, 7).ok());
  e.FinishChecking();
  EXPECT_EQ(e.verdict().kind, check::Verdict::Kind::kAccept) << check::FormatVerdict(e.verdict());
}

TEST(ExecutorOrigin, ASwappedRelayIsRejected) {
  ExecutorOptions o;
  o.connections = 1;
  o.origin_hold_probability = 0;
  auto ex = Executor::Create(Shipped("examples/relay.dspec"), o);
  ASSERT_TRUE(ex.ok()) << ex.status();
  Executor& e = **ex;
  SendRequestsAAndB(e);
  ASSERT_TRUE(e.OriginRequest(0, Request("a"), 2).ok());
  ASSERT_TRUE(e.OriginRequest(0, Request("b"), 3).ok());
  std::optional<OriginAnswer> a = e.NextOriginAnswer(3);
  ASSERT_TRUE(a && e.OriginAnswered(*a, 4).ok());
  std::optional<OriginAnswer> b = e.NextOriginAnswer(4);
  ASSERT_TRUE(b && e.OriginAnswered(*b, 5).ok());
  ASSERT_NE(a->msg, b->msg) << "seed 1's origin gen draws two different answers";
  ASSERT_TRUE(e.Received(0, b->msg, 6).ok());  // b's answer for a
  e.FinishChecking();
  EXPECT_EQ(e.verdict().kind, check::Verdict::Kind::kReject);
}

TEST(ExecutorOrigin, TheOriginGenMustExistAndBelongToAnIntermediary) {
  auto no_gen = lang::LoadSpec("r.dspec", R"(spec r;
on recv q from c { send origin({c: c}) q; }
on recv r from t: origin { send t.c r; }
gen request { { op: "get" } }
)");
  ASSERT_TRUE(no_gen.ok()) << no_gen.status();
  auto ex = Executor::Create(*no_gen, ExecutorOptions{});
  EXPECT_EQ(ex.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(ex.status().message(), "gen NAME(REQ): origin")) << ex.status();
  ExecutorOptions named;
  named.origin_gen = "answer";
  ex = Executor::Create(Shipped("kv.dspec"), named);
  EXPECT_EQ(ex.status().code(), absl::StatusCode::kInvalidArgument);
  auto kv = Executor::Create(Shipped("kv.dspec"), ExecutorOptions{});
  ASSERT_TRUE(kv.ok());
  EXPECT_FALSE((*kv)->plays_origin());
  EXPECT_EQ((*kv)->OriginRequest(0, Request("a"), 1).code(), absl::StatusCode::kFailedPrecondition);
}

// The first origin answer an executor for `spec` gives (one client request
// on connection 0, forwarded on origin connection 0).
Value FirstOriginAnswer(std::shared_ptr<const lang::Spec> spec, const std::string& origin_gen) {
  ExecutorOptions o;
  o.connections = 1;
  o.origin_hold_probability = 0;
  o.origin_gen = origin_gen;
  auto ex = Executor::Create(std::move(spec), o);
  EXPECT_TRUE(ex.ok()) << ex.status();
  if (!ex.ok()) return Value();
  SendRequestsAAndB(**ex);
  EXPECT_TRUE((*ex)->OriginRequest(0, Request("a"), 2).ok());
  std::optional<OriginAnswer> a = (*ex)->NextOriginAnswer(2);
  EXPECT_TRUE(a.has_value());
  return a.has_value() ? a->msg : Value();
}

// With several origin gens the run uses the one --origin-gen names, else
// the one named `answer`, wherever it is; with several and none named so
// it must be told.
TEST(ExecutorOrigin, WithSeveralOriginGensTheOneNamedAnswerIsTheDefault) {
  std::string relay = ShippedSource("examples/relay.dspec");
  const size_t at = relay.find("gen answer(");
  ASSERT_NE(at, std::string::npos);
  relay.insert(at, "gen other(q): origin { { v: \"x\" } }\n");  // before `answer`
  auto with_answer = lang::LoadSpec("with_answer.dspec", relay);
  ASSERT_TRUE(with_answer.ok()) << with_answer.status();
  const Value x = Value::Map({{"v", Value::String("x")}});
  EXPECT_NE(FirstOriginAnswer(*with_answer, ""), x) << "`answer` (random words) answers, not `other`";
  EXPECT_EQ(FirstOriginAnswer(*with_answer, "other"), x);

  relay.replace(relay.find("gen answer("), std::string("gen answer(").size(), "gen reply(");
  auto two = lang::LoadSpec("two.dspec", relay);
  ASSERT_TRUE(two.ok()) << two.status();
  ExecutorOptions o;
  auto ex = Executor::Create(*two, o);
  ASSERT_FALSE(ex.ok());
  EXPECT_TRUE(absl::StrContains(ex.status().message(),
                                "it has 2 (with several, one is named `answer` or --origin-gen names one)"))
      << ex.status();
  o.origin_gen = "other";
  EXPECT_TRUE(Executor::Create(*two, o).ok());
}

}  // namespace
}  // namespace dualswarm::harness
