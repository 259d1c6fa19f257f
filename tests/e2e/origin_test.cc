// The tester playing clients and origin at once (docs/spec-language.md:
// intermediaries) against the reference relay (tests/suts/relay_server.cc)
// and specs/examples/relay.dspec: the correct relay passes, with one and
// with several pooled origin connections, and each mutant is found; one is
// shrunk and replayed through the CLI.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/check/checker.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"
#include "tests/common/job_runs.h"
#include "tests/common/processes.h"
#include "tests/common/shipped_spec.h"
#include "workers/runner/runner.h"

namespace dualswarm::workers {
namespace {

std::string RefRelay(int mutant, int origin_connections) {
  return absl::StrCat(DS_REF_RELAY, " --port {port} --origin-port {origin_port} --origin-connections ",
                      origin_connections, " --mutant ", mutant);
}

JobOptions RelayJob(int mutant, int origin_connections, uint64_t seed, uint64_t steps) {
  JobOptions o = testing::IntermediaryJobOptionsFor(RefRelay(mutant, origin_connections), "jsonl", seed, steps);
  return o;
}

TEST(Intermediaries, TheCorrectRelayPassesWithOneOrSeveralOriginConnections) {
  auto spec = Shipped("examples/relay.dspec");
  ASSERT_NE(spec, nullptr);
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const int origin_connections = 1 + static_cast<int>(seed % 3);
    auto r = RunJob(spec, RelayJob(0, origin_connections, seed, 1000));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
    EXPECT_EQ(r->received, 1000u);
    size_t origin_requests = 0;
    for (const check::Observation& o : r->trace)
      origin_requests += o.side == check::Side::kOrigin && o.kind == check::Observation::Kind::kReceived;
    EXPECT_EQ(origin_requests, 1000u) << "seed " << seed << ": every request goes through the origin";
  }
}

TEST(Intermediaries, EveryRelayMutantIsFound) {
  auto spec = Shipped("examples/relay.dspec");
  ASSERT_NE(spec, nullptr);
  for (int mutant = 1; mutant <= 5; ++mutant) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      auto r = RunJob(spec, RelayJob(mutant, 2, seed, 1000));
      ASSERT_TRUE(r.ok()) << r.status();
      // Mutant 5 answers nothing after a request whose id starts with q:
      // found as liveness although the tester's own origin time is not
      // counted against a relay (TheTestersOwnSlowOriginIsNotBlamedOnTheRelay).
      EXPECT_EQ(r->outcome, mutant == 5 ? Outcome::kLiveness : Outcome::kSafety)
          << "mutant " << mutant << ", seed " << seed << ": " << testing::DescribeJobResult(*r);
    }
  }
}

// The tester is the relay's origin: while its checker works (here a spec
// whose client handler costs ~0.1 s, with a 0.2 s timeout), the requests
// the relay sends the origin wait unread and unanswered, and so do the
// clients' responses behind them. That time is the tester's, not the
// relay's: a correct relay is never blamed for it.
TEST(Intermediaries, TheTestersOwnSlowOriginIsNotBlamedOnTheRelay) {
  auto spec = lang::LoadSpec("slow_relay.dspec", R"SPEC(
spec slow_relay;
use json;
fn spin(n) { if n == 0 { 0 } else { spin(n - 1) + spin(n - 1) } }

var count: map<string, int> = {};          // str(c) -> requests seen on c
var pending: map<string, list<int>> = {};  // str(c) -> numbers not yet answered, oldest first
var answers: map<string, any> = {};        // str(c) + "/" + str(n) -> what c gets for n

on recv q from c {                                   // the client role (the default)
  let cost = spin(18);
  let n = or_else(count.get(str(c)), 0);
  count = count.set(str(c), n + 1);
  pending = pending.set(str(c), push(or_else(pending.get(str(c)), []), n));
  send origin({c: c, n: n}) { op: q.op, id: q.id };  // forwarded as is
}

on recv r from t: origin {                           // the origin's answer to the request tagged t
  answers = answers.set(str(t.c) + "/" + str(t.n), { v: r.v });
  flush(t.c);
}

fn flush(c) {                                        // answer c's oldest requests whose answers are in
  match get(pending, str(c)) {
    some(l) => if len(l) > 0 && has(answers, str(c) + "/" + str(l[0])) {
      let key = str(c) + "/" + str(l[0]);
      send c answers[key];
      answers = answers.remove(key);                 // answered: forgotten (the state stays small)
      pending = pending.set(str(c), drop(l, 1));
      flush(c);
    },
    none => null,
  }
}

gen request { { op: "get", id: random_word(6) } }
gen answer(q): origin { { v: random_word(4) } }
)SPEC");
  ASSERT_TRUE(spec.ok()) << spec.status();
  JobOptions o = RelayJob(0, 2, 1, 24);
  o.response_timeout_ms = 200;
  auto r = RunJob(*spec, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, Outcome::kPassed) << testing::DescribeJobResult(*r);
  EXPECT_EQ(r->received, 24u);
  // The checker really was slower than the timeout between observations.
  EXPECT_GT(r->stats.check_seconds, 2.0);
  EXPECT_GT(r->stats.max_observe_seconds, 0.1);
}

TEST(Intermediaries, ADroppedFieldIsShrunkToOneRequestByTheCli) {
  auto r = testing::RunCommand(
      {DUALSWARM_CLI, "test", "--spec", std::string(DUALSWARM_SOURCE_DIR) + "/specs/examples/relay.dspec", "--launch",
       RefRelay(2, 2), "--origins", "1", "--seed", "1", "--steps", "1000", "--shrink-time", "20"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "the SUT sent on origin conn")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "id: spec expects field 'id'")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "input: 1 requests")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "5 of 5 reproduced")) << r.out;
}

TEST(Intermediaries, TheOriginRoleAndOriginEndpointsGoTogether) {
  auto relay = Shipped("examples/relay.dspec");
  JobOptions without = RelayJob(0, 1, 1, 10);
  without.origins = 0;
  auto r = RunJob(relay, without);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "--origins N")) << r.status();
  JobOptions kv = testing::IntermediaryJobOptionsFor(absl::StrCat(DS_REF_KV, " --port {port}"), "jsonl", 1, 10);
  r = RunJob(Shipped("kv.dspec"), kv);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "has no origin role")) << r.status();
}

}  // namespace
}  // namespace dualswarm::workers
