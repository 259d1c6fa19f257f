// Cluster targets (workers/sut/cluster.h): N nodes from one launch
// template, each with its own ports and directory, started together and
// torn down together; connections round-robin over the nodes or all to
// one. Against three independent reference kv servers (which share
// nothing, so only a test that sends everything to one node passes) and
// against a real 3-node etcd cluster (one raft group: linearizable from
// any node).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/check/observation.h"
#include "engine/harness/counterexample.h"
#include "engine/ir/json.h"
#include "gtest/gtest.h"
#include "tests/common/job_runs.h"
#include "tests/common/line_client.h"
#include "tests/common/processes.h"
#include "tests/common/shipped_spec.h"
#include "util/file_tail.h"
#include "workers/adapters/grpc_catalog.h"
#include "workers/runner/runner.h"
#include "workers/sut/cluster.h"

namespace dualswarm::workers {
namespace {

std::string RefKv() { return absl::StrCat(DS_REF_KV, " --port {port} --dir {dir}"); }

// Three nodes, each ready on its own port; logs per node.
TEST(SutCluster, StartsEveryNodeOnItsOwnPort) {
  LaunchOptions node;
  node.command = RefKv();
  auto cluster = SutCluster::Launch(node, 3);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_EQ((*cluster)->size(), 3);
  std::set<int> ports;
  for (int i = 0; i < 3; ++i) {
    ports.insert((*cluster)->port(i));
    EXPECT_TRUE(CanConnect("127.0.0.1", (*cluster)->port(i))) << "node " << i;
  }
  EXPECT_EQ(ports.size(), 3u);
  EXPECT_TRUE((*cluster)->Alive());
  EXPECT_NE((*cluster)->LogTail().find("--- node 2 ---"), std::string::npos) << (*cluster)->LogTail();
  // A bad node count is refused, naming the bound.
  EXPECT_TRUE(absl::IsInvalidArgument(SutCluster::Launch(node, 0).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(SutCluster::Launch(node, kMaxClusterNodes + 1).status()));
}

// Every node's placeholders, written by the node itself before it execs
// the server. Fields: {node} {nodes} {port} {peer_port} {peers} {port_0}
// {peer_port_2} {advertise_port} {advertise_peer_port}.
std::vector<std::vector<std::string>> PlaceholderWords(bool relay_links, std::unique_ptr<SutCluster>* cluster) {
  std::string out = ::testing::TempDir() + "/cluster-placeholders-" + std::to_string(::getpid());
  LaunchOptions node;
  node.command = absl::StrCat(
      "echo {node} {nodes} {port} {peer_port} {peers} {port_0} {peer_port_2} {advertise_port} {advertise_peer_port} > ",
      out, "-{node}; exec ", DS_REF_KV, " --port {port} --dir {dir}");
  auto launched = SutCluster::Launch(node, 3, relay_links);
  EXPECT_TRUE(launched.ok()) << launched.status();
  if (!launched.ok()) return {};
  *cluster = *std::move(launched);
  std::vector<std::vector<std::string>> words;
  for (int i = 0; i < 3; ++i) {
    auto text = util::ReadFileTail(absl::StrCat(out, "-", i), 4096);
    EXPECT_TRUE(text.ok()) << text.status();
    words.push_back(absl::StrSplit(absl::StripAsciiWhitespace(text.ok() ? *text : ""), ' '));
    EXPECT_EQ(words.back().size(), 9u) << (text.ok() ? *text : "");
    ::unlink(absl::StrCat(out, "-", i).c_str());
  }
  return words;
}

TEST(SutCluster, PlaceholdersAreEachNodesOwn) {
  std::unique_ptr<SutCluster> cluster;
  auto words = PlaceholderWords(false, &cluster);
  ASSERT_EQ(words.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const auto& w = words[static_cast<size_t>(i)];
    ASSERT_EQ(w.size(), 9u);
    EXPECT_EQ(w[0], absl::StrCat(i));
    EXPECT_EQ(w[1], "3");
    EXPECT_EQ(w[2], absl::StrCat(cluster->port(i)));
    EXPECT_EQ(w[5], absl::StrCat(cluster->port(0)));  // {port_0}: the same on every node
    EXPECT_EQ(w[4], words[0][4]);                     // {peers}: the same on every node
    EXPECT_NE(w[4].find(absl::StrCat("127.0.0.1:", w[3])), std::string::npos) << w[4];  // its own peer port in it
    EXPECT_EQ(w[6], words[2][3]);  // {peer_port_2} is node 2's {peer_port}
    EXPECT_EQ(w[7], w[2]);         // without relays a node is reached where it listens
    EXPECT_EQ(w[8], w[3]);
  }
}

// With relays (partitions) every address of a node is its relay's, the
// same on every node, and a node still listens on its own ports.
TEST(SutCluster, BehindRelaysEveryNodeSeesTheSameRelayAddresses) {
  std::unique_ptr<SutCluster> cluster;
  auto words = PlaceholderWords(true, &cluster);
  ASSERT_EQ(words.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const auto& w = words[static_cast<size_t>(i)];
    ASSERT_EQ(w.size(), 9u);
    EXPECT_EQ(w[2], absl::StrCat(cluster->port(i)));  // {port}: where it listens
    EXPECT_NE(w[7], w[2]);                            // {advertise_port}: its relay
    EXPECT_NE(w[8], w[3]);
    EXPECT_EQ(w[4], words[0][4]);  // {peers}, {port_0}, {peer_port_2}: the same on every node
    EXPECT_EQ(w[5], words[0][5]);
    EXPECT_EQ(w[6], words[0][6]);
    EXPECT_EQ(w[6], words[2][8]);  // {peer_port_2} is where node 2 advertises itself
    EXPECT_NE(w[4].find(absl::StrCat("127.0.0.1:", w[8])), std::string::npos) << w[4];
    EXPECT_TRUE(CanConnect("127.0.0.1", std::stoi(w[7]))) << "the relay in front of node " << i;
  }
}

// A restarted node (SIGKILL, then the same command) is back on the same
// port in the same directory; its in-memory data is gone (ds-ref-kv keeps
// nothing on disk), which is what a nemesis shows a spec.
TEST(SutCluster, RestartKeepsTheNodesPortAndDirectory) {
  LaunchOptions node;
  node.command = absl::StrCat("echo started >> {dir}/starts; exec ", DS_REF_KV, " --port {port} --dir {dir}");
  auto cluster = SutCluster::Launch(node, 2);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  SutCluster& c = **cluster;
  int port = c.port(1);
  std::string dir = c.dir(1);
  EXPECT_EQ(testing::AskLine(port, "{\"op\":\"put\",\"key\":\"a\",\"value\":\"x\"}\n", 2000), "{\"ok\":true}\n");
  EXPECT_EQ(testing::AskLine(port, "{\"op\":\"get\",\"key\":\"a\"}\n", 2000), "{\"value\":\"x\"}\n");
  ASSERT_TRUE(c.ReviveNode(1).ok());
  EXPECT_EQ(c.port(1), port);
  EXPECT_EQ(c.dir(1), dir);
  EXPECT_TRUE(c.Alive());
  EXPECT_EQ(testing::AskLine(port, "{\"op\":\"get\",\"key\":\"a\"}\n", 2000), "{\"value\":null}\n");
  auto starts = util::ReadFileTail(dir + "/starts", 4096);
  ASSERT_TRUE(starts.ok()) << starts.status();
  EXPECT_EQ(*starts, "started\nstarted\n");
  EXPECT_TRUE(absl::IsInvalidArgument(c.ReviveNode(2)));
}

// A killed node is down on purpose: the cluster still counts as alive (a
// nemesis's kill is not a crash), nothing listens on its port, and it is
// back on the same port once revived.
TEST(SutCluster, AKilledNodeIsDownNotDeadUntilRevived) {
  LaunchOptions node;
  node.command = RefKv();
  auto cluster = SutCluster::Launch(node, 2);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  SutCluster& c = **cluster;
  const int port = c.port(1);
  c.KillNode(1);
  EXPECT_TRUE(c.Down(1));
  EXPECT_FALSE(c.Down(0));
  EXPECT_TRUE(c.Alive());
  EXPECT_EQ(testing::AskLine(port, "{\"op\":\"get\",\"key\":\"a\"}\n", 500), "");
  ASSERT_TRUE(c.ReviveNode(1).ok());
  EXPECT_FALSE(c.Down(1));
  EXPECT_EQ(testing::AskLine(port, "{\"op\":\"get\",\"key\":\"a\"}\n", 2000), "{\"value\":null}\n");
}

// A paused node (SIGSTOP) keeps its connections but answers nothing; once
// resumed it answers what waited.
TEST(SutCluster, PausedNodeAnswersOnlyAfterResume) {
  LaunchOptions node;
  node.command = RefKv();
  auto cluster = SutCluster::Launch(node, 1);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  SutCluster& c = **cluster;
  c.PauseNode(0);
  EXPECT_EQ(testing::AskLine(c.port(0), "{\"op\":\"get\",\"key\":\"a\"}\n", 300), "");
  EXPECT_TRUE(c.Alive());  // stopped is not dead
  std::thread resume([&c] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    c.ResumeNode(0);
  });
  EXPECT_EQ(testing::AskLine(c.port(0), "{\"op\":\"get\",\"key\":\"a\"}\n", 5000), "{\"value\":null}\n");
  resume.join();
}

// Three kv servers that share nothing: round-robin connections see three
// stores, which no single store explains (the test can fail); every
// connection to node 1 sees one store and passes.
TEST(ClusterTargets, ConnectionsGoWhereTheyAreSent) {
  auto spec = Shipped("kv.dspec");
  JobOptions round_robin = testing::JobOptionsFor(RefKv(), "jsonl", 1, 2000);
  round_robin.nodes = 3;
  auto r = RunJob(spec, round_robin);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, Outcome::kSafety) << testing::DescribeJobResult(*r);

  JobOptions one_node = round_robin;
  one_node.connect_node = 1;
  auto one = RunJob(spec, one_node);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->outcome, Outcome::kPassed) << testing::DescribeJobResult(*one);
  EXPECT_EQ(one->received, 2000u);
}

// etcd's documented cluster set-up on loopback: three members that know
// each other by their peer ports; {dir} holds each member's data.
const char kEtcdCluster[] =
    "/usr/bin/etcd --name n{node} --data-dir {dir}/data --listen-client-urls http://127.0.0.1:{port} "
    "--advertise-client-urls http://127.0.0.1:{port} --listen-peer-urls http://127.0.0.1:{peer_port} "
    "--initial-advertise-peer-urls http://127.0.0.1:{advertise_peer_port} --initial-cluster-state new "
    "--initial-cluster n0=http://127.0.0.1:{peer_port_0},n1=http://127.0.0.1:{peer_port_1},"
    "n2=http://127.0.0.1:{peer_port_2} --log-level error --logger zap";

// `dualswarm test` of specs/etcd_kv.dspec against a 3-node etcd cluster:
// 1,000 requests over 6 round-robin connections, no shrinking, and
// `extra` flags (a nemesis).
testing::CommandResult TestEtcdCluster(int seed, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {DUALSWARM_CLI,      "test",
                                   "--spec",           std::string(DUALSWARM_SOURCE_DIR) + "/specs/etcd_kv.dspec",
                                   "--descriptor-set", DS_ETCD_DESCRIPTOR_SET,
                                   "--launch",         kEtcdCluster,
                                   "--nodes",          "3",
                                   "--seed",           absl::StrCat(seed),
                                   "--steps",          "1000",
                                   "--connections",    "6",
                                   "--no-shrink"};
  args.insert(args.end(), extra.begin(), extra.end());
  return testing::RunCommand(args);
}

// A 3-node etcd cluster, connections round-robin over its members: one
// revision and linearizable Range/Txn across members, so the single-node
// spec holds. Through the CLI, as a user runs it.
TEST(RealServers, EtcdClusterOf3PassesRoundRobin) {
  ASSERT_EQ(::access("/usr/bin/etcd", X_OK), 0) << "etcd-server is installed by scripts/setup.sh";
  for (int seed = 1; seed <= 5; ++seed) {
    auto r = TestEtcdCluster(seed);
    ASSERT_EQ(r.exit_code, 0) << "seed " << seed << ":\n" << r.out << r.err;
    EXPECT_NE(r.out.find("PASSED: 1000 requests on 6 connections"), std::string::npos) << r.out << r.err;
  }
}

// A job of 4,000 requests against the reference kv server (specs/kv.dspec)
// with the nemesis injecting `fault` every ~interval_ms for duration_ms.
absl::StatusOr<JobResult> RefKvUnderNemesis(const std::string& fault, int64_t interval_ms, int64_t duration_ms) {
  JobOptions o = testing::JobOptionsFor(RefKv(), "jsonl", 1, 4000);
  o.nemesis.faults = {fault};
  o.nemesis.interval_ms = interval_ms;
  o.nemesis.duration_ms = duration_ms;
  return RunJob(Shipped("kv.dspec"), o);
}

// The names of a trace's fault events, in order ("" where one has none).
std::vector<std::string> FaultEvents(const std::vector<check::Observation>& trace) {
  std::vector<std::string> names;
  for (const check::Observation& ob : trace) {
    if (ob.kind != check::Observation::Kind::kFault) continue;
    const ir::Value* what = ob.msg.Find("fault");
    names.push_back(what != nullptr && what->is_string() ? what->as_string() : "");
  }
  return names;
}

// The nemesis pauses nodes at times drawn from the seed and records every
// pause and resume in the trace; a pause only delays answers, so a correct
// server still passes.
TEST(Nemesis, PausesAreInTheTraceAndACorrectServerPasses) {
  auto r = RefKvUnderNemesis("pause", 20, 20);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, Outcome::kPassed) << testing::DescribeJobResult(*r);
  int pauses = 0, resumes = 0;
  for (const std::string& what : FaultEvents(r->trace)) {
    ASSERT_FALSE(what.empty());
    (what == "pause" ? pauses : resumes)++;
    EXPECT_EQ(pauses - resumes, what == "pause" ? 1 : 0) << "a pause is resumed before the next";
  }
  EXPECT_GE(pauses, 1) << "the run took " << r->seconds << " s";
  EXPECT_EQ(r->faults, pauses);
}

// A request that is late near a fault (one response timeout before it or
// later) is given up on — a timeout event, its connection closed — not a
// liveness finding; far from faults, lateness is still a finding. Against
// ds-ref-webdav mutant 8, which never answers every 7th request.
TEST(Nemesis, NearAFaultALateAnswerIsGivenUpOnNotAFinding) {
  const std::string silent = absl::StrCat(DS_REF_WEBDAV, " --port {port} --dir {dir} --mutant 8");
  auto spec = Shipped("http_webdav.dspec");
  JobOptions o = testing::JobOptionsFor(silent, "http", 1, 150);
  o.response_timeout_ms = 400;
  auto without = RunJob(spec, o);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ(without->outcome, Outcome::kLiveness) << testing::DescribeJobResult(*without);

  o.nemesis.faults = {"pause"};
  o.nemesis.interval_ms = 20;
  o.nemesis.duration_ms = 20;
  auto with = RunJob(spec, o);
  ASSERT_TRUE(with.ok()) << with.status();
  EXPECT_EQ(with->outcome, Outcome::kPassed) << testing::DescribeJobResult(*with);
  int timeouts = 0;
  for (const check::Observation& ob : with->trace) timeouts += ob.kind == check::Observation::Kind::kTimeout;
  EXPECT_GE(timeouts, 1) << testing::DescribeJobResult(*with);
}

// Killing a server that keeps its data only in memory loses what it
// acknowledged: after the restart a get no longer sees an acknowledged
// put, which the spec (a store that keeps what it acknowledged) rejects.
// The kill and the restart are in the trace; connections to the dead node
// are closed, not a crash.
TEST(Nemesis, AKillLosesWhatAnInMemoryServerAcknowledged) {
  auto r = RefKvUnderNemesis("kill", 30, 20);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, Outcome::kSafety) << testing::DescribeJobResult(*r);
  const std::vector<std::string> events = FaultEvents(r->trace);
  const auto kills = std::count(events.begin(), events.end(), "kill");
  const auto restarts = std::count(events.begin(), events.end(), "restart");
  EXPECT_GE(kills, 1) << testing::DescribeJobResult(*r);
  EXPECT_GE(restarts, kills - 1);
}

// A node that does not come back after a kill is a crash finding, and
// the trace shows its restart as failed (with why), not as a restart.
// The node's launch refuses to start a second time.
TEST(Nemesis, ARestartThatFailsIsACrashFindingDrawnAsFailed) {
  const std::string once =
      absl::StrCat("if [ -e {dir}/started ]; then echo 'refusing to start again' >&2; exit 3; fi; ",
                   "touch {dir}/started; exec ", RefKv());
  JobOptions o = testing::JobOptionsFor(once, "jsonl", 1, 4000);
  o.nemesis.faults = {"kill"};
  o.nemesis.interval_ms = 30;
  o.nemesis.duration_ms = 20;
  auto r = RunJob(Shipped("kv.dspec"), o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->outcome, Outcome::kSutCrash) << testing::DescribeJobResult(*r);
  EXPECT_NE(r->reason.find("did not come back"), std::string::npos) << r->reason;
  const check::Observation* last = nullptr;
  for (const check::Observation& ob : r->trace)
    if (ob.kind == check::Observation::Kind::kFault) last = &ob;
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->msg.Find("fault")->as_string(), "restart");
  const ir::Value* failed = last->msg.Find("failed");
  ASSERT_NE(failed, nullptr) << ir::ToJson(last->msg);
  EXPECT_FALSE(failed->as_string().empty());
}

// A kill finding shrinks like any other: the faults are items of the
// input, replayed at their place (after the same responses), not at the
// same time, and dropped where the failure does not need them. What is
// left replays on fresh servers. How small it gets and how many replays
// reproduce it depend on the race with the kill (4 clean-clone CI runs of
// 2026-11-27: 2 as below with <= 40 items and 3 of 3 replays, once 70
// items of 308, once 2 of 3 replays): the test holds what every run
// shows, and issue 18 (reliable race counterexamples) owns the rest.
TEST(Nemesis, AKillFindingShrinksToItsFaultsAndReplays) {
  const std::string dir = testing::MakeTempDir("ds-kill-cx");
  ASSERT_FALSE(dir.empty());
  const std::string cx = dir + "/cx.json";
  auto r = testing::RunCommand({DUALSWARM_CLI, "test", "--spec", std::string(DUALSWARM_SOURCE_DIR) + "/specs/kv.dspec",
                                "--launch", RefKv(), "--nemesis", "kill", "--fault-interval", "30", "--fault-duration",
                                "20", "--steps", "4000", "--seed", "2", "--save", cx});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("replayed on fresh SUTs: 5 of 5 reproduced"), std::string::npos) << r.out;
  auto doc = testing::ReadSavedCounterexample(cx);
  ASSERT_TRUE(doc.ok()) << doc.status();
  // The data is lost by a kill, or by a restart alone (shrinking may drop
  // the kill: a restart of a running node kills it first).
  int losses = 0;
  for (const harness::InputItem& item : doc->input)
    losses += item.is_fault() &&
              (item.fault.Find("fault")->as_string() == "kill" || item.fault.Find("fault")->as_string() == "restart");
  EXPECT_GE(losses, 1);
  EXPECT_LE(doc->input.size() * 2, doc->original_size) << "shrunk from " << doc->original_size;
  auto again = testing::RunCommand({DUALSWARM_CLI, "replay", cx, "--launch", RefKv(), "--times", "3"});
  // 1: every replay reproduced it, 3: some did; 0 (none) or 2 (bad input) fail.
  EXPECT_TRUE(again.exit_code == 1 || again.exit_code == 3) << again.out << again.err;
  std::filesystem::remove_all(dir);
}

// A 3-node etcd whose members are killed (SIGKILL) and restarted on their
// data directories stays linearizable: what it acknowledged was on disk.
// A kill leaves requests that were never answered, each of which the
// server may have applied at any later time (a member may have forwarded
// it to the leader before it died); some such histories are beyond the
// checker's bound, which makes a run INCONCLUSIVE, never a finding (about
// one seed in six: issue 11). A request a killed member never answers is
// given up only after the response timeout, so a run with many kills
// waits seconds for nothing; each seed has 12 s (a run cut short passes
// with what it sent). Seeds until two passed, at most four.
TEST(RealServers, EtcdClusterOf3IsNeverFoundWrongUnderKills) {
  ASSERT_EQ(::access("/usr/bin/etcd", X_OK), 0) << "etcd-server is installed by scripts/setup.sh";
  int passed = 0;
  for (int seed = 1; seed <= 4 && passed < 2; ++seed) {
    auto r = TestEtcdCluster(seed, {"--nemesis", "kill", "--fault-interval", "300", "--fault-duration", "500",
                                    "--max-check-seconds", "5", "--steps", "600", "--time", "12"});
    const bool pass = r.exit_code == 0 && r.out.find("PASSED: ") != std::string::npos &&
                      r.out.find(" requests on 6 connections") != std::string::npos;
    const bool inconclusive = r.exit_code == 2 && r.out.find("inconclusive") != std::string::npos;
    EXPECT_TRUE(pass || inconclusive) << "seed " << seed << ":\n" << r.out << r.err;
    passed += pass;
  }
  EXPECT_GE(passed, 1);
}

// A 3-node etcd whose members are cut off from the others for 1 s at a
// time (the leader too: the others elect a new one) stays linearizable.
// Its members reach each other through the relays in front of every node
// and advertise their relay address ({advertise_peer_port}), so they
// agree on every member's peer URL as etcd requires.
TEST(RealServers, EtcdClusterOf3PassesWithPartitions) {
  ASSERT_EQ(::access("/usr/bin/etcd", X_OK), 0) << "etcd-server is installed by scripts/setup.sh";
  for (int seed = 1; seed <= 2; ++seed) {
    // The first fault comes within 450 ms; 600 requests take etcd (an
    // fsync per write) over 0.7 s even without faults.
    auto r = TestEtcdCluster(
        seed, {"--nemesis", "partition", "--fault-interval", "300", "--fault-duration", "1000", "--steps", "600"});
    ASSERT_EQ(r.exit_code, 0) << "seed " << seed << ":\n" << r.out << r.err;
    EXPECT_NE(r.out.find("PASSED: 600 requests on 6 connections"), std::string::npos) << r.out << r.err;
    EXPECT_EQ(r.out.find("no fault injected"), std::string::npos) << r.out;
  }
}

// A 3-node etcd whose members are paused for 1.5 s at a time (the leader
// too: the others elect a new one) stays linearizable.
TEST(RealServers, EtcdClusterOf3PassesWithPauses) {
  ASSERT_EQ(::access("/usr/bin/etcd", X_OK), 0) << "etcd-server is installed by scripts/setup.sh";
  for (int seed = 1; seed <= 2; ++seed) {
    auto r = TestEtcdCluster(seed, {"--nemesis", "pause", "--fault-interval", "500", "--fault-duration", "1500"});
    ASSERT_EQ(r.exit_code, 0) << "seed " << seed << ":\n" << r.out << r.err;
    EXPECT_NE(r.out.find("PASSED: 1000 requests on 6 connections"), std::string::npos) << r.out << r.err;
  }
}

// A 3-node etcd under a bridge (the link between two members cut, each
// still reaching the third) and slow links (a member's messages delayed
// 100 ms) for 1 s at a time stays linearizable.
TEST(RealServers, EtcdClusterOf3PassesWithBridgesAndSlowLinks) {
  ASSERT_EQ(::access("/usr/bin/etcd", X_OK), 0) << "etcd-server is installed by scripts/setup.sh";
  auto r = TestEtcdCluster(
      1, {"--nemesis", "bridge,slow", "--fault-interval", "300", "--fault-duration", "1000", "--steps", "600"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("PASSED: 600 requests on 6 connections"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(r.out.find("no fault injected"), std::string::npos) << r.out;
}

TEST(ClusterTargets, CliRefusesBadClusterFlags) {
  std::string spec = std::string(DUALSWARM_SOURCE_DIR) + "/specs/kv.dspec";
  auto no_launch =
      testing::RunCommand({DUALSWARM_CLI, "test", "--spec", spec, "--target", "127.0.0.1:1", "--nodes", "3"});
  EXPECT_EQ(no_launch.exit_code, 2);
  EXPECT_NE(no_launch.err.find("--nodes and --connect need --launch"), std::string::npos) << no_launch.err;
  auto bad_node = testing::RunCommand(
      {DUALSWARM_CLI, "test", "--spec", spec, "--launch", RefKv(), "--nodes", "3", "--connect", "3"});
  EXPECT_EQ(bad_node.exit_code, 2);
  EXPECT_NE(bad_node.err.find("--connect must be round-robin or a node's number (0 to 2)"), std::string::npos)
      << bad_node.err;
  auto bad_fault =
      testing::RunCommand({DUALSWARM_CLI, "test", "--spec", spec, "--launch", RefKv(), "--nemesis", "flood"});
  EXPECT_EQ(bad_fault.exit_code, 2);
  EXPECT_NE(bad_fault.err.find("unknown fault \"flood\" (known: pause, kill, partition, split, bridge, slow)"),
            std::string::npos)
      << bad_fault.err;
  auto no_nemesis =
      testing::RunCommand({DUALSWARM_CLI, "test", "--spec", spec, "--launch", RefKv(), "--fault-interval", "30"});
  EXPECT_EQ(no_nemesis.exit_code, 2);
  EXPECT_NE(no_nemesis.err.find("--fault-interval and --fault-duration need --nemesis"), std::string::npos)
      << no_nemesis.err;
  auto too_long = testing::RunCommand(
      {DUALSWARM_CLI, "test", "--spec", spec, "--launch", RefKv(), "--nemesis", "pause", "--fault-duration", "5000"});
  EXPECT_EQ(too_long.exit_code, 2);
  EXPECT_NE(too_long.err.find("not shorter than the response timeout"), std::string::npos) << too_long.err;
  auto too_many = testing::RunCommand({DUALSWARM_CLI, "test", "--spec", spec, "--launch", RefKv(), "--nodes", "17"});
  EXPECT_EQ(too_many.exit_code, 2);
  EXPECT_NE(too_many.err.find("--nodes must be an integer between 1 and 16"), std::string::npos) << too_many.err;
}

}  // namespace
}  // namespace dualswarm::workers
