// Origin answers kept as test input (engine/harness/origin_answers.h): how
// requests are named across runs, how a rerun finds the answer for each,
// what a shrunk counterexample keeps, the counterexample format, and the
// executor answering a rerun as the run it replays did.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/check/observation.h"
#include "engine/harness/counterexample.h"
#include "engine/harness/executor.h"
#include "engine/harness/origin_answers.h"
#include "engine/ir/jexpr.h"
#include "gtest/gtest.h"
#include "tests/common/shipped_spec.h"

namespace dualswarm::harness {
namespace {

using ir::Value;

Value Http(const std::string& method, const std::string& path, bool conditional) {
  Value headers = Value::Map({{"x-ds-id", Value::String("abc")}});
  if (conditional) headers = headers.Set("if-none-match", Value::String("\"e\""));
  return Value::Map({{"method", Value::String(method)}, {"path", Value::String(path)}, {"headers", headers}});
}

Value Answer(const std::string& v) { return Value::Map({{"v", Value::String(v)}}); }

TEST(OriginAnswers, RequestsAreNamedByMethodPathAndConditionOrByOp) {
  EXPECT_EQ(OriginRequestKey(Http("GET", "/a", false)), "GET /a");
  EXPECT_EQ(OriginRequestKey(Http("GET", "/a", true)), "GET /a conditional");
  EXPECT_EQ(OriginRequestKey(Value::Map({{"op", Value::String("get")}, {"id", Value::String("x")}})), "op get");
  EXPECT_EQ(OriginRequestKey(Value::Map({{"id", Value::String("x")}})), "");
  EXPECT_EQ(OriginRequestKey(Value::String("GET /a")), "");
}

TEST(OriginAnswers, ARerunGetsTheAnswerKeptForItsOccurrenceElseTheLastBefore) {
  OriginAnswerBook book({{"GET /a", 0, Answer("a0")}, {"GET /a", 2, Answer("a2")}, {"GET /b", 0, Answer("b0")}});
  EXPECT_EQ(book.Next("GET /a"), Answer("a0"));
  EXPECT_EQ(book.Next("GET /a"), Answer("a0"));  // occurrence 1 was not kept: the last before it
  EXPECT_EQ(book.Next("GET /a"), Answer("a2"));
  EXPECT_EQ(book.Next("GET /a"), Answer("a2"));  // past the last kept
  EXPECT_EQ(book.Seen("GET /a"), 4);
  EXPECT_EQ(book.Next("GET /c"), std::nullopt);  // never kept: the origin gen answers
  EXPECT_EQ(book.Next("GET /b"), Answer("b0"));
  EXPECT_EQ(book.Seen("GET /z"), 0);
}

// A 304 repeats the entity-tag its request asked about: kept, it refers to
// the request, so a rerun whose cache asks about another tag gets that one.
TEST(OriginAnswers, AKeptAnswerRepeatsWhatItsOwnRequestCarries) {
  const Value request = Http("GET", "/a", true);  // if-none-match: "e"
  const Value lookalike = Value::Map({{"$ref", Value::String("#/a")}});
  const Value answer =
      Value::Map({{"status", Value::Int(304)},
                  {"headers", Value::Map({{"etag", Value::String("\"e\"")}, {"x-e2e-b", Value::String("qq")}})},
                  {"body", lookalike}});
  const Value kept = KeptAnswer(answer, request);
  EXPECT_TRUE(ir::IsHole(*kept.Find("headers")->Find("etag"))) << kept.ToString();
  EXPECT_EQ(*kept.Find("headers")->Find("x-e2e-b"), Value::String("qq"));  // too short to be a reference
  auto same = AnswerFromKept(kept, request);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(*same, answer);  // the lookalike body travels quoted and comes back as it was
  const Value other = request.Set("headers", request.Find("headers")->Set("if-none-match", Value::String("\"f\"")));
  auto rerun = AnswerFromKept(kept, other);
  ASSERT_TRUE(rerun.ok()) << rerun.status();
  EXPECT_EQ(*rerun->Find("headers")->Find("etag"), Value::String("\"f\""));
  auto unconditional = AnswerFromKept(kept, Http("GET", "/a", false));
  ASSERT_TRUE(unconditional.ok()) << unconditional.status();
  EXPECT_EQ(*unconditional, answer);  // no such field in the request: the kept value
}

TEST(OriginAnswers, AShrunkRunKeepsTheAnswersItsOriginRequestsReach) {
  const std::vector<OriginAnswerItem> items = {
      {"GET /a", 0, Answer("a0")}, {"GET /a", 1, Answer("a1")}, {"GET /b", 0, Answer("b0")}};
  check::Observation request;
  request.kind = check::Observation::Kind::kReceived;
  request.side = check::Side::kOrigin;
  request.msg = Http("GET", "/a", false);
  check::Observation client = request;
  client.side = check::Side::kClient;
  client.msg = Http("GET", "/b", false);  // a client's request is no origin request
  const std::vector<OriginAnswerItem> used = OriginAnswersUsedBy(items, {request, client});
  ASSERT_EQ(used.size(), 1u);
  EXPECT_EQ(used[0], items[0]);
}

TEST(OriginAnswers, ACounterexampleCarriesThemAndRefusesMalformedOnes) {
  Counterexample cx;
  cx.spec_name = "relay";
  cx.connections = 1;
  cx.origins = 1;
  cx.origin_answers = {{"op get", 0, Answer("w")}, {"op get", 1, Value::Map({{"abort", Value::String("close")}})}};
  const std::string json = CounterexampleToJson(cx);
  auto back = CounterexampleFromJson(json);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << json;
  EXPECT_EQ(back->origin_answers, cx.origin_answers);
  const std::string bad = absl::StrCat(json.substr(0, json.size() - 1), ",\"origin_answers\":[{\"key\":1}]}");
  auto refused = CounterexampleFromJson(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "origin answer 0")) << refused.status();

  // Answers attached to an input item travel with it.
  InputItem item;
  item.jexpr = Value::Map({{"op", Value::String("get")}, {"id", Value::String("abcdef")}});
  item.origin_answers = {{"op get", Answer("A"), 3}, {"op put", Answer("P")}};
  InputItem bare;
  bare.jexpr = item.jexpr;
  cx.input = {item, bare};
  auto with_items = CounterexampleFromJson(CounterexampleToJson(cx));
  ASSERT_TRUE(with_items.ok()) << with_items.status();
  ASSERT_EQ(with_items->input.size(), 2u);
  EXPECT_EQ(with_items->input[0].origin_answers, item.origin_answers);
  EXPECT_TRUE(with_items->input[1].origin_answers.empty());
  cx.repeat = 3;  // rounds would copy the attached answers
  auto repeated = CounterexampleFromJson(CounterexampleToJson(cx));
  ASSERT_FALSE(repeated.ok());
  EXPECT_TRUE(absl::StrContains(repeated.status().message(), "cannot be repeated")) << repeated.status();
  cx.repeat = 1;
  cx.input[0].origin_answers = {{"op get", Value::String("not an object")}};
  auto refused_item = CounterexampleFromJson(CounterexampleToJson(cx));
  ASSERT_FALSE(refused_item.ok());
  EXPECT_TRUE(absl::StrContains(refused_item.status().message(), "input item 0")) << refused_item.status();
}

// Sends planned request `r` through the relay's executor, lets the SUT
// forward it on origin connection 0, and has the origin answer at once;
// the answer, or nullopt (a failed expectation) when none came.
std::optional<Value> Forward(Executor& e, const PlannedRequest& r) {
  EXPECT_TRUE(e.Sent(r, 1).ok());
  EXPECT_TRUE(e.OriginRequest(0, r.msg.Set("origin", Value::String("origin-0")), 2).ok());
  std::optional<OriginAnswer> a = e.NextOriginAnswer(2);
  EXPECT_TRUE(a.has_value());
  if (!a.has_value()) return std::nullopt;
  EXPECT_TRUE(e.OriginAnswered(*a, 3).ok());
  return a->msg;
}

// Runs the relay with `seed`: two client requests forwarded on one origin
// connection; returns the answers given (kept from `kept`, or generated).
std::vector<Value> RelayAnswers(uint64_t seed, const std::vector<OriginAnswerItem>& kept,
                                std::vector<OriginAnswerItem>* given) {
  ExecutorOptions o;
  o.connections = 1;
  o.seed = seed;
  o.origin_hold_probability = 0;
  o.origin_answers = kept;
  auto ex = Executor::Create(Shipped("examples/relay.dspec"), o);
  EXPECT_TRUE(ex.ok()) << ex.status();
  if (!ex.ok()) return {};
  Executor& e = **ex;
  std::vector<Value> answers;
  for (const char* id : {"a", "b"}) {
    auto next = e.Next();
    EXPECT_TRUE(next.ok() && next->has_value()) << next.status();
    if (!next.ok() || !next->has_value()) return {};
    PlannedRequest r = **next;
    r.msg = Value::Map({{"op", Value::String("get")}, {"id", Value::String(id)}});
    std::optional<Value> a = Forward(e, r);
    if (!a.has_value()) return {};
    answers.push_back(*a);
  }
  *given = e.origin_answers();
  return answers;
}

TEST(OriginAnswers, TheExecutorAnswersARerunAsTheRunItReplaysDid) {
  std::vector<OriginAnswerItem> first, second, fresh;
  const std::vector<Value> original = RelayAnswers(1, {}, &first);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].key, "op get");
  EXPECT_EQ(first[1].nth, 1);
  // Another seed answers otherwise unless the answers are kept.
  std::vector<Value> other;
  for (uint64_t seed = 2; seed < 20 && (other.empty() || other == original); ++seed)
    other = RelayAnswers(seed, {}, &fresh);
  ASSERT_NE(other, original) << "the origin gen gave the same answers for 18 seeds";
  EXPECT_EQ(RelayAnswers(7, first, &second), original);
  EXPECT_EQ(second, first);
}

check::Observation Seen(check::Side side, check::Observation::Kind kind, int64_t label, int64_t conn, Value msg) {
  check::Observation o;
  o.side = side;
  o.kind = kind;
  o.label = label;
  o.conn = conn;
  o.msg = std::move(msg);
  return o;
}

// Which client request made the SUT ask the origin: one in flight then,
// the same method and path before the same path before anything.
TEST(OriginAnswers, AnOriginRequestIsAttributedToTheClientRequestInFlightForItsPath) {
  using K = check::Observation::Kind;
  const auto client = check::Side::kClient, origin = check::Side::kOrigin;
  const std::vector<check::Observation> trace = {
      Seen(client, K::kSent, 1, 0, Http("GET", "/a", false)),
      Seen(client, K::kSent, 3, 1, Http("HEAD", "http://127.0.0.1:1/b", false)),  // absolute form
      Seen(origin, K::kReceived, 1, 0, Http("GET", "/b", false)),                 // the HEAD's: same path
      Seen(origin, K::kReceived, 3, 0, Http("GET", "/a", true)),                  // the GET's
      Seen(client, K::kReceived, 2, 0, Value::Map({})),                           // the GET answered
      Seen(origin, K::kReceived, 5, 0, Http("GET", "/a", false)),                 // only the HEAD in flight
      Seen(client, K::kTimeout, 3, 1, Value()),
      Seen(origin, K::kReceived, 7, 0, Http("GET", "/a", false)),  // nothing in flight
      Seen(client, K::kSent, 5, 0, Http("GET", "/c", false)),
      Seen(client, K::kSent, 7, 1, Http("GET", "/c", false)),
      Seen(origin, K::kReceived, 9, 0, Http("GET", "/c", false)),   // the older one
      Seen(origin, K::kReceived, 11, 0, Http("GET", "/c", false)),  // the one not named yet
      Seen(client, K::kClosed, 0, 0, Value()),
      Seen(origin, K::kReceived, 13, 0, Http("GET", "/c", false)),  // the closed connection's is gone
  };
  EXPECT_EQ(AttributeOriginRequests(trace), (std::vector<int64_t>{3, 1, 3, -1, 5, 7, 7}));
  // A path that only ends like the origin's is another path.
  EXPECT_EQ(AttributeOriginRequests({Seen(client, K::kSent, 1, 0, Http("HEAD", "/x/b", false)),
                                     Seen(client, K::kSent, 3, 1, Http("HEAD", "http://h/b", false)),
                                     Seen(origin, K::kReceived, 1, 0, Http("GET", "/b", false))}),
            (std::vector<int64_t>{3}));
  const std::vector<OriginAnswerItem> given = {{"GET /b", 0, Answer("b")},  {"GET /a conditional", 0, Answer("a")},
                                               {"GET /a", 0, Answer("x")},  {"GET /a", 1, Answer("y")},
                                               {"GET /c", 0, Answer("c0")}, {"GET /c", 1, Answer("c1")},
                                               {"GET /c", 2, Answer("c2")}};
  // The answers went out in another order than the requests came (some
  // held back; some never sent): that order goes with them.
  std::vector<check::Observation> answered = trace;
  for (const int64_t request : {3, 1, 11, 9}) answered.push_back(Seen(origin, K::kSent, request + 1, 0, Answer("-")));
  const auto by_request = AnswersByClientRequest(given, answered, 3);
  ASSERT_EQ(by_request.size(), 3u);
  EXPECT_EQ(by_request[0], (std::vector<AttachedAnswer>{{"GET /a conditional", Answer("a"), 0}}));
  EXPECT_EQ(by_request[1], (std::vector<AttachedAnswer>{{"GET /b", Answer("b"), 1}, {"GET /a", Answer("x"), -1}}));
  EXPECT_EQ(by_request[2], (std::vector<AttachedAnswer>{{"GET /c", Answer("c0"), 3}}));
}

Value WithId(Value request, const std::string& id) {
  return request.Set("headers", request.Find("headers")->Set("x-ds-id", Value::String(id)));
}

// A string of 6 or more bytes that one client request in flight carries
// and the origin request carries at the same place names the request the
// intermediary forwarded, whatever the order or the path says.
TEST(OriginAnswers, AnIdTheIntermediaryForwardedNamesItsClientRequest) {
  const Value a = WithId(Http("GET", "/a", false), "aaaaaaaa");
  const Value b = WithId(Http("GET", "/a", false), "bbbbbbbb");
  const Value origin = WithId(Http("GET", "/a", true), "bbbbbbbb").Set("origin", Value::String("origin-0"));
  EXPECT_EQ(ForwardedFrom(origin, {&a, &b}), 1u);
  EXPECT_EQ(ForwardedFrom(origin, {&b, &a}), 0u);
  EXPECT_EQ(ForwardedFrom(Http("GET", "/a", false), {&a, &b}), std::nullopt);  // carries neither
  EXPECT_EQ(ForwardedFrom(origin, {&b, &b}), std::nullopt);                    // two carry it: names none
  const Value short_id = WithId(Http("GET", "/a", false), "bbbbb");
  EXPECT_EQ(ForwardedFrom(WithId(Http("GET", "/a", false), "bbbbb"), {&a, &short_id}), std::nullopt);
  // A Host field is the proxy's to set, and names no request.
  const Value host = Http("GET", "/a", false).Set("headers", Value::Map({{"host", Value::String("127.0.0.1:80")}}));
  EXPECT_EQ(ForwardedFrom(host, {&a, &host}), std::nullopt);
  // The same string elsewhere is no forwarded field.
  const Value body = Http("GET", "/a", false).Set("body", Value::String("bbbbbbbb"));
  EXPECT_EQ(ForwardedFrom(body, {&a, &b}), std::nullopt);
  // What both requests carry ("DELETE", the path) names neither; the id does.
  auto del = [](const std::string& id) { return WithId(Http("DELETE", "/abcdefgh", false), id); };
  const Value d1 = del("11111111"), d2 = del("22222222");
  EXPECT_EQ(ForwardedFrom(del("22222222"), {&d1, &d2}), 1u);
  // Two strings that name two requests: none.
  const Value both = WithId(Http("GET", "/a", false), "aaaaaaaa").Set("body", Value::String("bbbbbbbbbb"));
  const Value b_body = Http("GET", "/a", false).Set("body", Value::String("bbbbbbbbbb"));
  EXPECT_EQ(ForwardedFrom(both, {&a, &b_body}), std::nullopt);
  // JSON messages: a field of the same name.
  const Value qa = Value::Map({{"op", Value::String("get")}, {"id", Value::String("abcdef")}});
  const Value qb = Value::Map({{"op", Value::String("get")}, {"id", Value::String("ghijkl")}});
  EXPECT_EQ(ForwardedFrom(qb, {&qa, &qb}), 1u);

  // Attributed by it, before the oldest request with the same method and path.
  using K = check::Observation::Kind;
  const auto client = check::Side::kClient, origin_side = check::Side::kOrigin;
  EXPECT_EQ(AttributeOriginRequests({Seen(client, K::kSent, 1, 0, a), Seen(client, K::kSent, 3, 1, b),
                                     Seen(origin_side, K::kReceived, 1, 0, origin),
                                     Seen(origin_side, K::kReceived, 3, 0, Http("GET", "/a", false))}),
            (std::vector<int64_t>{3, 1}));
}

// Replays `input` through the relay (one connection, one request at a time);
// returns the origin's answers.
std::vector<Value> ReplayRelay(const std::vector<InputItem>& input, const std::vector<OriginAnswerItem>& kept) {
  ExecutorOptions o;
  o.connections = 1;
  o.origin_hold_probability = 0;
  o.origin_answers = kept;
  o.replay = input;
  auto ex = Executor::Create(Shipped("examples/relay.dspec"), o);
  EXPECT_TRUE(ex.ok()) << ex.status();
  if (!ex.ok()) return {};
  Executor& e = **ex;
  std::vector<Value> answers;
  for (size_t i = 0; i < input.size(); ++i) {
    auto next = e.Next();
    EXPECT_TRUE(next.ok() && next->has_value()) << next.status();
    if (!next.ok() || !next->has_value()) return {};
    std::optional<Value> a = Forward(e, **next);
    if (!a.has_value()) return {};
    answers.push_back(*a);
    EXPECT_TRUE(e.Received(0, Value::Map({{"v", a->Find("v") ? *a->Find("v") : Value()}}), 4).ok());
  }
  // What a rerun sent keeps the answers attached to it.
  EXPECT_EQ(e.inputs().size(), input.size());
  for (size_t i = 0; i < input.size(); ++i) EXPECT_EQ(e.inputs()[i].origin_answers, input[i].origin_answers);
  return answers;
}

// Shrinking drops requests: an answer attached to a request goes with it,
// where answers kept per key and occurrence would shift to the next one.
TEST(OriginAnswers, AnAnswerAttachedToARequestFollowsItWhenEarlierOnesAreDropped) {
  auto item = [](const char* id, const char* answer) {
    InputItem i;
    i.jexpr = Value::Map({{"op", Value::String("get")}, {"id", Value::String(id)}});
    i.origin_answers = {{"op get", Answer(answer)}};
    return i;
  };
  const std::vector<OriginAnswerItem> book = {{"op get", 0, Answer("book0")}, {"op get", 1, Answer("book1")}};
  EXPECT_EQ(ReplayRelay({item("a", "A"), item("b", "B")}, book), (std::vector<Value>{Answer("A"), Answer("B")}));
  EXPECT_EQ(ReplayRelay({item("b", "B")}, book), (std::vector<Value>{Answer("B")}));
  // Without an attached answer for its key: the book's, by occurrence.
  InputItem bare = item("b", "B");
  bare.origin_answers = {{"op put", Answer("P")}};
  EXPECT_EQ(ReplayRelay({bare}, book), (std::vector<Value>{Answer("book0")}));
}

// A revalidation where the run fetched in full (or the other way round)
// still gets the run's answer, but never a 304 to an unconditional request.
TEST(OriginAnswers, AnAnswerFitsTheSameRequestConditionalOrNotUnlessItIsA304) {
  auto kept = [](const std::string& key, int64_t status) {
    return AttachedAnswer{key, Value::Map({{"status", Value::Int(status)}})};
  };
  const std::string plain = OriginRequestKey(Http("GET", "/a", false));
  const std::string conditional = OriginRequestKey(Http("GET", "/a", true));
  EXPECT_TRUE(FitsLoosely(kept(plain, 200), conditional));
  EXPECT_TRUE(FitsLoosely(kept(plain, 500), conditional));
  EXPECT_TRUE(FitsLoosely(kept(conditional, 200), plain));
  EXPECT_FALSE(FitsLoosely(kept(conditional, 304), plain));
  EXPECT_FALSE(FitsLoosely(kept(plain, 200), plain));  // an exact fit is not a loose one
  EXPECT_FALSE(FitsLoosely(kept(conditional, 304), conditional));
  EXPECT_FALSE(FitsLoosely(kept(plain, 200), OriginRequestKey(Http("GET", "/b", true))));
  EXPECT_FALSE(FitsLoosely(kept(plain, 200), OriginRequestKey(Http("HEAD", "/a", true))));
}

// Two requests in flight, forwarded in the other order: each origin
// request gets the answer attached to the request whose id it carries,
// not the oldest request's.
// A rerun through the relay of two get requests on connections 0 and 1,
// ids "aaaaaa" and "bbbbbb", each with its attached answer ("A", "B") of
// the given orders; both sent at t=1, their planned requests in *sent.
std::unique_ptr<Executor> TwoRequestsInFlight(int64_t order_a, int64_t order_b, std::vector<PlannedRequest>* sent) {
  auto item = [](int conn, const char* id, const char* answer, int64_t order) {
    InputItem i;
    i.conn = conn;
    i.jexpr = Value::Map({{"op", Value::String("get")}, {"id", Value::String(id)}});
    i.origin_answers = {{"op get", Answer(answer), order}};
    return i;
  };
  ExecutorOptions o;
  o.connections = 2;
  o.max_in_flight = 2;
  o.origin_hold_probability = 0;
  o.replay = {item(0, "aaaaaa", "A", order_a), item(1, "bbbbbb", "B", order_b)};
  auto ex = Executor::Create(Shipped("examples/relay.dspec"), o);
  EXPECT_TRUE(ex.ok()) << ex.status();
  if (!ex.ok()) return nullptr;
  for (int k = 0; k < 2; ++k) {
    auto next = (*ex)->Next();
    EXPECT_TRUE(next.ok() && next->has_value()) << next.status();
    if (!next.ok() || !next->has_value()) return nullptr;
    EXPECT_TRUE((*ex)->Sent(**next, 1).ok());
    sent->push_back(**next);
  }
  return std::move(*ex);
}

TEST(OriginAnswers, ARerunAnswersTheRequestTheIntermediaryForwardedByItsId) {
  std::vector<PlannedRequest> sent;
  std::unique_ptr<Executor> ex = TwoRequestsInFlight(-1, -1, &sent);
  ASSERT_NE(ex, nullptr);
  Executor& e = *ex;
  std::vector<Value> answers;
  for (int k : {1, 0}) {
    ASSERT_TRUE(e.OriginRequest(0, sent[static_cast<size_t>(k)].msg.Set("origin", Value::String("origin-0")), 2).ok());
    std::optional<OriginAnswer> a = e.NextOriginAnswer(2);
    ASSERT_TRUE(a.has_value());
    ASSERT_TRUE(e.OriginAnswered(*a, 3).ok());
    answers.push_back(a->msg);
  }
  EXPECT_EQ(answers, (std::vector<Value>{Answer("B"), Answer("A")}));
}

// The run being rerun answered b's request before a's: a rerun whose SUT
// asks about a first holds a's answer until b's is given (an intermediary
// that stores what it gets last then stores what it did in the run), and
// no longer than kMaxOrderHoldNs when b's request never comes.
TEST(OriginAnswers, ARerunGivesItsAnswersInTheOrderItsRunDid) {
  for (const bool b_comes : {true, false}) {
    SCOPED_TRACE(b_comes ? "b's request comes" : "b's request never comes");
    std::vector<PlannedRequest> sent;
    std::unique_ptr<Executor> ex = TwoRequestsInFlight(1, 0, &sent);
    ASSERT_NE(ex, nullptr);
    Executor& e = *ex;
    auto ask = [&](size_t k, int oconn, int64_t t) {
      ASSERT_TRUE(e.OriginRequest(oconn, sent[k].msg.Set("origin", Value::String("origin-0")), t).ok());
    };
    ask(0, 0, 10);                                     // a's request first
    EXPECT_FALSE(e.NextOriginAnswer(10).has_value());  // held for b's
    std::vector<Value> answers;
    auto give = [&](int64_t t) {
      std::optional<OriginAnswer> a = e.NextOriginAnswer(t);
      ASSERT_TRUE(a.has_value());
      ASSERT_TRUE(e.OriginAnswered(*a, t).ok());
      answers.push_back(a->msg);
    };
    if (b_comes) {
      ask(1, 1, 20);
      give(20);
      give(20);  // a's is due as soon as b's is given
      EXPECT_EQ(answers, (std::vector<Value>{Answer("B"), Answer("A")}));
    } else {
      EXPECT_FALSE(e.NextOriginAnswer(10 + kMaxOrderHoldNs - 1).has_value());
      give(10 + kMaxOrderHoldNs);
      EXPECT_EQ(answers, (std::vector<Value>{Answer("A")}));
    }
  }
}

}  // namespace
}  // namespace dualswarm::harness
