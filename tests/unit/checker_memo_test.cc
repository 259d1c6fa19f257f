// The checker's memo (engine/check/memo.h) is exact: on random small traces
// — correct ones, corrupted ones, ones with connections closed while
// requests were in flight (which makes those requests optional, the case
// the memo's dominance and interchangeability rules prune; the one-key kv
// workload repeats requests, so equal requests of crashed clients occur),
// under the tcp and the sync network — the verdict with the memo, the step
// cache and the skipping of inert optional steps is the verdict without
// any of them (and every memo key derived from a parent's equals the key
// computed from scratch: CheckerOptions::verify_memo_keys); and the search's provenance repair (search.h), which only
// reorders what the search explores, changes no verdict either. Plus the
// cases the memo exists for: never-answered requests cost almost nothing.
#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/check/checker.h"
#include "engine/check/memo.h"
#include "engine/harness/simulator.h"
#include "engine/harness/workloads.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"
#include "tests/common/shipped_spec.h"

namespace dualswarm {
namespace {

using check::Observation;
using ir::Value;

Value Rec(std::vector<std::pair<std::string, Value>> e) { return Value::Map(std::move(e)); }

// A small simulated trace's options: `requests` over 3 to 5 connections,
// 1 or 2 in flight on each, by seed.
harness::SimOptions SmallTrace(uint64_t seed, int requests) {
  harness::SimOptions so;
  so.seed = seed;
  so.requests = requests;
  so.connections = 3 + static_cast<int>(seed % 3);
  so.max_in_flight = 1 + static_cast<int>(seed % 2);
  return so;
}

// Closes a random connection right after one of its requests was sent and
// drops everything later on it: that request and the ones pipelined before
// it stay unanswered, as when a client crashes.
std::vector<Observation> CrashOneClient(const std::vector<Observation>& trace, harness::Rng& rng) {
  std::vector<size_t> sends;
  for (size_t i = 0; i < trace.size(); ++i)
    if (trace[i].kind == Observation::Kind::kSent) sends.push_back(i);
  if (sends.empty()) return trace;
  const size_t at = sends[rng() % sends.size()];
  const int64_t conn = trace[at].conn;
  std::vector<Observation> out;
  for (size_t i = 0; i < trace.size(); ++i) {
    if (i > at && trace[i].conn == conn && trace[i].kind != Observation::Kind::kClosed) continue;
    out.push_back(trace[i]);
    if (i == at) {
      Observation c;
      c.kind = Observation::Kind::kClosed;
      c.conn = conn;
      out.push_back(c);
    }
  }
  return out;
}

// Replaces one received value with one of a few others (often a violation).
std::vector<Observation> CorruptOne(std::vector<Observation> trace, harness::Rng& rng) {
  std::vector<size_t> received;
  for (size_t i = 0; i < trace.size(); ++i)
    if (trace[i].kind == Observation::Kind::kReceived) received.push_back(i);
  if (received.empty()) return trace;
  Observation& o = trace[received[rng() % received.size()]];
  static const std::vector<Value> values = {Value::Null(), Value::String("x"), Value::String("yy"), Value::Bool(true),
                                            Value::Bool(false)};
  ir::MapEntries e = o.msg.as_map();
  if (!e.empty()) e[0].second = values[rng() % values.size()];
  o.msg = Value::Map(std::move(e));
  return trace;
}

// `probe_after_work`: 1 runs the crashed-request probe whenever the search
// backtracks, whatever the cause (search.h); the reference run (no memo)
// never probes.
check::Verdict::Kind Judge(std::shared_ptr<const lang::Spec> spec, const std::vector<Observation>& trace, bool use_memo,
                           check::BranchOrder order = check::BranchOrder::kFirst, const std::string& network = "tcp",
                           uint64_t probe_after_work = check::CheckerOptions{}.probe_after_work) {
  check::CheckerOptions co;
  co.network = network;
  co.use_memo = use_memo;
  co.use_step_cache = use_memo;  // the reference run reuses nothing
  co.probe_after_work = use_memo ? probe_after_work : 0;
  co.probe_any_stall = probe_after_work == 1;
  co.verify_memo_keys = use_memo;  // a key derived from its parent's must equal the one computed
  co.branch_order = order;
  co.max_steps = 2'000'000;
  auto v = check::CheckTrace(spec, trace, co);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? v->kind : check::Verdict::Kind::kSpecError;
}

// Feeds the trace to a checker made with `co`, one observation at a time
// (or, with `hold`, all before it explains any, as CheckTrace does), and
// finishes it: the verdict, and the checker's stats.
check::Verdict::Kind Feed(std::shared_ptr<const lang::Spec> spec, const std::vector<Observation>& trace,
                          const check::CheckerOptions& co, bool hold, check::CheckerStats* stats) {
  auto checker = check::Checker::Create(spec, co);
  EXPECT_TRUE(checker.ok()) << checker.status();
  if (!checker.ok()) return check::Verdict::Kind::kSpecError;
  if (hold) (*checker)->Hold();
  for (const auto& o : trace) {
    absl::Status s = (*checker)->Observe(o);
    EXPECT_TRUE(s.ok()) << s;
    if ((*checker)->verdict().kind != check::Verdict::Kind::kAccept) break;
  }
  (*checker)->Finish();
  *stats = (*checker)->stats();
  return (*checker)->verdict().kind;
}

// One observation at a time, as the online tester feeds them (CheckTrace
// holds the checker over the whole trace instead). `restart_after_work` 1
// restarts the search (search.h) at every stall, from `restart_back`
// observations back; `defer` stops it there until more has arrived.
struct Incremental {
  uint64_t restart_after_work = check::CheckerOptions{}.restart_after_work;
  size_t restart_back = 64;
  bool defer = false;
  uint64_t yield_after_work = check::CheckerOptions{}.yield_after_work;  // with defer
};
check::Verdict::Kind JudgeIncrementally(std::shared_ptr<const lang::Spec> spec, const std::vector<Observation>& trace,
                                        const std::string& network, Incremental how = {}, uint64_t* restarts = nullptr,
                                        uint64_t* yields = nullptr) {
  check::CheckerOptions co;
  co.network = network;
  co.max_steps = 2'000'000;
  co.restart_after_work = how.restart_after_work;
  co.restart_back_observations = how.restart_back;
  co.defer_when_stalled = how.defer;
  co.yield_after_work = how.yield_after_work;
  co.verify_memo_keys = true;
  check::CheckerStats stats;
  const check::Verdict::Kind v = Feed(spec, trace, co, /*hold=*/false, &stats);
  if (restarts != nullptr) *restarts += stats.restarts;
  if (yields != nullptr) *yields += stats.yields;
  return v;
}

TEST(Memo, VerdictWithMemoEqualsVerdictWithout) {
  // One key, so every request touches the same state and orders matter.
  auto spec = Shipped("kv.dspec");
  const harness::RequestFn gen = harness::KvRequests({"k"});
  int compared = 0, rejected = 0, with_closed = 0;
  uint64_t restarts = 0, yields = 0;
  for (uint64_t seed = 1; seed <= 600; ++seed) {
    harness::SimOptions so = SmallTrace(seed, 8 + static_cast<int>(seed % 5));
    // Odd seeds: the simulator's own crashed clients too (pipelined ones
    // leave two or more requests unanswered on a closed connection).
    if (seed % 2 == 1) so.crash_probability = 0.2;
    auto trace = harness::Simulate(*spec, gen, so);
    ASSERT_TRUE(trace.ok()) << trace.status();
    harness::Rng rng(seed);
    std::vector<Observation> t = *trace;
    if (seed % 2 == 0) {
      t = CrashOneClient(t, rng);
      if (seed % 4 == 0) t = CrashOneClient(t, rng);
      ++with_closed;
    }
    if (seed % 3 != 0) t = CorruptOne(t, rng);
    // Every fifth trace under the sync model, where a request left
    // unprocessed holds up later ones (no dominance there).
    const std::string network = seed % 5 == 0 ? "sync" : "tcp";
    const auto without = Judge(spec, t, false, check::BranchOrder::kFirst, network);
    ASSERT_NE(without, check::Verdict::Kind::kInconclusive) << "seed " << seed;
    // Every exploration order: the memo prunes whatever was taken up
    // first, so a wrong pruning rule shows under some order.
    check::Verdict::Kind with = without;
    for (check::BranchOrder order :
         {check::BranchOrder::kFirst, check::BranchOrder::kLast, check::BranchOrder::kRandom}) {
      with = Judge(spec, t, true, order, network);
      ASSERT_EQ(with, without) << "seed " << seed << " branch order " << check::BranchOrderName(order)
                               << ": memo changed the verdict";
    }
    ASSERT_EQ(Judge(spec, t, true, check::BranchOrder::kFirst, network, /*probe_after_work=*/1), without)
        << "seed " << seed << ": the crashed-request probe changed the verdict";
    ASSERT_EQ(JudgeIncrementally(spec, t, network), without)
        << "seed " << seed << ": one observation at a time changed the verdict";
    // Restarts at every stall, from the start or from 2 observations back,
    // at once or deferred: each forgets the memo keys of the frames it
    // discards, which a wrong rule would turn into a wrong verdict.
    for (Incremental how : {Incremental{1, 1000, false}, Incremental{1, 2, false}, Incremental{1, 2, true}})
      ASSERT_EQ(JudgeIncrementally(spec, t, network, how, &restarts), without)
          << "seed " << seed << ": restarts (back " << how.restart_back << ", deferred " << how.defer
          << ") changed the verdict";
    // Online, every Observe stopping after one memo lookup and going on in
    // the next (with the product's restarts, and with one at every stall).
    for (Incremental how :
         {Incremental{.defer = true, .yield_after_work = 1},
          Incremental{.restart_after_work = 1, .restart_back = 2, .defer = true, .yield_after_work = 1}})
      ASSERT_EQ(JudgeIncrementally(spec, t, network, how, &restarts, &yields), without)
          << "seed " << seed << ": yielding (restarts after " << how.restart_after_work << ") changed the verdict";
    rejected += with == check::Verdict::Kind::kReject;
    ++compared;
  }
  EXPECT_EQ(compared, 600);
  // The corpus must contain both verdicts, or the comparison proves little.
  EXPECT_GT(rejected, 60);
  EXPECT_LT(rejected, 540);
  EXPECT_EQ(with_closed, 300);
  EXPECT_GT(restarts, 600u) << "the restart comparisons restarted too seldom to test them";
  EXPECT_GT(yields, 6000u) << "the yielding comparisons yielded too seldom to test them";
}

// The probe's crashed-request closures (crashed_closure.h) only change how
// it finds the states crashed requests lead to: on small register traces
// with crashed clients (reads, writes, cas: closures stay small, unlike
// appends), a probe at every backtrack gives the verdict of the exact
// search that never probes, and closures were used.
TEST(Memo, TheProbesCrashedRequestClosuresChangeNoVerdict) {
  auto spec = Shipped("kv.dspec");
  const harness::RequestFn gen = harness::RegisterRequests();
  int rejected = 0;
  uint64_t closure_states = 0, probes_run = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    harness::SimOptions so = SmallTrace(seed, 30 + static_cast<int>(seed % 30));
    so.crash_probability = 0.3;
    so.max_in_flight = 1;  // a crashed client leaves one request: the closures' case
    auto trace = harness::Simulate(*spec, gen, so);
    ASSERT_TRUE(trace.ok()) << trace.status();
    harness::Rng rng(seed);
    std::vector<Observation> t = CrashOneClient(CrashOneClient(*trace, rng), rng);
    if (seed % 4 != 0) t = CorruptOne(t, rng);
    // The exact search with the memo (exact: the test above), never probing.
    const auto without = Judge(spec, t, true, check::BranchOrder::kFirst, "tcp", /*probe_after_work=*/0);
    ASSERT_NE(without, check::Verdict::Kind::kInconclusive) << "seed " << seed;
    check::CheckerOptions co;
    co.probe_after_work = 1;
    co.probe_any_stall = true;
    co.verify_memo_keys = true;
    co.max_steps = 2'000'000;
    check::CheckerStats stats;
    auto with = check::CheckTrace(spec, t, co, &stats);
    ASSERT_TRUE(with.ok()) << with.status();
    ASSERT_EQ(with->kind, without) << "seed " << seed << ": " << check::FormatVerdict(*with);
    rejected += without == check::Verdict::Kind::kReject;
    closure_states += stats.closure_states;
    probes_run += stats.probes;
  }
  EXPECT_GT(rejected, 30);
  EXPECT_LT(rejected, 270);
  EXPECT_GT(closure_states, 1000u) << "the probes made too few children from closures to test them (" << probes_run
                                   << " probes)";
}

// Swaps the values two answered deqs got: a reordering the server may or
// may not have been able to produce (the provenance repair's case).
std::vector<Observation> SwapTwoDeqValues(std::vector<Observation> trace, harness::Rng& rng) {
  std::vector<size_t> items;
  for (size_t i = 0; i < trace.size(); ++i) {
    const Value* v = trace[i].kind == Observation::Kind::kReceived ? trace[i].msg.Find("value") : nullptr;
    if (v != nullptr && v->is_string()) items.push_back(i);
  }
  if (items.size() < 2) return trace;
  const size_t a = items[rng() % items.size()], b = items[rng() % items.size()];
  std::swap(trace[a].msg, trace[b].msg);
  return trace;
}

// The verdict on a queue trace with provenance repair on or off; offline,
// or fed one observation at a time restarting at every stall (from 2
// observations back, deferred or not), which discards repair frames too.
struct QueueRun {
  bool repair = true;
  check::BranchOrder order = check::BranchOrder::kFirst;
  bool online = false;
  bool defer = false;
};
check::Verdict::Kind JudgeQueue(std::shared_ptr<const lang::Spec> spec, const std::vector<Observation>& trace,
                                QueueRun run, uint64_t* repairs) {
  check::CheckerOptions co;
  co.repair_by_provenance = run.repair;
  co.branch_order = run.order;
  co.max_steps = 2'000'000;
  if (run.online) {
    co.restart_after_work = 1;
    co.restart_back_observations = 2;
    co.defer_when_stalled = run.defer;
  }
  check::CheckerStats stats;
  const check::Verdict::Kind v = Feed(spec, trace, co, /*hold=*/!run.online, &stats);
  *repairs += stats.repairs;
  return v;
}

TEST(Memo, ProvenanceRepairChangesNoVerdict) {
  auto spec = Shipped("queue.dspec");
  ASSERT_NE(spec, nullptr) << "specs/queue.dspec is needed";
  int rejected = 0;
  uint64_t repairs = 0, unused = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    harness::SimOptions so = SmallTrace(seed, 10 + static_cast<int>(seed % 7));
    if (seed % 3 == 1) so.crash_probability = 0.15;
    auto trace = harness::Simulate(*spec, harness::QueueRequests(0.6), so);
    ASSERT_TRUE(trace.ok()) << trace.status();
    harness::Rng rng(seed);
    std::vector<Observation> t = *trace;
    if (seed % 4 != 0) t = SwapTwoDeqValues(t, rng);
    if (seed % 5 == 0) t = CrashOneClient(t, rng);
    const auto reference = Judge(spec, t, /*use_memo=*/false);  // no memo: no repairs either
    ASSERT_NE(reference, check::Verdict::Kind::kInconclusive) << "seed " << seed;
    ASSERT_EQ(JudgeQueue(spec, t, {.repair = false}, &unused), reference) << "seed " << seed;
    for (QueueRun run : {QueueRun{}, QueueRun{.order = check::BranchOrder::kLast}, QueueRun{.online = true},
                         QueueRun{.online = true, .defer = true}})
      ASSERT_EQ(JudgeQueue(spec, t, run, &repairs), reference)
          << "seed " << seed << ": provenance repair changed the verdict (order " << check::BranchOrderName(run.order)
          << ", online " << run.online << ", deferred " << run.defer << ")";
    rejected += reference == check::Verdict::Kind::kReject;
  }
  EXPECT_GT(rejected, 30);
  EXPECT_LT(rejected, 270);
  EXPECT_GT(repairs, 300u) << "the comparison repaired too seldom to test the repair";
}

// n puts on n connections, each timed out and its connection closed, then a
// get that sees a value nobody wrote: every subset of the puts, in every
// order, fails. The dominance rule makes it a few hundred handler runs
// instead of n! (or 2^n with a plain memo).
std::vector<Observation> PendingPutsThenBadGet(int n) {
  std::vector<Observation> t;
  auto add = [&](Observation o) { t.push_back(std::move(o)); };
  int64_t label = 1;
  for (int i = 0; i < n; ++i, label += 2) {
    Observation o;
    o.kind = Observation::Kind::kSent;
    o.label = label;
    o.conn = i;
    o.msg = Rec(
        {{"op", Value::String("put")}, {"key", Value::String("x")}, {"value", Value::String(absl::StrCat("v", i))}});
    add(o);
  }
  for (int i = 0; i < n; ++i) {
    Observation o;
    o.kind = Observation::Kind::kTimeout;
    o.label = 1 + 2 * i;
    o.conn = i;
    add(o);
    Observation c;
    c.kind = Observation::Kind::kClosed;
    c.conn = i;
    add(c);
  }
  Observation get;
  get.kind = Observation::Kind::kSent;
  get.label = label;
  get.conn = n;
  get.msg = Rec({{"op", Value::String("get")}, {"key", Value::String("x")}});
  add(get);
  Observation r;
  r.kind = Observation::Kind::kReceived;
  r.label = label + 1;
  r.conn = n;
  r.msg = Rec({{"value", Value::String("nobody wrote this")}});
  add(r);
  return t;
}

// A spec whose server sends to a connection other than the request's:
// puts are relayed to the last connection that asked to watch. A key
// derived from its parent's must then change for that connection too.
constexpr char kRelaySpec[] = R"(spec relay;
use json;
var watcher = -1;
on recv q from c {
  if q.get("op") == some("watch") {
    watcher = c;
  } else {
    if watcher >= 0 { send watcher { event: q.value }; }
    send c { ok: true };
  }
}
)";

// Connection 0 watches; puts of "a" and "b" on connections 1 and 2 are
// answered; then connection 0 receives `event` (none when empty) as the
// answer to its watch.
std::vector<Observation> RelayTrace(const std::string& event) {
  std::vector<Observation> t;
  auto add = [&](Observation::Kind kind, int64_t label, int64_t conn, Value msg) {
    Observation o;
    o.kind = kind;
    o.label = label;  // a response's label is its request's + 1
    o.conn = conn;
    o.msg = std::move(msg);
    t.push_back(std::move(o));
  };
  add(Observation::Kind::kSent, 1, 0, Rec({{"op", Value::String("watch")}}));
  add(Observation::Kind::kSent, 3, 1, Rec({{"op", Value::String("put")}, {"value", Value::String("a")}}));
  add(Observation::Kind::kSent, 5, 2, Rec({{"op", Value::String("put")}, {"value", Value::String("b")}}));
  add(Observation::Kind::kReceived, 4, 1, Rec({{"ok", Value::Bool(true)}}));
  add(Observation::Kind::kReceived, 6, 2, Rec({{"ok", Value::Bool(true)}}));
  if (!event.empty()) add(Observation::Kind::kReceived, 2, 0, Rec({{"event", Value::String(event)}}));
  return t;
}

TEST(Memo, KeysDerivedAcrossConnectionsEqualTheComputedOnes) {
  auto spec = lang::LoadSpec("relay.dspec", kRelaySpec);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const std::vector<std::pair<std::string, check::Verdict::Kind>> cases = {{"a", check::Verdict::Kind::kAccept},
                                                                           {"b", check::Verdict::Kind::kAccept},
                                                                           {"", check::Verdict::Kind::kAccept},
                                                                           {"c", check::Verdict::Kind::kReject}};
  for (const auto& [event, expected] : cases) {
    const auto trace = RelayTrace(event);
    ASSERT_EQ(Judge(*spec, trace, false), expected) << "event " << event;
    for (check::BranchOrder order : {check::BranchOrder::kFirst, check::BranchOrder::kLast})
      EXPECT_EQ(Judge(*spec, trace, true, order), expected)
          << "event " << event << " " << check::BranchOrderName(order);
    EXPECT_EQ(JudgeIncrementally(*spec, trace, "tcp"), expected) << "event " << event;
  }
}

TEST(Memo, NeverAnsweredRequestsCostLittle) {
  auto spec = Shipped("kv.dspec");
  for (int n : {14, 20, 40}) {
    check::CheckerStats st;
    check::CheckerOptions co;
    co.max_steps = 100'000;  // a plain memo would need ~n * 2^n
    auto v = check::CheckTrace(spec, PendingPutsThenBadGet(n), co, &st);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->kind, check::Verdict::Kind::kReject) << n << " pending: " << check::FormatVerdict(*v);
    EXPECT_LE(st.handler_runs, static_cast<uint64_t>(2 * n * n)) << n << " pending";
  }
  // And a get of a value one of them wrote is explained.
  auto ok = PendingPutsThenBadGet(20);
  ok.back().msg = Rec({{"value", Value::String("v7")}});
  auto v = check::CheckTrace(spec, ok, check::CheckerOptions{});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->kind, check::Verdict::Kind::kAccept) << check::FormatVerdict(*v);
}

// Jepsen-style register histories (5 clients, 1,000 operations, 15 % never
// answered) with one read of a value nobody wrote. The exact search would
// have to rule out every combination of the crashed writes' uses (seconds
// to minutes each); the crashed-request probe rejects at the injected read.
TEST(Memo, CrashedRequestProbeRejectsAtTheInjectedRead) {
  auto spec = Shipped("kv.dspec");
  uint64_t probe_rejections = 0;
  for (uint64_t seed : {1, 2, 3, 4}) {
    harness::SimOptions so = harness::CrashedClientsOptions(5, 1000, 0.15, seed);
    auto trace = harness::Simulate(*spec, harness::RegisterRequests("r"), so);
    ASSERT_TRUE(trace.ok()) << trace.status();
    harness::Rng rng(seed);
    auto at = harness::InjectUnwrittenRead(&*trace, rng);
    ASSERT_TRUE(at.ok()) << at.status();
    check::CheckerOptions co;
    co.max_seconds = 60;
    check::CheckerStats st;
    auto v = check::CheckTrace(spec, *trace, co, &st);
    ASSERT_TRUE(v.ok()) << v.status();
    ASSERT_EQ(v->kind, check::Verdict::Kind::kReject) << "seed " << seed << ": " << check::FormatVerdict(*v);
    EXPECT_EQ(v->obs_index, *at) << "seed " << seed;
    for (const auto& r : v->reasons) {  // every reason names an execution: each request taken once
      std::set<int64_t> labels(r.server_order.begin(), r.server_order.end());
      EXPECT_EQ(labels.size(), r.server_order.size()) << "seed " << seed;
    }
    probe_rejections += st.probe_rejections;
  }
  EXPECT_GE(probe_rejections, 3u) << "the exact search decided these alone: they no longer test the probe";
}

TEST(Memo, TimeBoundEndsInconclusiveNeverAccept) {
  // 4 connections appending to one key, pipelined, then one get revealing
  // a string no order produces: exhaustive, far beyond a 50 ms budget.
  auto spec = Shipped("kv.dspec");
  std::vector<Observation> t;
  int64_t label = 1;
  for (int round = 0; round < 6; ++round)
    for (int c = 0; c < 4; ++c, label += 2) {
      Observation o;
      o.kind = Observation::Kind::kSent;
      o.label = label;
      o.conn = c;
      o.msg = Rec({{"op", Value::String("append")},
                   {"key", Value::String("k")},
                   {"value", Value::String(std::string(1, static_cast<char>('a' + c)))}});
      t.push_back(o);
    }
  for (int64_t l = 1; l < label; l += 2) {
    Observation r;
    r.kind = Observation::Kind::kReceived;
    r.label = l + 1;
    r.conn = ((l - 1) / 2) % 4;
    r.msg = Rec({{"ok", Value::Bool(true)}});
    t.push_back(r);
  }
  Observation get;
  get.kind = Observation::Kind::kSent;
  get.label = label;
  get.conn = 9;
  get.msg = Rec({{"op", Value::String("get")}, {"key", Value::String("k")}});
  t.push_back(get);
  Observation r;
  r.kind = Observation::Kind::kReceived;
  r.label = label + 1;
  r.conn = 9;
  r.msg = Rec({{"value", Value::String("zzzzzzzzzzzzzzzzzzzzzzzz")}});
  t.push_back(r);
  check::CheckerOptions co;
  co.max_seconds = 0.05;
  auto start = std::chrono::steady_clock::now();
  auto v = check::CheckTrace(spec, t, co);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->kind, check::Verdict::Kind::kInconclusive) << check::FormatVerdict(*v);
  EXPECT_NE(v->message.find("time bound exceeded"), std::string::npos) << v->message;
  EXPECT_LT(took, 5.0);
}

// A restart (search.h) forgets the memo keys of the frames it discards:
// exactly the keys inserted after its mark, whatever happened meanwhile.
check::MemoKey Key(uint64_t base, std::vector<uint64_t> settled) {
  if (settled.empty()) return check::MemoKey{base, nullptr};
  return check::MemoKey{base, std::make_shared<const std::vector<uint64_t>>(std::move(settled))};
}

TEST(Memo, ForgetSinceForgetsTheKeysInsertedAfterTheMark) {
  check::ExplanationMemo m(100);
  EXPECT_FALSE(m.SeenOrInsert(Key(1, {})));
  EXPECT_FALSE(m.SeenOrInsert(Key(4, {5, 6})));
  const uint64_t mark = m.Mark();
  EXPECT_FALSE(m.SeenOrInsert(Key(2, {})));
  EXPECT_FALSE(m.SeenOrInsert(Key(4, {5})));  // dominates {5, 6}, which it displaces
  m.ForgetSince(mark);
  EXPECT_TRUE(m.SeenOrInsert(Key(1, {})));
  EXPECT_FALSE(m.SeenOrInsert(Key(2, {})));      // forgotten
  EXPECT_FALSE(m.SeenOrInsert(Key(4, {5, 6})));  // gone with the key that displaced it: only work is lost
  EXPECT_EQ(m.size(), 3u);
  // Marks taken before a reset (past max_entries) forget all since.
  check::ExplanationMemo small(2);
  EXPECT_FALSE(small.SeenOrInsert(Key(1, {})));
  const uint64_t early = small.Mark();
  EXPECT_FALSE(small.SeenOrInsert(Key(2, {})));
  EXPECT_FALSE(small.SeenOrInsert(Key(3, {})));  // a third key: the memo starts afresh
  EXPECT_FALSE(small.SeenOrInsert(Key(4, {})));
  small.ForgetSince(early);
  EXPECT_FALSE(small.SeenOrInsert(Key(4, {})));
  EXPECT_EQ(small.size(), 1u);
}

}  // namespace
}  // namespace dualswarm
