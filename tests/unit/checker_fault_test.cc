// A spec's `on fault` handler: each fault event of a trace is one atomic
// step of the server, taken after every request answered before the event
// and before every request sent after it (docs/checker.md: faults).
// Hand-written traces pin the ordering; simulated traces with faults are
// always accepted (soundness) and still rejected with a read of a value
// nobody wrote; a spec without the handler judges the same traces as if
// the faults were not there.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/check/checker.h"
#include "engine/check/observation.h"
#include "engine/harness/simulator.h"
#include "engine/harness/workloads.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"
#include "tests/common/shipped_spec.h"

namespace dualswarm {
namespace {

using check::Observation;
using check::Verdict;
using ir::Value;

// specs/kv.dspec whose store is lost when node 0 is killed (a primary that
// keeps it in memory only).
std::shared_ptr<const lang::Spec> VolatileKv() {
  std::string source =
      ShippedSource("kv.dspec") +
      "\non fault f {\n  if f.fault == \"kill\" && f.get(\"node\") == some(0) {\n    store = {};\n  }\n}\n";
  auto spec = lang::LoadSpec("kv_volatile.dspec", source);
  EXPECT_TRUE(spec.ok()) << spec.status();
  return spec.ok() ? *spec : nullptr;
}

Verdict::Kind Check(const std::shared_ptr<const lang::Spec>& spec, const std::vector<std::string>& lines) {
  auto trace = check::ParseTrace("t.jsonl", absl::StrJoin(lines, "\n"));
  EXPECT_TRUE(trace.ok()) << trace.status();
  if (!trace.ok()) return Verdict::Kind::kSpecError;
  auto v = check::CheckTrace(spec, *trace, check::CheckerOptions());
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? v->kind : Verdict::Kind::kSpecError;
}

const char kPutA[] = R"({"label":1,"conn":0,"dir":"sent","msg":{"op":"put","key":"x","value":"a"}})";
const char kPutAOk[] = R"({"label":2,"conn":0,"dir":"received","msg":{"ok":true}})";
const char kKill[] = R"({"event":"fault","fault":"kill","node":0})";
const char kRestart[] = R"({"event":"fault","fault":"restart","node":0})";
const char kGet[] = R"({"label":3,"conn":1,"dir":"sent","msg":{"op":"get","key":"x"}})";
const char kGotNull[] = R"({"label":4,"conn":1,"dir":"received","msg":{"value":null}})";
const char kGotA[] = R"({"label":4,"conn":1,"dir":"received","msg":{"value":"a"}})";

TEST(FaultHandler, AWriteAnsweredBeforeTheFaultIsLostByIt) {
  const std::vector<std::string> t = {kPutA, kPutAOk, kKill, kRestart, kGet, kGotNull};
  EXPECT_EQ(Check(VolatileKv(), t), Verdict::Kind::kAccept);
  EXPECT_EQ(Check(Shipped("kv.dspec"), t), Verdict::Kind::kReject);  // no handler: the write must survive
  // The other node's kill loses nothing.
  const std::vector<std::string> other = {kPutA, kPutAOk, R"({"event":"fault","fault":"kill","node":1})", kGet,
                                          kGotNull};
  EXPECT_EQ(Check(VolatileKv(), other), Verdict::Kind::kReject);
}

TEST(FaultHandler, AWriteSentAfterTheFaultIsNotLostByIt) {
  EXPECT_EQ(Check(VolatileKv(), {kKill, kPutA, kPutAOk, kGet, kGotNull}), Verdict::Kind::kReject);
  EXPECT_EQ(Check(VolatileKv(), {kKill, kPutA, kPutAOk, kGet, kGotA}), Verdict::Kind::kAccept);
}

TEST(FaultHandler, AWriteInFlightAcrossTheFaultMayGoEitherSideButNotBoth) {
  EXPECT_EQ(Check(VolatileKv(), {kPutA, kKill, kPutAOk, kGet, kGotNull}), Verdict::Kind::kAccept);
  EXPECT_EQ(Check(VolatileKv(), {kPutA, kKill, kPutAOk, kGet, kGotA}), Verdict::Kind::kAccept);
  // Once a read saw it after the fault, a later read cannot miss it.
  EXPECT_EQ(Check(VolatileKv(), {kPutA, kKill, kPutAOk, kGet, kGotA,
                                 R"({"label":5,"conn":1,"dir":"sent","msg":{"op":"get","key":"x"}})",
                                 R"({"label":6,"conn":1,"dir":"received","msg":{"value":null}})"}),
            Verdict::Kind::kReject);
}

// A spec checked key by key: a fault is a step of every key's search,
// also of a key first asked about after it.
TEST(FaultHandler, PartsCreatedAfterAFaultTakeItToo) {
  auto spec = lang::LoadSpec("readonly.dspec", R"(spec readonly;
use json;
var store: map<string, string> = {};
var readonly: bool = false;
partition q => q.key;
on recv q from c {
  if q.op == "put" {
    if readonly {
      send c { ok: false };
    } else {
      store = store.set(q.key, q.value);
      send c { ok: true };
    }
  } else {
    send c { value: or_else(store.get(q.key), "") };
  }
}
on fault f {
  if f.fault == "readonly" { readonly = true; }
}
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const char kPutX[] = R"({"label":1,"conn":0,"dir":"sent","msg":{"op":"put","key":"x","value":"a"}})";
  const char kReadonly[] = R"({"event":"fault","fault":"readonly"})";
  EXPECT_EQ(Check(*spec, {kPutX, kPutAOk, kReadonly, kGet, kGotA}), Verdict::Kind::kAccept);
  EXPECT_EQ(Check(*spec, {kReadonly, kPutX, kPutAOk}), Verdict::Kind::kReject);  // x's first request
  EXPECT_EQ(Check(*spec, {kReadonly, kPutX, R"({"label":2,"conn":0,"dir":"received","msg":{"ok":false}})"}),
            Verdict::Kind::kAccept);
}

// The same with kv.dspec: a kill loses the keys written before it.
TEST(FaultHandler, AFaultReachesEveryKeysSearch) {
  const std::vector<std::string> t = {
      R"({"label":1,"conn":0,"dir":"sent","msg":{"op":"put","key":"y","value":"b"}})",
      R"({"label":2,"conn":0,"dir":"received","msg":{"ok":true}})",
      kKill,
      R"({"label":3,"conn":1,"dir":"sent","msg":{"op":"get","key":"z"}})",
      R"({"label":4,"conn":1,"dir":"received","msg":{"value":null}})",
      R"({"label":5,"conn":1,"dir":"sent","msg":{"op":"get","key":"y"}})",
      R"({"label":6,"conn":1,"dir":"received","msg":{"value":"b"}})",
  };
  EXPECT_EQ(Check(VolatileKv(), t), Verdict::Kind::kReject);  // y was lost at the kill
  EXPECT_EQ(Check(Shipped("kv.dspec"), t), Verdict::Kind::kAccept);
}

// The rejection names the fault's step in the server order (a negative
// label: -3 for the trace's first fault, -5 for the second, ...).
TEST(FaultHandler, ARejectionShowsTheFaultInItsServerOrder) {
  auto trace = check::ParseTrace("t.jsonl", absl::StrJoin({kPutA, kPutAOk, kKill, kGet, kGotA}, "\n"));
  ASSERT_TRUE(trace.ok());
  auto v = check::CheckTrace(VolatileKv(), *trace, check::CheckerOptions());
  ASSERT_TRUE(v.ok());
  ASSERT_EQ(v->kind, Verdict::Kind::kReject);
  ASSERT_FALSE(v->reasons.empty());
  EXPECT_EQ(v->reasons[0].server_order, (std::vector<int64_t>{1, -3, 3})) << check::FormatVerdict(*v);
}

// Simulated traces in which the spec's own server took each fault at the
// moment of its event are accepted, for every branch order and with
// crashed clients; with a read of a value nobody wrote, rejected.
TEST(FaultHandler, SimulatedTracesWithFaultsAreAccepted) {
  auto spec = VolatileKv();
  ASSERT_NE(spec, nullptr);
  harness::Rng rng(5);
  int rejected = 0, lossy = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    harness::SimOptions so;
    so.seed = 31000 + seed;
    so.requests = 50;
    so.connections = 1 + static_cast<int>(seed % 4);
    so.fault_probability = 0.04;
    so.faults = {Value::Map({{"fault", Value::String("kill")}, {"node", Value::Int(0)}}),
                 Value::Map({{"fault", Value::String("restart")}, {"node", Value::Int(0)}}),
                 Value::Map({{"fault", Value::String("pause")}, {"node", Value::Int(1)}})};
    if (seed % 3 == 0) so.crash_probability = 0.1;
    auto trace = harness::Simulate(*spec, harness::KvRequests({"a", "b", "c"}), so);
    ASSERT_TRUE(trace.ok()) << trace.status();
    for (check::BranchOrder order :
         {check::BranchOrder::kFirst, check::BranchOrder::kLast, check::BranchOrder::kRandom}) {
      check::CheckerOptions co;
      co.branch_order = order;
      co.seed = so.seed;
      auto v = check::CheckTrace(spec, *trace, co);
      ASSERT_TRUE(v.ok()) << v.status();
      ASSERT_EQ(v->kind, Verdict::Kind::kAccept) << "seed " << so.seed << ": " << check::FormatVerdict(*v);
    }
    auto durable = check::CheckTrace(Shipped("kv.dspec"), *trace, check::CheckerOptions());
    ASSERT_TRUE(durable.ok());
    lossy += durable->kind == Verdict::Kind::kReject;
    std::vector<Observation> bad = *trace;
    if (!harness::InjectUnwrittenRead(&bad, rng).ok()) continue;
    auto v = check::CheckTrace(spec, bad, check::CheckerOptions());
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->kind, Verdict::Kind::kReject) << "seed " << so.seed;
    ++rejected;
  }
  EXPECT_GE(rejected, 100);
  // The faults mattered: the spec without the handler rejects some of them.
  EXPECT_GE(lossy, 20);
}

// Faults times partitions is bounded: past the bound the check ends
// INCONCLUSIVE and names it.
TEST(FaultHandler, FaultStepsAreBounded) {
  std::vector<std::string> t;
  for (int k = 0; k < 6; ++k) {
    t.push_back(
        absl::StrCat(R"({"label":)", 2 * k + 1, R"(,"conn":0,"dir":"sent","msg":{"op":"get","key":"k)", k, R"("}})"));
    t.push_back(absl::StrCat(R"({"label":)", 2 * k + 2, R"(,"conn":0,"dir":"received","msg":{"value":null}})"));
    t.push_back(kKill);
  }
  auto trace = check::ParseTrace("t.jsonl", absl::StrJoin(t, "\n"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  check::CheckerOptions co;
  auto all = check::CheckTrace(VolatileKv(), *trace, co);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->kind, Verdict::Kind::kAccept) << check::FormatVerdict(*all);  // 6 keys x 6 kills: 36 steps
  co.max_fault_steps = 20;
  auto bounded = check::CheckTrace(VolatileKv(), *trace, co);
  ASSERT_TRUE(bounded.ok());
  EXPECT_EQ(bounded->kind, Verdict::Kind::kInconclusive);
  EXPECT_NE(bounded->message.find("limit: fault steps"), std::string::npos) << bounded->message;
}

TEST(FaultHandler, TheSimulatorRunsTheHandlerAndKeepsTheEvents) {
  auto spec = VolatileKv();
  ASSERT_NE(spec, nullptr);
  harness::SimOptions so;
  so.seed = 3;
  so.requests = 40;
  so.fault_probability = 0.1;
  auto trace = harness::Simulate(*spec, harness::KvRequests({"a"}), so);
  ASSERT_TRUE(trace.ok()) << trace.status();
  int faults = 0;
  for (const Observation& o : *trace) faults += o.kind == Observation::Kind::kFault;
  EXPECT_GE(faults, 1);
}

}  // namespace
}  // namespace dualswarm
