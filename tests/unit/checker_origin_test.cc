// The checker and an intermediary's spec (one with an origin role,
// docs/spec-language.md: intermediaries): requests the SUT sends the origin
// are explained by the messages the spec sent to the origin role, whatever
// origin connection carries them and in whatever order (the mapping is
// part of the search), and the origin's answers are steps of the spec.
// Hand-written traces of specs/examples/relay.dspec; soundness (every
// trace the intermediary simulator makes is accepted); the memo's
// exactness (memo on or off, every branch order, one observation at a
// time); sensitivity (a forwarded request or a relayed answer changed to a
// value nothing explains is rejected).
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/check/checker.h"
#include "engine/check/observation.h"
#include "engine/harness/intermediary_simulator.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"
#include "tests/common/shipped_spec.h"

namespace dualswarm {
namespace {

using check::Observation;
using check::Side;
using ir::Value;

std::vector<Observation> Trace(const std::string& text) {
  auto t = check::ParseTrace("t.jsonl", text);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : std::vector<Observation>{};
}

check::Verdict Check(const std::vector<Observation>& trace, check::CheckerOptions co = {}) {
  co.verify_memo_keys = true;
  co.max_steps = 2'000'000;
  auto v = check::CheckTrace(Shipped("examples/relay.dspec"), trace, co);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : check::Verdict{check::Verdict::Kind::kSpecError, v.status().ToString()};
}

// Lines of a trace: a client's request and response, and the origin side's.
std::string Req(int label, int conn, const std::string& id) {
  return absl::StrCat("{\"label\":", label, ",\"conn\":", conn, ",\"dir\":\"sent\",\"msg\":{\"op\":\"get\",\"id\":\"",
                      id, "\"}}\n");
}
std::string Resp(int label, int conn, const std::string& v) {
  return absl::StrCat("{\"label\":", label, ",\"conn\":", conn, ",\"dir\":\"received\",\"msg\":{\"v\":\"", v, "\"}}\n");
}
std::string OriginReq(int label, int conn, const std::string& id) {
  return absl::StrCat("{\"side\":\"origin\",\"label\":", label, ",\"conn\":", conn,
                      ",\"dir\":\"received\",\"msg\":{\"op\":\"get\",\"id\":\"", id, "\",\"origin\":\"origin-0\"}}\n");
}
std::string OriginAnswer(int label, int conn, const std::string& v) {
  return absl::StrCat("{\"side\":\"origin\",\"label\":", label, ",\"conn\":", conn,
                      ",\"dir\":\"sent\",\"msg\":{\"v\":\"", v, "\"}}\n");
}

TEST(CheckerOrigin, TwoClientsOnOneOriginConnectionForwardedInEitherOrder) {
  // docs/trace-format.md's example: the second client's request went first.
  const std::string shared = Req(1, 0, "aaa") + Req(3, 1, "bbb") + OriginReq(1, 0, "bbb") + OriginAnswer(2, 0, "xy") +
                             OriginReq(3, 0, "aaa") + OriginAnswer(4, 0, "zw");
  EXPECT_EQ(Check(Trace(shared + Resp(2, 0, "zw") + Resp(4, 1, "xy"))).kind, check::Verdict::Kind::kAccept);
  // The answers swapped between the clients: no mapping explains it.
  const check::Verdict swapped = Check(Trace(shared + Resp(2, 0, "xy") + Resp(4, 1, "zw")));
  EXPECT_EQ(swapped.kind, check::Verdict::Kind::kReject) << check::FormatVerdict(swapped);
}

TEST(CheckerOrigin, TwoOriginConnectionsAnsweredOutOfOrder) {
  const std::string t = Req(1, 0, "aaa") + Req(3, 1, "bbb") + OriginReq(1, 0, "aaa") + OriginReq(3, 1, "bbb") +
                        OriginAnswer(4, 1, "B") + Resp(4, 1, "B") + OriginAnswer(2, 0, "A") + Resp(2, 0, "A");
  EXPECT_EQ(Check(Trace(t)).kind, check::Verdict::Kind::kAccept);
}

TEST(CheckerOrigin, OneClientsPipelinedRequestsForwardedInReverse) {
  const std::string t = Req(1, 0, "aaa") + Req(3, 0, "bbb") + OriginReq(1, 0, "bbb") + OriginReq(3, 1, "aaa") +
                        OriginAnswer(2, 0, "B") + OriginAnswer(4, 1, "A");
  EXPECT_EQ(Check(Trace(t + Resp(2, 0, "A") + Resp(4, 0, "B"))).kind, check::Verdict::Kind::kAccept);
  // The client's answers must come in the order of its requests.
  EXPECT_EQ(Check(Trace(t + Resp(2, 0, "B") + Resp(4, 0, "A"))).kind, check::Verdict::Kind::kReject);
}

TEST(CheckerOrigin, AClientAnsweredBeforeTheOriginAnsweredIsRejected) {
  const std::string t = Req(1, 0, "aaa") + OriginReq(1, 0, "aaa") + Resp(2, 0, "A") + OriginAnswer(2, 0, "A");
  const check::Verdict v = Check(Trace(t));
  EXPECT_EQ(v.kind, check::Verdict::Kind::kReject) << check::FormatVerdict(v);
  EXPECT_TRUE(absl::StrContains(v.message, "explains response label 2 on conn 0 (trace line 3)")) << v.message;
}

TEST(CheckerOrigin, AWrongForwardedFieldIsRejectedWithThePoolsReason) {
  const check::Verdict v = Check(Trace(Req(1, 0, "aaa") + OriginReq(1, 0, "zzz")));
  ASSERT_EQ(v.kind, check::Verdict::Kind::kReject) << check::FormatVerdict(v);
  EXPECT_TRUE(absl::StrContains(v.message, "explains request label 1 the SUT sent on origin conn 0 (trace line 2)"))
      << v.message;
  ASSERT_FALSE(v.reasons.empty());
  EXPECT_EQ(v.reasons[0].field, "id") << check::FormatVerdict(v);
}

// Apache as a forward proxy, in CI: four client requests in flight, and
// the first request forwarded (the PUT of label 7, without Via) rejected.
// Most explanations that reach it took another client's request, whose
// body, path and id all differ; the one that took label 7 differs only in
// `via`. The reasons are the closest explanations: each names `via`, even
// when only one reason is kept.
TEST(CheckerOrigin, TheReasonsAreTheClosestExplanations) {
  const std::string client =
      "{\"label\":1,\"conn\":0,\"dir\":\"sent\",\"msg\":{\"body\":\"shxutt\",\"headers\":{\"connection\":\"x-hop-1\","
      "\"x-ds-id\":\"ayikdare\",\"x-e2e-a\":\"yktn\",\"x-hop-1\":\"dal\"},\"method\":\"POST\",\"path\":\"http://"
      "origin-0/"
      "hux\"}}\n"
      "{\"label\":3,\"conn\":0,\"dir\":\"sent\",\"msg\":{\"body\":\"\",\"headers\":{\"connection\":\"x-hop-1\",\"x-ds-"
      "id\":\"bdcgmqnx\",\"x-e2e-a\":\"cwcy\",\"x-hop-1\":\"jlq\"},\"method\":\"GET\",\"path\":\"http://origin-0/"
      "sor\"}}\n"
      "{\"label\":5,\"conn\":1,\"dir\":\"sent\",\"msg\":{\"body\":\"vt\",\"headers\":{\"connection\":\"x-hop-1\",\"x-"
      "ds-"
      "id\":\"ofdxkjnl\",\"x-e2e-a\":\"yovr\",\"x-hop-1\":\"jjk\"},\"method\":\"POST\",\"path\":\"http://origin-0/"
      "akb\"}}\n"
      "{\"label\":7,\"conn\":2,\"dir\":\"sent\",\"msg\":{\"body\":\"xuqhi\",\"headers\":{\"connection\":\"x-hop-1\","
      "\"host\":\"elsewhere.example\",\"x-ds-id\":\"odvlokkw\",\"x-e2e-a\":\"rotv\",\"x-hop-1\":\"kkf\"},\"method\":"
      "\"PUT\",\"path\":\"http://origin-0/ekb\"}}\n";
  const std::string forwarded =
      "{\"side\":\"origin\",\"label\":1,\"conn\":0,\"dir\":\"received\",\"msg\":{\"body\":\"xuqhi\",\"headers\":{"
      "\"connection\":\"close\",\"content-length\":\"5\",\"host\":\"origin-0\",\"x-ds-id\":\"odvlokkw\",\"x-e2e-a\":"
      "\"rotv\"},\"method\":\"PUT\",\"origin\":\"origin-0\",\"path\":\"/ekb\"}}\n";
  const std::vector<Observation> trace = Trace(client + forwarded);
  for (int kept : {6, 1}) {
    check::CheckerOptions co;
    co.max_reasons = kept;
    co.connection_nodes.origins = 1;
    auto v = check::CheckTrace(Shipped("http_proxy.dspec"), trace, co);
    ASSERT_TRUE(v.ok()) << v.status();
    ASSERT_EQ(v->kind, check::Verdict::Kind::kReject) << check::FormatVerdict(*v);
    ASSERT_EQ(static_cast<int>(v->reasons.size()), kept) << check::FormatVerdict(*v);
    for (const check::DeathReason& r : v->reasons) {
      EXPECT_EQ(r.field, "headers.via") << check::FormatVerdict(*v);
      EXPECT_EQ(r.mismatched_fields, 1) << check::FormatVerdict(*v);
    }
    // Of equally close ones, the one whose server took fewest requests first.
    EXPECT_EQ(v->reasons[0].server_order, std::vector<int64_t>{7}) << check::FormatVerdict(*v);
  }
}

TEST(CheckerOrigin, ARequestNothingForwardedIsRejected) {
  // One client request, two origin requests: the second has no cause.
  const check::Verdict v = Check(Trace(Req(1, 0, "aaa") + OriginReq(1, 0, "aaa") + OriginReq(3, 1, "aaa")));
  ASSERT_EQ(v.kind, check::Verdict::Kind::kReject) << check::FormatVerdict(v);
  EXPECT_TRUE(absl::StrContains(check::FormatVerdict(v), "nothing pending for the origin")) << check::FormatVerdict(v);
}

TEST(CheckerOrigin, AnAnswerTakenAfterItsConnectionClosedStillCounts) {
  const std::string t = Req(1, 0, "aaa") + OriginReq(1, 0, "aaa") + OriginAnswer(2, 0, "A") +
                        "{\"side\":\"origin\",\"event\":\"closed\",\"conn\":0}\n" + Resp(2, 0, "A");
  EXPECT_EQ(Check(Trace(t)).kind, check::Verdict::Kind::kAccept);
}

TEST(CheckerOrigin, ServerOrdersNameOriginAnswers) {
  check::Verdict v;
  v.kind = check::Verdict::Kind::kReject;
  v.reasons.push_back({"why", "v", {1, check::kOriginLabelBase + 2, 3}, ""});
  EXPECT_TRUE(absl::StrContains(check::FormatVerdict(v), "server order [1, o2, 3]")) << check::FormatVerdict(v);
  EXPECT_TRUE(absl::StrContains(check::VerdictToJson(v, nullptr), "\"server_order\":[1,\"o2\",3]"));
}

TEST(CheckerOrigin, AnOriginSideLineIsMalformedForASpecWithoutAnOriginRole) {
  auto trace = check::ParseTrace("t.jsonl",
                                 "{\"label\":1,\"conn\":0,\"dir\":\"sent\",\"msg\":{\"op\":\"get\",\"key\":\"k\"}}\n"
                                 "{\"side\":\"origin\",\"label\":1,\"conn\":0,\"dir\":\"received\",\"msg\":{}}\n");
  ASSERT_TRUE(trace.ok()) << trace.status();
  auto checker = check::Checker::Create(Shipped("kv.dspec"), check::CheckerOptions{});
  ASSERT_TRUE(checker.ok()) << checker.status();
  ASSERT_TRUE((*checker)->Observe((*trace)[0]).ok());
  absl::Status s = (*checker)->Observe((*trace)[1]);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      absl::StrContains(s.message(), "line 2: an observation on the origin side, but spec 'kv' has no origin role"))
      << s;
}

// ---- Simulated traces -------------------------------------------------------

// Requests with ids unique per trace (even seeds) or from three (odd
// seeds: equal forwarded requests make the mapping ambiguous); answers from
// four values.
harness::IntermediarySimOptions SimFor(uint64_t seed, int requests) {
  harness::IntermediarySimOptions so;
  so.seed = seed;
  so.requests = requests;
  so.connections = 1 + static_cast<int>(seed % 4);
  so.max_in_flight = 1 + static_cast<int>(seed / 4 % 2);
  so.origin_connections = 1 + static_cast<int>(seed / 8 % 4);
  so.origin_pipeline = 1 + static_cast<int>(seed / 32 % 2);
  return so;
}

std::vector<Observation> Simulated(uint64_t seed, int requests) {
  int next_id = 0;
  const harness::RequestFn request = [&](harness::Rng& rng) {
    const std::string id =
        seed % 2 == 0 ? absl::StrCat("r", next_id++) : std::string(1, static_cast<char>('a' + rng() % 3));
    return Value::Map({{"op", Value::String("get")}, {"id", Value::String(id)}});
  };
  const harness::AnswerFn answer = [](harness::Rng& rng, const Value&) {
    return Value::Map({{"v", Value::String(std::string(1, static_cast<char>('w' + rng() % 4)))}});
  };
  auto trace = harness::SimulateIntermediary(*Shipped("examples/relay.dspec"), request, answer, SimFor(seed, requests));
  EXPECT_TRUE(trace.ok()) << trace.status();
  return trace.ok() ? *trace : std::vector<Observation>{};
}

TEST(CheckerOrigin, EverySimulatedTraceIsAccepted) {
  size_t origin_lines = 0, origin_closes = 0;
  for (uint64_t seed = 1; seed <= 500; ++seed) {
    const std::vector<Observation> t = Simulated(seed, 60);
    for (const Observation& o : t) {
      origin_lines += o.side == Side::kOrigin;
      origin_closes += o.side == Side::kOrigin && o.kind == Observation::Kind::kClosed;
    }
    const check::Verdict v = Check(t);
    ASSERT_EQ(v.kind, check::Verdict::Kind::kAccept) << "seed " << seed << ": " << check::FormatVerdict(v);
  }
  EXPECT_GT(origin_lines, 500u * 40);
  EXPECT_GT(origin_closes, 100u);
}

// The verdict of a search without memo or step cache. (The expected
// verdicts are known by construction: a simulated trace has a witness, and
// a value nothing carries has none.)
check::Verdict::Kind Reference(const std::vector<Observation>& t) {
  check::CheckerOptions co;
  co.use_memo = false;
  co.use_step_cache = false;
  return Check(t, co).kind;
}

// Feeds the trace one observation at a time, with restarts at every stall
// and every call stopping after one memo lookup.
check::Verdict::Kind Online(const std::vector<Observation>& t) {
  check::CheckerOptions co;
  co.verify_memo_keys = true;
  co.restart_after_work = 1;
  co.restart_back_observations = 2;
  co.defer_when_stalled = true;
  co.yield_after_work = 1;
  auto checker = check::Checker::Create(Shipped("examples/relay.dspec"), co);
  EXPECT_TRUE(checker.ok()) << checker.status();
  if (!checker.ok()) return check::Verdict::Kind::kSpecError;
  for (const Observation& o : t) EXPECT_TRUE((*checker)->Observe(o).ok());
  (*checker)->Finish();
  return (*checker)->verdict().kind;
}

// A copy of t with the field `field` of the k-th line that has it changed.
std::vector<Observation> Changed(std::vector<Observation> t, Side side, Observation::Kind kind, const char* field,
                                 size_t k) {
  for (Observation& o : t)
    if (o.side == side && o.kind == kind && o.msg.Find(field) != nullptr && k-- == 0) {
      o.msg = o.msg.Set(field, Value::String("nothing-has-this"));
      break;
    }
  return t;
}

TEST(CheckerOrigin, MemoAndSearchOrdersChangeNoVerdictAndChangedValuesAreRejected) {
  int rejected = 0, compared = 0;
  for (uint64_t seed = 1; seed <= 500; ++seed) {
    const int requests = 3 + static_cast<int>(seed % 6);
    const std::vector<Observation> ok = Simulated(seed, requests);
    harness::Rng rng(seed);
    std::vector<std::vector<Observation>> cases = {ok};
    size_t forwarded = 0, relayed = 0;
    for (const Observation& o : ok) {
      forwarded += o.side == Side::kOrigin && o.kind == Observation::Kind::kReceived;
      relayed += o.side == Side::kClient && o.kind == Observation::Kind::kReceived;
    }
    // Sensitivity: a forwarded request, or a relayed answer, that nothing
    // carries.
    if (forwarded > 0)
      cases.push_back(Changed(ok, Side::kOrigin, Observation::Kind::kReceived, "id", rng() % forwarded));
    if (relayed > 0) cases.push_back(Changed(ok, Side::kClient, Observation::Kind::kReceived, "v", rng() % relayed));
    for (size_t c = 0; c < cases.size(); ++c) {
      const check::Verdict::Kind expected = c == 0 ? check::Verdict::Kind::kAccept : check::Verdict::Kind::kReject;
      // Without the memo a rejection costs every order of every input:
      // affordable for the smallest traces only.
      if (requests == 3) ASSERT_EQ(Reference(cases[c]), expected) << "seed " << seed << " case " << c;
      for (check::BranchOrder order :
           {check::BranchOrder::kFirst, check::BranchOrder::kLast, check::BranchOrder::kRandom}) {
        check::CheckerOptions co;
        co.branch_order = order;
        ASSERT_EQ(Check(cases[c], co).kind, expected)
            << "seed " << seed << " case " << c << " order " << check::BranchOrderName(order);
      }
      ASSERT_EQ(Online(cases[c]), expected) << "seed " << seed << " case " << c << " online";
      rejected += c > 0;
      ++compared;
    }
  }
  EXPECT_GT(rejected, 900);
  EXPECT_GT(compared, 1400);
}

}  // namespace
}  // namespace dualswarm
