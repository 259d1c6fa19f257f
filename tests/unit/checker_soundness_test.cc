// Soundness: traces produced by running a spec itself (random choices,
// random network delays, several connections, pipelining) are always
// accepted. Sensitivity: single-field corruptions of small kv traces get
// exactly the verdict an independent brute-force checker gives.
#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/check/checker.h"
#include "engine/harness/simulator.h"
#include "engine/harness/workloads.h"
#include "engine/ir/json.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"
#include "tests/common/shipped_spec.h"

namespace dualswarm {
namespace {

using check::Observation;
using ir::Value;

Value Rec(std::vector<std::pair<std::string, Value>> e) { return Value::Map(std::move(e)); }

std::string Pick(harness::Rng& rng, const std::vector<std::string>& from) { return from[rng() % from.size()]; }

const harness::RequestFn KvRequest = harness::KvRequests({"a", "b", "c"});

Value HttpRequest(harness::Rng& rng) {
  static const std::vector<std::string> paths = {"/a", "/b", "/c/", "/d"};
  static const std::vector<std::string> tags = {"\"a1\"", "\"b2\"", "W/\"c3\"", "\"c3\"", "*", "x"};
  static const std::vector<std::string> bodies = {"one", "two", "three"};
  static const std::vector<std::string> methods = {"GET", "GET", "PUT", "PUT", "DELETE", "POST"};
  std::string method = Pick(rng, methods);
  ir::MapEntries headers;
  int h = static_cast<int>(rng() % 4);
  if (h == 1) headers.emplace_back("if-match", Value::String(Pick(rng, tags)));
  if (h == 2) headers.emplace_back("if-none-match", Value::String(Pick(rng, tags)));
  if (h == 3) {
    headers.emplace_back("if-match", Value::String(Pick(rng, tags)));
    headers.emplace_back("if-none-match", Value::String(Pick(rng, tags)));
  }
  return Rec({{"method", Value::String(method)},
              {"path", Value::String(Pick(rng, paths))},
              {"headers", Value::Map(std::move(headers))},
              {"body", Value::String(method == "PUT" ? Pick(rng, bodies) : "")}});
}

// specs/redis.dspec's commands (its gen block's, on two keys).
Value RedisRequest(harness::Rng& rng) {
  static const std::vector<std::string> names = {"GET",    "GET", "SET",    "SETNX",  "INCR",  "INCRBY",
                                                 "APPEND", "DEL", "EXISTS", "GETSET", "RPUSH", "HELLO"};
  static const std::vector<std::string> values = {"0", "1", "7", "a", "01"};
  const std::string name = Pick(rng, names);
  std::vector<Value> cmd = {Value::String(name), Value::String(name == "HELLO" ? "3" : Pick(rng, {"k1", "k2"}))};
  if (name == "SET" || name == "SETNX" || name == "APPEND" || name == "GETSET" || name == "RPUSH")
    cmd.push_back(Value::String(Pick(rng, values)));
  if (name == "INCRBY") cmd.push_back(Value::Int(static_cast<int64_t>(rng() % 7) - 3));
  return Rec({{"cmd", Value::List(std::move(cmd))}});
}

// Where the simulated clients' connections go, and what a `fresh string`
// may become.
struct SimSetup {
  lang::ConnectionNodes nodes;
  std::vector<std::string> fresh_strings;
};

void ExpectAllAccepted(const std::string& spec_name, const harness::RequestFn& gen, int traces, int requests,
                       int connections, int max_in_flight, uint64_t seed0, const std::string& network = "tcp",
                       const SimSetup& setup = {}) {
  auto spec = Shipped(spec_name);
  int checked = 0;
  for (int i = 0; i < traces; ++i) {
    harness::SimOptions so;
    so.seed = seed0 + static_cast<uint64_t>(i);
    so.requests = requests;
    so.connections = connections;
    so.max_in_flight = max_in_flight;
    so.connection_nodes = setup.nodes;
    if (!setup.fresh_strings.empty()) so.fresh_strings = setup.fresh_strings;
    auto trace = harness::Simulate(*spec, gen, so);
    ASSERT_TRUE(trace.ok()) << trace.status();
    // Every branch order must accept: the order steers which explanation
    // the generator follows, never whether one exists.
    for (check::BranchOrder order : {check::BranchOrder::kFirst, check::BranchOrder::kLast, check::BranchOrder::kRandom,
                                     check::BranchOrder::kMostConstrained}) {
      check::CheckerOptions co;
      co.network = network;
      co.branch_order = order;
      co.seed = so.seed;
      co.connection_nodes = setup.nodes;
      auto v = check::CheckTrace(spec, *trace, co);
      ASSERT_TRUE(v.ok()) << v.status();
      if (v->kind != check::Verdict::Kind::kAccept) {
        std::string dump;
        for (const auto& o : *trace) absl::StrAppend(&dump, check::ObservationToJson(o), "\n");
        FAIL() << spec_name << " seed " << so.seed << " branch order " << check::BranchOrderName(order) << ": "
               << check::FormatVerdict(*v) << "\n"
               << dump;
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, traces);
}

TEST(Soundness, KvSingleConnection) { ExpectAllAccepted("kv.dspec", KvRequest, 300, 60, 1, 1, 1000); }
TEST(Soundness, KvFourConnections) { ExpectAllAccepted("kv.dspec", KvRequest, 1500, 60, 4, 1, 2000); }
TEST(Soundness, KvEightConnections) { ExpectAllAccepted("kv.dspec", KvRequest, 300, 80, 8, 1, 4000); }
TEST(Soundness, KvPipelinedSixConnections) { ExpectAllAccepted("kv.dspec", KvRequest, 500, 60, 6, 2, 5000); }
TEST(Soundness, HttpSingleConnection) { ExpectAllAccepted("http_webdav.dspec", HttpRequest, 300, 40, 1, 1, 7000); }
TEST(Soundness, HttpThreeConnections) { ExpectAllAccepted("http_webdav.dspec", HttpRequest, 1000, 40, 3, 1, 8000); }
TEST(Soundness, HttpPipelined) { ExpectAllAccepted("http_webdav.dspec", HttpRequest, 300, 40, 3, 2, 9500); }
TEST(Soundness, SyncNetworkOnSingleConnection) {
  ExpectAllAccepted("kv.dspec", KvRequest, 200, 60, 1, 1, 11000, "sync");
}

// Redis's error replies are matched by their prefix (a `fresh string`).
const std::vector<std::string> kRedisErrors = {"ERR x", "WRONGTYPE x", "READONLY x", "LOADING x"};

TEST(Soundness, RedisOneServer) {
  ExpectAllAccepted("redis.dspec", RedisRequest, 300, 60, 4, 1, 12000, "tcp", {{}, kRedisErrors});
}

// A primary (node 0) and replicas that lag: connections round-robin over 3
// nodes, pipelined, and all on one replica.
TEST(Soundness, RedisPrimaryAndReplicas) {
  ExpectAllAccepted("redis.dspec", RedisRequest, 300, 60, 6, 1, 13000, "tcp", {{3, -1}, kRedisErrors});
  ExpectAllAccepted("redis.dspec", RedisRequest, 200, 60, 4, 2, 14000, "tcp", {{2, -1}, kRedisErrors});
  ExpectAllAccepted("redis.dspec", RedisRequest, 100, 40, 3, 1, 15000, "tcp", {{2, 1}, kRedisErrors});
}

// A replica (node 1; connection 1 of two, round-robin) may lag behind the
// primary (node 0) but never goes back in time, never answers a value the
// primary never had, and refuses writes.
check::Verdict::Kind RedisReplicaVerdict(const std::string& replica_replies) {
  const std::string trace = absl::StrCat(
      "{\"label\":1,\"conn\":0,\"dir\":\"sent\",\"msg\":{\"cmd\":[\"SET\",\"k\",\"a\"]}}\n"
      "{\"label\":2,\"conn\":0,\"dir\":\"received\",\"msg\":{\"str\":\"OK\"}}\n"
      "{\"label\":3,\"conn\":0,\"dir\":\"sent\",\"msg\":{\"cmd\":[\"SET\",\"k\",\"b\"]}}\n"
      "{\"label\":4,\"conn\":0,\"dir\":\"received\",\"msg\":{\"str\":\"OK\"}}\n",
      replica_replies);
  auto obs = check::ParseTrace("replica", trace);
  EXPECT_TRUE(obs.ok()) << obs.status();
  if (!obs.ok()) return check::Verdict::Kind::kSpecError;
  check::CheckerOptions co;
  co.connection_nodes = {2, -1};
  auto v = check::CheckTrace(Shipped("redis.dspec"), *obs, co);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? v->kind : check::Verdict::Kind::kSpecError;
}

std::string ReplicaGet(int label, const std::string& reply) {
  return absl::StrCat("{\"label\":", label, ",\"conn\":1,\"dir\":\"sent\",\"msg\":{\"cmd\":[\"GET\",\"k\"]}}\n",
                      "{\"label\":", label + 1, ",\"conn\":1,\"dir\":\"received\",\"msg\":", reply, "}\n");
}

TEST(Sensitivity, RedisReplicaLagsButNeverGoesBack) {
  using K = check::Verdict::Kind;
  // Lagging is allowed: nothing yet, then the older value, then the newer.
  EXPECT_EQ(RedisReplicaVerdict(ReplicaGet(5, "{\"nil\":true}") + ReplicaGet(7, "{\"bulk\":\"a\"}") +
                                ReplicaGet(9, "{\"bulk\":\"b\"}")),
            K::kAccept);
  EXPECT_EQ(RedisReplicaVerdict(ReplicaGet(5, "{\"err\":\"LOADING Redis is loading the dataset in memory\"}")),
            K::kAccept);
  // Back in time: b, then a (or nothing).
  EXPECT_EQ(RedisReplicaVerdict(ReplicaGet(5, "{\"bulk\":\"b\"}") + ReplicaGet(7, "{\"bulk\":\"a\"}")), K::kReject);
  EXPECT_EQ(RedisReplicaVerdict(ReplicaGet(5, "{\"bulk\":\"a\"}") + ReplicaGet(7, "{\"nil\":true}")), K::kReject);
  // A value the primary never had.
  EXPECT_EQ(RedisReplicaVerdict(ReplicaGet(5, "{\"bulk\":\"c\"}")), K::kReject);
  // A write on a replica must be refused.
  const std::string set_on_replica =
      "{\"label\":5,\"conn\":1,\"dir\":\"sent\",\"msg\":{\"cmd\":[\"SET\",\"k\",\"c\"]}}\n";
  EXPECT_EQ(
      RedisReplicaVerdict(set_on_replica + "{\"label\":6,\"conn\":1,\"dir\":\"received\",\"msg\":{\"str\":\"OK\"}}\n"),
      K::kReject);
  EXPECT_EQ(RedisReplicaVerdict(set_on_replica +
                                "{\"label\":6,\"conn\":1,\"dir\":\"received\",\"msg\":{\"err\":\"READONLY You "
                                "can't write against a read only replica.\"}}\n"),
            K::kAccept);
}

// Kills (redis.dspec's `on fault`: nodes run without persistence): a killed
// node comes back empty, a primary restarted empty wipes its replicas (in
// order, some time), and a killed replica resyncs to a state of the
// primary's from the kill on. Node 0 is the primary, conn 0 talks to it,
// conn 1 to the replica (node 1); the primary had k = a, then k = b.
TEST(Sensitivity, RedisKillsEmptyTheNodeAndAPrimaryKillWipesTheReplicas) {
  using K = check::Verdict::Kind;
  const std::string kill0 = "{\"event\":\"fault\",\"fault\":\"kill\",\"node\":0}\n";
  const std::string kill1 = "{\"event\":\"fault\",\"fault\":\"kill\",\"node\":1}\n";
  const std::string primary_get_nil =
      "{\"label\":5,\"conn\":0,\"dir\":\"sent\",\"msg\":{\"cmd\":[\"GET\",\"k\"]}}\n"
      "{\"label\":6,\"conn\":0,\"dir\":\"received\",\"msg\":{\"nil\":true}}\n";
  EXPECT_EQ(RedisReplicaVerdict(primary_get_nil), K::kReject);  // no kill: b stands
  EXPECT_EQ(RedisReplicaVerdict(kill0 + primary_get_nil), K::kAccept);
  EXPECT_EQ(RedisReplicaVerdict("{\"event\":\"fault\",\"fault\":\"pause\",\"node\":0}\n" + primary_get_nil),
            K::kReject);
  // The replica: stale b, then wiped; never b again once wiped.
  EXPECT_EQ(RedisReplicaVerdict(kill0 + ReplicaGet(7, "{\"bulk\":\"b\"}") + ReplicaGet(9, "{\"nil\":true}")),
            K::kAccept);
  EXPECT_EQ(RedisReplicaVerdict(kill0 + ReplicaGet(7, "{\"bulk\":\"b\"}") + ReplicaGet(9, "{\"nil\":true}") +
                                ReplicaGet(11, "{\"bulk\":\"b\"}")),
            K::kReject);
  // A killed replica: empty, then the primary's b; never the older a.
  EXPECT_EQ(RedisReplicaVerdict(ReplicaGet(5, "{\"bulk\":\"b\"}") + kill1 + ReplicaGet(7, "{\"nil\":true}") +
                                ReplicaGet(9, "{\"bulk\":\"b\"}")),
            K::kAccept);
  EXPECT_EQ(RedisReplicaVerdict(ReplicaGet(5, "{\"nil\":true}") + kill1 + ReplicaGet(7, "{\"bulk\":\"a\"}")),
            K::kReject);
  EXPECT_EQ(RedisReplicaVerdict(ReplicaGet(5, "{\"bulk\":\"b\"}") + ReplicaGet(7, "{\"nil\":true}")),
            K::kReject);  // without the kill: back in time
}

// Simulated replicated Redis with kills of every node, in which the
// spec's own server empties the nodes at each kill, is always accepted.
TEST(Soundness, RedisPrimaryAndReplicasUnderKills) {
  auto spec = Shipped("redis.dspec");
  ASSERT_NE(spec, nullptr);
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    harness::SimOptions so;
    so.seed = 16000 + seed;
    so.requests = 50;
    so.connections = 4;
    so.connection_nodes = {3, -1};
    so.fresh_strings = kRedisErrors;
    so.fault_probability = 0.03;
    for (int node = 0; node < 3; ++node)
      so.faults.push_back(Rec({{"fault", Value::String("kill")}, {"node", Value::Int(node)}}));
    auto trace = harness::Simulate(*spec, RedisRequest, so);
    ASSERT_TRUE(trace.ok()) << trace.status();
    check::CheckerOptions co;
    co.connection_nodes = so.connection_nodes;
    auto v = check::CheckTrace(spec, *trace, co);
    ASSERT_TRUE(v.ok()) << v.status();
    ASSERT_EQ(v->kind, check::Verdict::Kind::kAccept) << "seed " << so.seed << ": " << check::FormatVerdict(*v);
  }
}

// --- Independent brute-force kv checker (no spec interpreter): enumerate
// every server order that respects per-connection FIFO and real time
// (a request whose response was seen before another was sent goes first),
// run a hand-written kv map, compare the observed fields.
struct Op {
  int64_t label;
  int64_t conn;
  Value req;
  size_t sent_at;
  std::optional<size_t> recv_at;
  Value resp;
};

bool ExpectedMatches(const Value& expected, const Value& observed) {
  if (!observed.is_map()) return false;
  for (const auto& [k, v] : expected.as_map()) {
    const Value* o = observed.Find(k);
    if (o == nullptr || *o != v) return false;
  }
  return true;
}

Value KvApply(std::map<std::string, std::string>& store, const Value& q) {
  const std::string& op = q.Find("op")->as_string();
  const std::string& key = q.Find("key")->as_string();
  auto it = store.find(key);
  if (op == "get") return Rec({{"value", it == store.end() ? Value::Null() : Value::String(it->second)}});
  if (op == "put") {
    store[key] = q.Find("value")->as_string();
    return Rec({{"ok", Value::Bool(true)}});
  }
  if (op == "append") {
    store[key] = (it == store.end() ? "" : it->second) + q.Find("value")->as_string();
    return Rec({{"ok", Value::Bool(true)}});
  }
  const Value& e = *q.Find("expected");
  bool eq = e.is_null() ? it == store.end() : (it != store.end() && e.as_string() == it->second);
  if (eq) store[key] = q.Find("value")->as_string();
  return Rec({{"ok", Value::Bool(eq)}});
}

bool BruteForce(const std::vector<Op>& ops, std::vector<bool>& used, std::vector<size_t>& order, size_t answered_total,
                size_t answered_used) {
  if (answered_used == answered_total) {
    std::map<std::string, std::string> store;
    for (size_t i : order) {
      Value r = KvApply(store, ops[i].req);
      if (ops[i].recv_at && !ExpectedMatches(r, ops[i].resp)) return false;
    }
    return true;
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    if (used[i]) continue;
    bool ok = true;
    for (size_t j = 0; j < ops.size() && ok; ++j) {
      if (used[j] || j == i) continue;
      // j must come before i if j's response was seen before i was sent, or
      // j precedes i on the same connection.
      if (ops[j].recv_at && *ops[j].recv_at < ops[i].sent_at) ok = false;
      if (ops[j].conn == ops[i].conn && ops[j].label < ops[i].label) ok = false;
    }
    if (!ok) continue;
    used[i] = true;
    order.push_back(i);
    bool found = BruteForce(ops, used, order, answered_total, answered_used + (ops[i].recv_at ? 1 : 0));
    order.pop_back();
    used[i] = false;
    if (found) return true;
  }
  return false;
}

bool BruteForceAccepts(const std::vector<Observation>& trace) {
  std::vector<Op> ops;
  std::map<int64_t, size_t> by_label;
  for (size_t i = 0; i < trace.size(); ++i) {
    const Observation& o = trace[i];
    if (o.kind == Observation::Kind::kSent) {
      by_label[o.label] = ops.size();
      ops.push_back({o.label, o.conn, o.msg, i, std::nullopt, Value()});
    } else if (o.kind == Observation::Kind::kReceived) {
      Op& op = ops[by_label.at(o.label - 1)];
      op.recv_at = i;
      op.resp = o.msg;
    }
  }
  size_t answered = 0;
  for (const auto& op : ops) answered += op.recv_at ? 1 : 0;
  std::vector<bool> used(ops.size(), false);
  std::vector<size_t> order;
  return BruteForce(ops, used, order, answered, 0);
}

// One random single-field corruption of a received message.
std::vector<Observation> Corrupt(std::vector<Observation> trace, harness::Rng& rng) {
  std::vector<size_t> received;
  for (size_t i = 0; i < trace.size(); ++i)
    if (trace[i].kind == Observation::Kind::kReceived) received.push_back(i);
  if (received.empty()) return trace;
  Observation& o = trace[received[rng() % received.size()]];
  static const std::vector<Value> values = {Value::Null(),       Value::String("x"), Value::String("y"),
                                            Value::String("xy"), Value::String("z"), Value::Bool(true),
                                            Value::Bool(false)};
  ir::MapEntries e = o.msg.as_map();
  switch (rng() % 4) {
    case 0:  // drop a field
      if (!e.empty()) e.erase(e.begin());
      break;
    case 1:  // add an unrelated field (must not matter)
      e.emplace_back("extra", Value::Int(1));
      break;
    default:  // replace a field's value
      if (!e.empty()) e[0].second = values[rng() % values.size()];
  }
  o.msg = Value::Map(std::move(e));
  return trace;
}

// Fault events (a nemesis's pauses, restarts, partitions) change no
// verdict: the checker skips them, so simulated kv traces with faults
// inserted anywhere are still accepted, and the same traces with one read
// of a value nobody wrote are still rejected.
TEST(Soundness, FaultEventsChangeNoVerdict) {
  auto spec = Shipped("kv.dspec");
  harness::Rng rng(77);
  int rejected = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    harness::SimOptions so;
    so.seed = 9000 + seed;
    so.requests = 60;
    so.connections = 4;
    auto trace = harness::Simulate(*spec, KvRequest, so);
    ASSERT_TRUE(trace.ok()) << trace.status();
    std::vector<Observation> bad = *trace;
    bool has_bad = harness::InjectUnwrittenRead(&bad, rng).ok();
    for (std::vector<Observation>* t : {&*trace, &bad}) {
      for (int k = 0; k < 5; ++k) {
        Observation fault;
        fault.kind = Observation::Kind::kFault;
        fault.msg = Rec({{"fault", Value::String(k % 2 ? "pause" : "restart")}, {"node", Value::Int(k % 3)}});
        t->insert(t->begin() + static_cast<long>(rng() % (t->size() + 1)), fault);
      }
    }
    auto ok = check::CheckTrace(spec, *trace, check::CheckerOptions());
    ASSERT_TRUE(ok.ok()) << ok.status();
    EXPECT_EQ(ok->kind, check::Verdict::Kind::kAccept) << "seed " << seed << ": " << check::FormatVerdict(*ok);
    if (!has_bad) continue;
    auto no = check::CheckTrace(spec, bad, check::CheckerOptions());
    ASSERT_TRUE(no.ok()) << no.status();
    EXPECT_EQ(no->kind, check::Verdict::Kind::kReject) << "seed " << seed;
    ++rejected;
  }
  EXPECT_GE(rejected, 30);  // most traces have a read to corrupt
}

TEST(Sensitivity, CorruptedKvTracesMatchBruteForce) {
  auto spec = Shipped("kv.dspec");
  harness::Rng rng(42);
  int rejected = 0, accepted = 0;
  for (int i = 0; i < 600; ++i) {
    harness::SimOptions so;
    so.seed = 30000 + static_cast<uint64_t>(i);
    so.requests = 7;
    so.connections = 3;
    so.max_in_flight = 1;
    auto trace = harness::Simulate(*spec, KvRequest, so);
    ASSERT_TRUE(trace.ok());
    ASSERT_TRUE(BruteForceAccepts(*trace)) << "brute force rejects a spec-produced trace, seed " << so.seed;
    auto bad = Corrupt(*trace, rng);
    bool expect_accept = BruteForceAccepts(bad);
    auto v = check::CheckTrace(spec, bad, check::CheckerOptions{});
    ASSERT_TRUE(v.ok()) << v.status();
    bool got_accept = v->kind == check::Verdict::Kind::kAccept;
    if (got_accept != expect_accept) {
      std::string dump;
      for (const auto& o : bad) absl::StrAppend(&dump, check::ObservationToJson(o), "\n");
      FAIL() << "seed " << so.seed << ": brute force says " << (expect_accept ? "accept" : "reject")
             << ", checker says " << check::FormatVerdict(*v) << dump;
    }
    (expect_accept ? accepted : rejected)++;
  }
  // The corruptions must exercise both outcomes substantially.
  EXPECT_GT(rejected, 200);
  EXPECT_GT(accepted, 50);
}

}  // namespace
}  // namespace dualswarm
