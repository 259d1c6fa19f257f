// Repetition (engine/harness/repetition.h): an input sent several times
// over, a run of that folded back onto the input, the requests a race
// involves, and `repeat` in a counterexample file.
#include "engine/harness/repetition.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "engine/harness/counterexample.h"
#include "engine/ir/jexpr.h"
#include "gtest/gtest.h"

namespace dualswarm::harness {
namespace {

using check::Observation;
using ir::Value;

InputItem Request(int conn, const std::string& method, const std::string& path, std::vector<int> after = {}) {
  InputItem item;
  item.conn = conn;
  item.jexpr = Value::Map({{"method", Value::String(method)}, {"path", Value::String(path)}});
  item.after = std::move(after);
  return item;
}

// A reference to the entity-tag of the response labelled `label`.
Value EtagOf(int64_t label) {
  ir::JRef ref;
  ref.label = label;
  ref.path = *ir::ParseJPath("@headers@etag");
  return ir::MakeHole(ref, nullptr);
}

int64_t RefLabel(const InputItem& item) {
  const Value* hole = item.jexpr.Find("if-match");
  return hole ? ir::ParseJRef(hole->Find("$ref")->as_string())->label : -1;
}

// PUT /a; then DELETE /a (if-match: the PUT's tag) and PUT /a at once.
std::vector<InputItem> Core() {
  std::vector<InputItem> core = {Request(0, "PUT", "/a"), Request(1, "DELETE", "/a", {0}), Request(0, "PUT", "/a")};
  core[1].jexpr = core[1].jexpr.Set("if-match", EtagOf(2));
  return core;
}

TEST(Repetition, RoundsFollowEachOtherAndKeepTheirOwnReferences) {
  const std::vector<InputItem> rep = Repeated(Core(), 3);
  ASSERT_EQ(rep.size(), 9u);
  for (int round = 0; round < 3; ++round) {
    const size_t base = 3 * static_cast<size_t>(round);
    EXPECT_EQ(rep[base].conn, 0);
    EXPECT_EQ(rep[base + 1].jexpr.Find("method")->as_string(), "DELETE");
    // The DELETE names its own round's PUT response (label 2k+2).
    EXPECT_EQ(RefLabel(rep[base + 1]), 2 * static_cast<int64_t>(base) + 2);
    EXPECT_EQ(rep[base + 1].after, std::vector<int>{static_cast<int>(base)});
    EXPECT_TRUE(rep[base + 2].after.empty()) << "the race stays a race";
  }
  // A round starts once every response of the one before has arrived.
  EXPECT_EQ(rep[3].after, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(rep[6].after, (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(Repeated(Core(), 1), Core());
}

Observation Obs(Observation::Kind kind, int64_t label, int64_t conn) {
  Observation o;
  o.kind = kind;
  o.label = label;
  o.conn = conn;
  o.msg = Value::Map({{"method", Value::String("PUT")}, {"path", Value::String("/a")}});
  return o;
}

TEST(Repetition, ARunIsFoldedOntoTheRoundThatFailed) {
  // Rounds 0 and 1 of 3 sent in full; round 1's third request (label 11)
  // is rejected.
  const std::vector<InputItem> rep = Repeated(Core(), 3);
  RerunOutcome run;
  run.sent.assign(rep.begin(), rep.begin() + 6);
  for (int64_t l = 1; l <= 12; l += 2) {
    run.trace.push_back(Obs(Observation::Kind::kSent, l, 0));
    run.trace.push_back(Obs(Observation::Kind::kReceived, l + 1, 0));
  }
  run.verdict.kind = "safety";
  run.verdict.label = 12;
  run.verdict.reason = "no execution explains response label 12 on conn 0 (not label 120)";
  EXPECT_EQ(FoldRepeated(3, &run), 1);
  EXPECT_EQ(run.round, 1);
  EXPECT_EQ(run.verdict.label, 6);
  EXPECT_EQ(run.verdict.reason, "no execution explains response label 6 on conn 0 (not label 120)");
  ASSERT_EQ(run.trace.size(), 6u);
  EXPECT_EQ(run.trace.front().label, 1);
  EXPECT_EQ(run.trace.back().label, 6);
  // Round 1 may have needed any request of round 0, under the core's own
  // waits: nothing of what was sent replaces the core.
  EXPECT_TRUE(run.sent.empty());
  // A failure in round 0 keeps what round 0 sent up to it.
  RerunOutcome first;
  first.sent.assign(rep.begin(), rep.begin() + 2);
  first.trace = {Obs(Observation::Kind::kSent, 1, 0), Obs(Observation::Kind::kReceived, 2, 0),
                 Obs(Observation::Kind::kSent, 3, 1), Obs(Observation::Kind::kReceived, 4, 1)};
  first.verdict.kind = "safety";
  first.verdict.label = 4;
  EXPECT_EQ(FoldRepeated(3, &first), 0);
  EXPECT_EQ(first.sent.size(), 2u);
  EXPECT_EQ(first.trace.size(), 4u);
  EXPECT_EQ(first.verdict.label, 4);
}

TEST(Repetition, TheRaceWindowIsTheFailingRequestItsOverlapAndItsSetup) {
  // 0 PUT /a, 1 GET /b, 2 PUT /a, 3 GET /a (waits for 0-2), 4 DELETE /a and
  // 5 PUT /a at once (5 is rejected), 6 GET /a after 4's response only:
  // 5 is still outstanding when 6 is sent.
  std::vector<InputItem> in = {Request(0, "PUT", "/a"),         Request(1, "GET", "/b"),
                               Request(2, "PUT", "/a"),         Request(0, "GET", "/a", {0, 1, 2}),
                               Request(1, "DELETE", "/a", {3}), Request(2, "PUT", "/a"),
                               Request(1, "GET", "/a", {4})};
  const std::vector<InputItem> window = RaceWindow(in, 5, 2, 10);
  std::vector<std::string> got;
  for (const auto& item : window)
    got.push_back(item.jexpr.Find("method")->as_string() + " " + item.jexpr.Find("path")->as_string());
  // The DELETE overlapped it, the GET after it too; two setup requests on
  // /a before the DELETE, and the first request on /a (which made it: on
  // a fresh server the window's PUTs would otherwise race to create it);
  // nothing on /b.
  EXPECT_EQ(got, (std::vector<std::string>{"PUT /a", "PUT /a", "GET /a", "DELETE /a", "PUT /a", "GET /a"}));
  const std::vector<InputItem> three = RaceWindow(in, 5, 2, 3);
  ASSERT_EQ(three.size(), 3u) << "at most max_size, the latest kept";
  EXPECT_EQ(three[0].jexpr, in[0].jexpr) << "and the first request on the resource";
  EXPECT_EQ(three[1].jexpr, in[5].jexpr);
  EXPECT_TRUE(RaceWindow(in, 9, 2, 10).empty());
}

TEST(Repetition, ACounterexampleKeepsItsRoundsWithinTheBound) {
  Counterexample cx;
  cx.spec_name = "s";
  cx.connections = 2;
  cx.input = Core();
  cx.repeat = 40;
  cx.failed_round = 7;
  auto back = CounterexampleFromJson(CounterexampleToJson(cx));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->repeat, 40);
  EXPECT_EQ(back->failed_round, 7);
  std::string text = CounterexampleToJson(cx);
  text.replace(text.find("\"repeat\":40"), 11, "\"repeat\":99999");
  auto bad = CounterexampleFromJson(text);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "repeat must be 1 to 10000")) << bad.status();
  // Rounds that add up to more than a million requests are refused too.
  cx.input.assign(200, Request(0, "GET", "/a"));
  cx.repeat = 9000;
  auto huge = CounterexampleFromJson(CounterexampleToJson(cx));
  ASSERT_FALSE(huge.ok());
  EXPECT_TRUE(absl::StrContains(huge.status().message(), "exceed 1000000 requests")) << huge.status();
  cx.repeat = 1;
  EXPECT_FALSE(absl::StrContains(CounterexampleToJson(cx), "repeat")) << "absent for an input sent once";
}

}  // namespace
}  // namespace dualswarm::harness
