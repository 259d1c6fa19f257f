// The classic examples the checker must get right: compare-and-set and
// compare-and-reset servers (internal nondeterminism through symbolic
// values), the ETag cases of the http_webdav spec, and network reordering.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/check/checker.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"
#include "tests/common/shipped_spec.h"

namespace dualswarm::check {
namespace {

std::shared_ptr<const lang::Spec> Load(const std::string& file, const std::string& src) {
  auto spec = lang::LoadSpec(file, src);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : nullptr;
}

Verdict::Kind CheckLines(std::shared_ptr<const lang::Spec> spec, const std::vector<std::string>& lines,
                         const std::string& network = "tcp", Verdict* out = nullptr) {
  auto trace = ParseTrace("test.jsonl", absl::StrJoin(lines, "\n"));
  EXPECT_TRUE(trace.ok()) << trace.status();
  CheckerOptions opts;
  opts.network = network;
  auto v = CheckTrace(spec, *trace, opts);
  EXPECT_TRUE(v.ok()) << v.status();
  if (out) *out = *v;
  return v->kind;
}

std::string Sent(int label, int conn, const std::string& msg) {
  return absl::StrCat("{\"label\":", label, ",\"conn\":", conn, ",\"dir\":\"sent\",\"msg\":", msg, "}");
}
std::string Recv(int label, int conn, const std::string& msg) {
  return absl::StrCat("{\"label\":", label, ",\"conn\":", conn, ",\"dir\":\"received\",\"msg\":", msg, "}");
}

// --- compare-and-set: state n; {cmp, new}: if n == cmp then n = new.
const char kCas[] = R"(
spec cas;
var n = 0;
on recv q from c {
  if n == q.cmp {
    n = q.new;
    send c { ok: true };
  } else {
    send c { ok: false };
  }
}
)";

TEST(CompareAndSet, SequentialHistoryAccepted) {
  auto spec = Load("cas.dspec", kCas);
  EXPECT_EQ(CheckLines(spec, {Sent(1, 0, R"({"cmp":0,"new":5})"), Recv(2, 0, R"({"ok":true})"),
                              Sent(3, 0, R"({"cmp":0,"new":7})"), Recv(4, 0, R"({"ok":false})"),
                              Sent(5, 0, R"({"cmp":5,"new":1})"), Recv(6, 0, R"({"ok":true})")}),
            Verdict::Kind::kAccept);
}

TEST(CompareAndSet, WrongAnswerRejected) {
  auto spec = Load("cas.dspec", kCas);
  Verdict v;
  EXPECT_EQ(CheckLines(spec,
                       {Sent(1, 0, R"({"cmp":0,"new":5})"), Recv(2, 0, R"({"ok":true})"),
                        Sent(3, 0, R"({"cmp":0,"new":7})"), Recv(4, 0, R"({"ok":true})")},
                       "tcp", &v),
            Verdict::Kind::kReject);
  ASSERT_FALSE(v.reasons.empty());
  EXPECT_EQ(v.reasons[0].field, "ok");
  EXPECT_EQ(v.observation.label, 4);
}

TEST(CompareAndSet, ConcurrentCasesNeedReordering) {
  // Two clients race cas(0->1) and cas(0->2): exactly one may win, either one.
  auto spec = Load("cas.dspec", kCas);
  EXPECT_EQ(CheckLines(spec, {Sent(1, 0, R"({"cmp":0,"new":1})"), Sent(3, 1, R"({"cmp":0,"new":2})"),
                              Recv(4, 1, R"({"ok":false})"), Recv(2, 0, R"({"ok":true})")}),
            Verdict::Kind::kAccept);
  EXPECT_EQ(CheckLines(spec, {Sent(1, 0, R"({"cmp":0,"new":1})"), Sent(3, 1, R"({"cmp":0,"new":2})"),
                              Recv(4, 1, R"({"ok":true})"), Recv(2, 0, R"({"ok":true})")}),
            Verdict::Kind::kReject);
  // Under the sync model the server must take request 1 first.
  EXPECT_EQ(CheckLines(spec,
                       {Sent(1, 0, R"({"cmp":0,"new":1})"), Sent(3, 1, R"({"cmp":0,"new":2})"),
                        Recv(4, 1, R"({"ok":true})"), Recv(2, 0, R"({"ok":false})")},
                       "sync"),
            Verdict::Kind::kReject);
  EXPECT_EQ(CheckLines(spec,
                       {Sent(1, 0, R"({"cmp":0,"new":1})"), Sent(3, 1, R"({"cmp":0,"new":2})"),
                        Recv(4, 1, R"({"ok":true})"), Recv(2, 0, R"({"ok":false})")},
                       "tcp"),
            Verdict::Kind::kAccept);
}

// --- compare-and-reset: the server holds a secret it chose itself (internal
// nondeterminism); a guess is answered lt/eq/gt, and a correct guess makes
// the server pick a new secret.
const char kCompareReset[] = R"(
spec compare_reset;
fn choose_secret() {
  let s = fresh int;
  assume 0 <= s && s < 10;
  s
}
var secret = 0;
var started = false;
on recv q from c {
  if !started {
    secret = choose_secret();
    started = true;
  }
  if q.guess == secret {
    secret = choose_secret();
    send c { result: "eq" };
  } else if q.guess < secret {
    send c { result: "lt" };
  } else {
    send c { result: "gt" };
  }
}
)";

std::vector<std::string> Guesses(const std::vector<std::pair<int, std::string>>& g) {
  std::vector<std::string> out;
  int label = 1;
  for (const auto& [guess, result] : g) {
    out.push_back(Sent(label, 0, absl::StrCat("{\"guess\":", guess, "}")));
    out.push_back(Recv(label + 1, 0, absl::StrCat("{\"result\":\"", result, "\"}")));
    label += 2;
  }
  return out;
}

TEST(CompareAndReset, ConsistentAnswersAccepted) {
  auto spec = Load("cr.dspec", kCompareReset);
  EXPECT_EQ(CheckLines(spec, Guesses({{5, "lt"}, {7, "gt"}, {6, "eq"}, {3, "gt"}, {1, "lt"}, {2, "eq"}})),
            Verdict::Kind::kAccept);
}

TEST(CompareAndReset, ContradictionRejectedThroughSolver) {
  auto spec = Load("cr.dspec", kCompareReset);
  Verdict v;
  // 5 < s and s < 6 has no integer solution.
  EXPECT_EQ(CheckLines(spec, Guesses({{5, "lt"}, {6, "gt"}}), "tcp", &v), Verdict::Kind::kReject);
  EXPECT_EQ(v.observation.label, 4);
  // The secret is below 10 by assumption.
  EXPECT_EQ(CheckLines(spec, Guesses({{9, "lt"}})), Verdict::Kind::kReject);
  // After a reset the new secret is unconstrained again.
  EXPECT_EQ(CheckLines(spec, Guesses({{4, "eq"}, {4, "lt"}, {8, "gt"}, {6, "lt"}, {7, "eq"}})), Verdict::Kind::kAccept);
}

// --- ETag cases on the shipped http_webdav spec.
std::string Req(const std::string& method, const std::string& path, const std::string& headers,
                const std::string& body = "") {
  return absl::StrCat("{\"method\":\"", method, "\",\"path\":\"", path, "\",\"headers\":", headers, ",\"body\":\"",
                      body, "\"}");
}
std::string Resp(int status, const std::string& headers = "{}", const std::string& body = "") {
  return absl::StrCat("{\"status\":", status, ",\"headers\":", headers, ",\"body\":\"", body, "\"}");
}

TEST(EtagCases, RevealedTagMustNotBe412edUntilChange) {
  auto spec = Shipped("http_webdav.dspec");
  std::vector<std::string> base = {
      Sent(1, 0, Req("PUT", "/a", "{}", "one")),
      Recv(2, 0, Resp(201)),
      Sent(3, 0, Req("GET", "/a", "{}")),
      Recv(4, 0, Resp(200, R"({"etag":"\"x\""})", "one")),
      Sent(5, 0, Req("PUT", "/a", R"({"if-match":"\"x\""})", "two")),
  };
  auto bad = base;
  bad.push_back(Recv(6, 0, Resp(412)));
  Verdict v;
  EXPECT_EQ(CheckLines(spec, bad, "tcp", &v), Verdict::Kind::kReject);
  EXPECT_EQ(v.observation.label, 6);
  auto good = base;
  good.push_back(Recv(6, 0, Resp(204)));
  EXPECT_EQ(CheckLines(spec, good), Verdict::Kind::kAccept);
  // After the change, the old tag may be refused.
  good.push_back(Sent(7, 0, Req("PUT", "/a", R"({"if-match":"\"x\""})", "three")));
  good.push_back(Recv(8, 0, Resp(412)));
  EXPECT_EQ(CheckLines(spec, good), Verdict::Kind::kAccept);
}

TEST(EtagCases, Refused412StaysRefusedUntilChange) {
  auto spec = Shipped("http_webdav.dspec");
  // The created representation's tag is strong (a 201 says so).
  std::vector<std::string> base = {
      Sent(1, 0, Req("PUT", "/a", "{}", "one")),
      Recv(2, 0, Resp(201, R"({"etag":"\"x\""})")),
      Sent(3, 0, Req("PUT", "/a", R"({"if-match":"\"y\""})", "two")),
      Recv(4, 0, Resp(412)),
      Sent(5, 0, Req("PUT", "/a", R"({"if-match":"\"y\""})", "three")),
  };
  auto bad = base;
  bad.push_back(Recv(6, 0, Resp(204)));
  EXPECT_EQ(CheckLines(spec, bad), Verdict::Kind::kReject);
  auto good = base;
  good.push_back(Recv(6, 0, Resp(412)));
  EXPECT_EQ(CheckLines(spec, good), Verdict::Kind::kAccept);
  // Once the resource changes, the new tag may well be "y".
  good.push_back(Sent(7, 0, Req("PUT", "/a", "{}", "four")));
  good.push_back(Recv(8, 0, Resp(204)));
  good.push_back(Sent(9, 0, Req("PUT", "/a", R"({"if-match":"\"y\""})", "five")));
  good.push_back(Recv(10, 0, Resp(204)));
  EXPECT_EQ(CheckLines(spec, good), Verdict::Kind::kAccept);
}

// RFC 9110 §8.8.1: a validator may change although the data did not.
// Apache's weak tag (a write less than a second ago) becomes the strong
// one with the same opaque part; beyond that, only a write's one other
// weak tag (AWritesWeakTagMayChangeOnceMore) may show unwritten.
TEST(EtagCases, AWeakTagMayBecomeStrongButNotOtherwise) {
  auto spec = Shipped("http_webdav.dspec");
  std::vector<std::string> base = {
      Sent(1, 0, Req("PUT", "/a", "{}", "one")), Recv(2, 0, Resp(201)),
      Sent(3, 0, Req("GET", "/a", "{}")),        Recv(4, 0, Resp(200, R"({"etag":"W/\"8-a\""})", "one")),
      Sent(5, 0, Req("GET", "/a", "{}")),
  };
  auto strong = base;
  strong.push_back(Recv(6, 0, Resp(200, R"({"etag":"\"8-a\""})", "one")));
  EXPECT_EQ(CheckLines(spec, strong), Verdict::Kind::kAccept);
  // ... and then stays strong: If-Match with it holds.
  strong.push_back(Sent(7, 0, Req("PUT", "/a", R"({"if-match":"\"8-a\""})", "two")));
  auto refused = strong;
  refused.push_back(Recv(8, 0, Resp(412)));
  EXPECT_EQ(CheckLines(spec, refused), Verdict::Kind::kReject);
  strong.push_back(Recv(8, 0, Resp(204)));
  EXPECT_EQ(CheckLines(spec, strong), Verdict::Kind::kAccept);
  // The write's one other weak tag may turn strong too
  // (AWritesWeakTagMayChangeOnceMore), but then the first is gone.
  auto other = base;
  other.push_back(Recv(6, 0, Resp(200, R"({"etag":"\"9-b\""})", "one")));
  EXPECT_EQ(CheckLines(spec, other), Verdict::Kind::kAccept);
  other.push_back(Sent(7, 0, Req("GET", "/a", "{}")));
  other.push_back(Recv(8, 0, Resp(200, R"({"etag":"\"8-a\""})", "one")));
  EXPECT_EQ(CheckLines(spec, other), Verdict::Kind::kReject);
  // A 304 may show the strong tag too (§15.4.5: the tag a 200 would show).
  auto not_modified = base;
  not_modified.back() = Sent(5, 0, Req("GET", "/a", R"({"if-none-match":"W/\"8-a\""})"));
  auto shown_strong = not_modified;
  shown_strong.push_back(Recv(6, 0, Resp(304, R"({"etag":"\"8-a\""})")));
  EXPECT_EQ(CheckLines(spec, shown_strong), Verdict::Kind::kAccept);
  not_modified.push_back(Recv(6, 0, Resp(304, R"({"etag":"W/\"9-b\""})")));
  EXPECT_EQ(CheckLines(spec, not_modified), Verdict::Kind::kReject);
  // A strong tag never becomes weak.
  std::vector<std::string> weakened = {
      Sent(1, 0, Req("PUT", "/a", "{}", "one")),
      Recv(2, 0, Resp(201, R"({"etag":"\"8-a\""})")),
      Sent(3, 0, Req("GET", "/a", "{}")),
      Recv(4, 0, Resp(200, R"({"etag":"W/\"8-a\""})", "one")),
  };
  EXPECT_EQ(CheckLines(spec, weakened), Verdict::Kind::kReject);
}

// RFC 9110 §8.8.1: a weak validator may change for an equivalent
// representation. Apache's does within a write (seed 6 of the torn-GET
// sweep, docs/real-servers.md): a GET overlapping a PUT of the same byte
// shows one weak tag, a GET after the PUT's 204 another. A write's weak
// tag may change once, to another weak tag (which may then show strong);
// not a third time, and a strong shown tag never changes.
TEST(EtagCases, AWritesWeakTagMayChangeOnceMore) {
  auto spec = Shipped("http_webdav.dspec");
  std::vector<std::string> apache = {
      Sent(1, 0, Req("PUT", "/a", "{}", "n")),
      Recv(2, 0, Resp(201)),
      Sent(3, 0, Req("GET", "/a", "{}")),
      Recv(4, 0, Resp(200, R"({"etag":"W/\"1-w\""})", "n")),
      Sent(5, 1, Req("PUT", "/a", "{}", "n")),
      Sent(7, 0, Req("GET", "/a", "{}")),
      Recv(8, 0, Resp(200, R"({"etag":"W/\"1-x\""})", "n")),
      Recv(6, 1, Resp(204)),
      Sent(9, 0, Req("GET", "/a", "{}")),
      Recv(10, 0, Resp(200, R"({"etag":"W/\"1-y\""})", "n")),
  };
  EXPECT_EQ(CheckLines(spec, apache), Verdict::Kind::kAccept);
  // On one connection, where no order of the server's mixes the writes up:
  // the second tag may show after the first ...
  std::vector<std::string> sequential = {
      Sent(1, 0, Req("PUT", "/a", "{}", "n")), Recv(2, 0, Resp(201)),
      Sent(3, 0, Req("GET", "/a", "{}")),      Recv(4, 0, Resp(200, R"({"etag":"W/\"1-x\""})", "n")),
      Sent(5, 0, Req("GET", "/a", "{}")),      Recv(6, 0, Resp(200, R"({"etag":"W/\"1-y\""})", "n")),
      Sent(7, 0, Req("GET", "/a", "{}")),
  };
  auto y = sequential;
  y.push_back(Recv(8, 0, Resp(200, R"({"etag":"W/\"1-y\""})", "n")));
  EXPECT_EQ(CheckLines(spec, y), Verdict::Kind::kAccept);
  // ... and then the first tag is gone, and no third one comes.
  auto back = sequential;
  back.push_back(Recv(8, 0, Resp(200, R"({"etag":"W/\"1-x\""})", "n")));
  EXPECT_EQ(CheckLines(spec, back), Verdict::Kind::kReject);
  auto third = sequential;
  third.push_back(Recv(8, 0, Resp(200, R"({"etag":"W/\"1-z\""})", "n")));
  EXPECT_EQ(CheckLines(spec, third), Verdict::Kind::kReject);
  // A switch no response showed is not modelled: If-None-Match with the
  // shown weak tag still means 304, so a server comparing it strongly is
  // still found (RFC 9110 §13.1.2; Apache on PUT).
  auto unseen = sequential;
  unseen.resize(4);
  unseen.push_back(Sent(5, 0, Req("GET", "/a", R"({"if-none-match":"W/\"1-x\""})")));
  unseen.push_back(Recv(6, 0, Resp(200, R"({"etag":"W/\"1-y\""})", "n")));
  EXPECT_EQ(CheckLines(spec, unseen), Verdict::Kind::kReject);
  // A PUT response that shows the tag shows the one the write settled on.
  std::vector<std::string> shown = {
      Sent(1, 0, Req("PUT", "/a", "{}", "n")), Recv(2, 0, Resp(201, R"({"etag":"W/\"1-x\""})")),
      Sent(3, 0, Req("GET", "/a", "{}")),      Recv(4, 0, Resp(200, R"({"etag":"W/\"1-x\""})", "n")),
      Sent(5, 0, Req("GET", "/a", "{}")),      Recv(6, 0, Resp(200, R"({"etag":"W/\"1-y\""})", "n")),
  };
  EXPECT_EQ(CheckLines(spec, shown), Verdict::Kind::kReject);
  // Not only at the second show: two GETs may see the first tag.
  auto late = apache;
  late.insert(late.begin() + 7, Recv(12, 2, Resp(200, R"({"etag":"W/\"1-x\""})", "n")));
  late.insert(late.begin() + 7, Sent(11, 2, Req("GET", "/a", "{}")));
  EXPECT_EQ(CheckLines(spec, late), Verdict::Kind::kAccept);
  // A strong tag does not change unwritten.
  std::vector<std::string> strong = {
      Sent(1, 0, Req("PUT", "/a", "{}", "n")), Recv(2, 0, Resp(201)),
      Sent(3, 0, Req("GET", "/a", "{}")),      Recv(4, 0, Resp(200, R"({"etag":"\"1-w\""})", "n")),
      Sent(5, 0, Req("GET", "/a", "{}")),      Recv(6, 0, Resp(200, R"({"etag":"\"1-x\""})", "n")),
  };
  EXPECT_EQ(CheckLines(spec, strong), Verdict::Kind::kReject);
  // Nor does the content: the other tag is for the same representation.
  auto content = apache;
  content.back() = Recv(10, 0, Resp(200, R"({"etag":"W/\"1-y\""})", "m"));
  EXPECT_EQ(CheckLines(spec, content), Verdict::Kind::kReject);
}

TEST(EtagCases, WeakComparisonForIfNoneMatch) {
  auto spec = Shipped("http_webdav.dspec");
  std::vector<std::string> base = {
      Sent(1, 0, Req("PUT", "/a", "{}", "one")),
      Recv(2, 0, Resp(201, R"({"etag":"W/\"w1\""})")),
      Sent(3, 0, Req("GET", "/a", R"({"if-none-match":"\"w1\""})")),
  };
  auto not_modified = base;
  not_modified.push_back(Recv(4, 0, Resp(304, R"({"etag":"W/\"w1\""})")));
  EXPECT_EQ(CheckLines(spec, not_modified), Verdict::Kind::kAccept);
  auto full = base;
  full.push_back(Recv(4, 0, Resp(200, R"({"etag":"W/\"w1\""})", "one")));
  EXPECT_EQ(CheckLines(spec, full), Verdict::Kind::kReject);
  // If-Match uses the strong comparison: a weak tag never matches.
  std::vector<std::string> strong = {
      Sent(1, 0, Req("PUT", "/a", "{}", "one")),
      Recv(2, 0, Resp(201, R"({"etag":"W/\"w1\""})")),
      Sent(3, 0, Req("PUT", "/a", R"({"if-match":"W/\"w1\""})", "two")),
      Recv(4, 0, Resp(204)),
  };
  EXPECT_EQ(CheckLines(spec, strong), Verdict::Kind::kReject);
}

TEST(EtagCases, UnobservedTagStaysSymbolic) {
  // The server never revealed its tag: both 304 and 200 are possible for an
  // If-None-Match guess, but the choice then sticks.
  auto spec = Shipped("http_webdav.dspec");
  std::vector<std::string> t = {
      Sent(1, 0, Req("PUT", "/a", "{}", "one")),
      Recv(2, 0, Resp(201)),
      Sent(3, 0, Req("GET", "/a", R"({"if-none-match":"\"g\""})")),
      Recv(4, 0, Resp(304, R"({"etag":"\"g\""})")),
      Sent(5, 0, Req("GET", "/a", "{}")),
  };
  auto consistent = t;
  consistent.push_back(Recv(6, 0, Resp(200, R"({"etag":"\"g\""})", "one")));
  EXPECT_EQ(CheckLines(spec, consistent), Verdict::Kind::kAccept);
  auto inconsistent = t;
  inconsistent.push_back(Recv(6, 0, Resp(200, R"({"etag":"\"h\""})", "one")));
  EXPECT_EQ(CheckLines(spec, inconsistent), Verdict::Kind::kReject);
}

// --- network reordering: conn 0 updates, conn 1 reads.
std::vector<std::string> ReorderTrace(bool done_before_get_sent) {
  std::vector<std::string> t = {
      Sent(1, 0, Req("PUT", "/a", "{}", "old")),
      Recv(2, 0, Resp(201)),
      Sent(3, 0, Req("PUT", "/a", "{}", "new")),
  };
  if (done_before_get_sent) {
    t.push_back(Recv(4, 0, Resp(204)));
    t.push_back(Sent(5, 1, Req("GET", "/a", "{}")));
  } else {
    t.push_back(Sent(5, 1, Req("GET", "/a", "{}")));
    t.push_back(Recv(4, 0, Resp(204)));
  }
  t.push_back(Recv(6, 1, Resp(200, "{}", "old")));
  return t;
}

TEST(NetworkReordering, OldValueAcceptedWhenDoneArrivesAfterGetSent) {
  auto spec = Shipped("http_webdav.dspec");
  EXPECT_EQ(CheckLines(spec, ReorderTrace(false)), Verdict::Kind::kAccept);
}

TEST(NetworkReordering, OldValueRejectedWhenDoneArrivedBeforeGetSent) {
  auto spec = Shipped("http_webdav.dspec");
  Verdict v;
  EXPECT_EQ(CheckLines(spec, ReorderTrace(true), "tcp", &v), Verdict::Kind::kReject);
  ASSERT_FALSE(v.reasons.empty());
  EXPECT_EQ(v.reasons[0].field, "body");
}

TEST(PendingRequests, UnansweredWriteMayTakeEffectLater) {
  auto spec = Shipped("kv.dspec");
  // put(a, x) never answered; reads may see it or not, but not un-see it.
  std::vector<std::string> t = {
      Sent(1, 0, R"({"op":"put","key":"a","value":"x"})"),
      Sent(3, 1, R"({"op":"get","key":"a"})"),
      Recv(4, 1, R"({"value":null})"),
      Sent(5, 1, R"({"op":"get","key":"a"})"),
      Recv(6, 1, R"({"value":"x"})"),
  };
  EXPECT_EQ(CheckLines(spec, t), Verdict::Kind::kAccept);
  t.push_back(Sent(7, 1, R"({"op":"get","key":"a"})"));
  t.push_back(Recv(8, 1, R"({"value":null})"));
  EXPECT_EQ(CheckLines(spec, t), Verdict::Kind::kReject);
}

TEST(ManyPendingRequests, TimedOutWritesDoNotBlowUp) {
  // 40 writes that are never answered, then reads: just-in-time
  // linearization keeps this cheap.
  auto spec = Shipped("kv.dspec");
  std::vector<std::string> t;
  int label = 1;
  for (int i = 0; i < 40; ++i) {
    t.push_back(Sent(label, i, absl::StrCat(R"({"op":"append","key":"k","value":"a"})")));
    label += 2;
  }
  for (int i = 0; i < 5; ++i) {
    t.push_back(Sent(label, 100, R"({"op":"get","key":"k"})"));
    t.push_back(
        Recv(label + 1, 100, absl::StrCat(R"({"value":")", std::string(static_cast<size_t>(i * 3 + 1), 'a'), "\"}")));
    label += 2;
  }
  CheckerStats st;
  auto trace = ParseTrace("t", absl::StrJoin(t, "\n"));
  ASSERT_TRUE(trace.ok());
  auto v = CheckTrace(spec, *trace, CheckerOptions{}, &st);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->kind, Verdict::Kind::kAccept);
  EXPECT_LT(st.handler_runs, 20000u);
}

TEST(FrontierBound, ExceededIsInconclusiveNeverAccept) {
  auto spec = Shipped("kv.dspec");
  std::vector<std::string> t;
  int label = 1;
  for (int i = 0; i < 12; ++i) {
    t.push_back(Sent(label, i, absl::StrCat(R"({"op":"put","key":"k","value":")", i, "\"}")));
    label += 2;
  }
  t.push_back(Sent(label, 50, R"({"op":"get","key":"k"})"));
  t.push_back(Recv(label + 1, 50, R"({"value":"zzz"})"));
  auto trace = ParseTrace("t", absl::StrJoin(t, "\n"));
  ASSERT_TRUE(trace.ok());
  CheckerOptions opts;
  opts.max_frontier = 50;
  auto v = CheckTrace(spec, *trace, opts);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->kind, Verdict::Kind::kInconclusive);
  EXPECT_NE(v->message.find("frontier"), std::string::npos);
}

TEST(ClosedConnections, LostRequestsMayStillTakeEffect) {
  auto spec = Shipped("kv.dspec");
  std::vector<std::string> t = {
      Sent(1, 0, R"({"op":"put","key":"a","value":"x"})"),
      R"({"event":"closed","conn":0})",
      Sent(3, 0, R"({"op":"get","key":"a"})"),
      Recv(4, 0, R"({"value":"x"})"),
  };
  EXPECT_EQ(CheckLines(spec, t), Verdict::Kind::kAccept);
}

TEST(SpecErrors, AssertFailureIsReportedAsSpecError) {
  auto spec = Load("bad.dspec", R"(
spec bad;
var n = 0;
on recv q from c {
  n = n + 1;
  assert n < 2;
  send c { ok: true };
}
)");
  Verdict v;
  EXPECT_EQ(
      CheckLines(spec, {Sent(1, 0, "{}"), Recv(2, 0, R"({"ok":true})"), Sent(3, 0, "{}"), Recv(4, 0, R"({"ok":true})")},
                 "tcp", &v),
      Verdict::Kind::kSpecError);
  EXPECT_NE(v.message.find("bad.dspec:6:3"), std::string::npos) << v.message;
}

}  // namespace
}  // namespace dualswarm::check
