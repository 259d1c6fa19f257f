// Cluster targets: a launched target may start N nodes from its command
// (nodes) and send every connection to one of them (connect_node; absent:
// round-robin). The store keeps both and fills in one node, round-robin,
// for a target that names neither; it refuses a node count outside 1..16,
// nodes or a connect node on an address target, and a connect node that is
// not a node of the cluster, each with a message that says so. Then
// through the coordinator binary: TargetService round-trips both (a
// round-robin target has no connect_node), a leased job carries them to
// the worker, and `dualswarm target add --nodes N --connect K` sends them.
// A cluster's nemesis (faults while each job runs, and their timing) is
// kept, checked (known faults, partitions only between 2 or more nodes,
// only for launched targets) and leased with the job.
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/strings/match.h"
#include "dualswarm/v1/run.grpc.pb.h"
#include "dualswarm/v1/target.grpc.pb.h"
#include "dualswarm/v1/worker.grpc.pb.h"
#include "tests/integration/pg_fixture.h"
#include "tests/integration/target_fixture.h"

namespace dualswarm::coord {
namespace {

using testing::ExpectRefused;
using testing::PgTest;

const char kLaunch[] = "/usr/bin/server --port {port} --peers {peers}";

TargetRow Cluster(const std::string& name, int nodes, int connect_node = -1) {
  TargetRow t;
  t.name = name;
  t.adapter = "jsonl";
  t.launch = kLaunch;
  t.nodes = nodes;
  t.connect_node = connect_node;
  return t;
}

class ClusterTargetStoreTest : public PgTest {};

TEST_F(ClusterTargetStoreTest, NodesAndTheConnectNodeRoundTrip) {
  auto rr = store_->CreateTarget(Cluster("rr", 3));
  DS_ASSERT_OK(rr);
  EXPECT_EQ(rr->nodes, 3);
  EXPECT_EQ(rr->connect_node, -1);
  auto one = store_->CreateTarget(Cluster("one", 16, 15));
  DS_ASSERT_OK(one);
  auto got = store_->GetTargetByName("one");
  DS_ASSERT_OK(got);
  EXPECT_EQ(got->nodes, 16);
  EXPECT_EQ(got->connect_node, 15);
  // Neither named (an old client's target): one node, round-robin.
  auto plain = store_->CreateTarget(Cluster("plain", 0));
  DS_ASSERT_OK(plain);
  EXPECT_EQ(plain->nodes, 1);
  EXPECT_EQ(plain->connect_node, -1);

  auto listed = store_->ListTargets(Page{});
  DS_ASSERT_OK(listed);
  ASSERT_EQ(listed->items.size(), 3u);
  EXPECT_EQ(listed->items[0].nodes, 3);
  EXPECT_EQ(listed->items[1].connect_node, 15);
  EXPECT_EQ(listed->items[2].nodes, 1);
}

TEST_F(ClusterTargetStoreTest, BadClustersAreRefusedWithTheirReasons) {
  ExpectRefused(store_.get(), Cluster("many", 17), "nodes must be between 1 and 16 (got 17)");
  ExpectRefused(store_.get(), Cluster("negative", -2), "nodes must be between 1 and 16 (got -2)");
  ExpectRefused(store_.get(), Cluster("past", 3, 3), "connect_node 3 is not a node of this 3-node target (0 to 2");
  ExpectRefused(store_.get(), Cluster("below", 3, -2), "connect_node -2 is not a node");
  TargetRow address = Cluster("address", 2);
  address.launch.clear();
  address.address = "127.0.0.1:7000";
  ExpectRefused(store_.get(), address, "nodes and connect_node need a launch command");
  address.nodes = 1;
  address.connect_node = 0;
  ExpectRefused(store_.get(), address, "nodes and connect_node need a launch command");

  auto listed = store_->ListTargets(Page{});
  DS_ASSERT_OK(listed);
  EXPECT_TRUE(listed->items.empty()) << "a refused target was stored";
}

TEST_F(ClusterTargetStoreTest, TheNemesisRoundTripsAndBadOnesAreRefused) {
  TargetRow t = Cluster("faulty", 3);
  t.nemesis = "pause,kill,partition";
  t.fault_interval_ms = 300;
  t.fault_duration_ms = 200;
  DS_ASSERT_OK(store_->CreateTarget(t));
  auto got = store_->GetTargetByName("faulty");
  DS_ASSERT_OK(got);
  EXPECT_EQ(got->nemesis, "pause,kill,partition");
  EXPECT_EQ(got->fault_interval_ms, 300);
  EXPECT_EQ(got->fault_duration_ms, 200);

  TargetRow bad = Cluster("unknown", 3);
  bad.nemesis = "pause,flood";
  ExpectRefused(store_.get(), bad, "unknown fault \"flood\" (known: pause, kill, partition, split, bridge, slow)");
  bad = Cluster("alone", 1);
  bad.nemesis = "partition";
  ExpectRefused(store_.get(), bad, "a partition needs a cluster of at least 2 nodes");
  bad = Cluster("timing", 3);
  bad.fault_duration_ms = 100;
  ExpectRefused(store_.get(), bad, "need a nemesis");
  bad.nemesis = "kill";
  bad.fault_interval_ms = -1;
  ExpectRefused(store_.get(), bad, "between 0 and one hour");
  bad = Cluster("address", 1);
  bad.launch.clear();
  bad.address = "127.0.0.1:7000";
  bad.nemesis = "kill";
  ExpectRefused(store_.get(), bad, "a nemesis needs a launch command");
}

// The same through the coordinator binary, its worker protocol and the CLI.
using ClusterTargetCoordinatorTest = testing::TargetCoordinatorTest;

TEST_F(ClusterTargetCoordinatorTest, NodesRoundTripAndTravelWithLeasedJobs) {
  auto targets = v1::TargetService::NewStub(coordinator_->channel());
  v1::CreateTargetRequest treq;
  treq.mutable_target()->set_name("kv3");
  treq.mutable_target()->set_adapter("jsonl");
  treq.mutable_target()->set_launch(kLaunch);
  treq.mutable_target()->set_nodes(3);
  treq.mutable_target()->set_connect_node(0);  // node 0: a value proto3 would not send without `optional`
  v1::Target created;
  grpc::Status st = targets->Create(Ctx(admin_).get(), treq, &created);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(created.nodes(), 3);
  ASSERT_TRUE(created.has_connect_node());
  EXPECT_EQ(created.connect_node(), 0);

  treq.mutable_target()->set_name("kv3rr");
  treq.mutable_target()->clear_connect_node();
  ASSERT_TRUE(targets->Create(Ctx(admin_).get(), treq, &created).ok());
  EXPECT_FALSE(created.has_connect_node());
  treq.mutable_target()->set_name("bad");
  treq.mutable_target()->set_connect_node(7);
  st = targets->Create(Ctx(admin_).get(), treq, &created);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(st.error_message(), "connect_node 7 is not a node")) << st.error_message();

  v1::ListTargetsResponse listed;
  ASSERT_TRUE(targets->List(Ctx(admin_).get(), v1::ListTargetsRequest(), &listed).ok());
  ASSERT_EQ(listed.targets_size(), 2);
  EXPECT_EQ(listed.targets(0).nodes(), 3);
  EXPECT_TRUE(listed.targets(0).has_connect_node());
  EXPECT_FALSE(listed.targets(1).has_connect_node());

  v1::LeasedJob job;
  ASSERT_NO_FATAL_FAILURE(LeaseOneJob(listed.targets(0).id(), "kv.dspec", "jsonl", &job));
  EXPECT_EQ(job.target().nodes(), 3);
  ASSERT_TRUE(job.target().has_connect_node());
  EXPECT_EQ(job.target().connect_node(), 0);

  // A nemesis travels with the job too.
  treq.mutable_target()->set_name("kv3faults");
  treq.mutable_target()->clear_connect_node();
  treq.mutable_target()->set_nemesis("kill,partition");
  treq.mutable_target()->set_fault_interval_ms(400);
  ASSERT_TRUE(targets->Create(Ctx(admin_).get(), treq, &created).ok());
  EXPECT_EQ(created.nemesis(), "kill,partition");
  ASSERT_NO_FATAL_FAILURE(LeaseOneJob(created.id(), "kv.dspec", "jsonl", &job));
  EXPECT_EQ(job.target().nemesis(), "kill,partition");
  EXPECT_EQ(job.target().fault_interval_ms(), 400);
  EXPECT_EQ(job.target().fault_duration_ms(), 0);

  // The job reports the faults it injected; a negative count is refused.
  auto workers = v1::WorkerService::NewStub(coordinator_->channel());
  v1::CompleteJobRequest done;
  done.set_job_id(job.job_id());
  done.set_lease_token(job.lease_token());
  done.set_outcome(v1::JOB_OUTCOME_PASSED);
  done.set_faults(-1);
  v1::CompleteJobResponse completed;
  st = workers->CompleteJob(Ctx(worker_).get(), done, &completed);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(st.error_message(), "faults must not be negative")) << st.error_message();
  done.set_faults(4);
  st = workers->CompleteJob(Ctx(worker_).get(), done, &completed);
  ASSERT_TRUE(st.ok()) << st.error_message();
  v1::ListJobsRequest lreq;
  lreq.set_run_id(job.run_id());
  v1::ListJobsResponse jobs;
  ASSERT_TRUE(v1::RunService::NewStub(coordinator_->channel())->ListJobs(Ctx(admin_).get(), lreq, &jobs).ok());
  ASSERT_EQ(jobs.jobs_size(), 1);
  EXPECT_EQ(jobs.jobs(0).faults(), 4);
}

TEST_F(ClusterTargetCoordinatorTest, TargetAddSendsNodesAndListShowsThem) {
  auto r = Cli({"target", "add", "kv3", "--adapter", "jsonl", "--launch", kLaunch, "--nodes", "3", "--connect", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, ", 3 nodes, all connections to node 1, ready tcp")) << r.out;
  r = Cli(
      {"target", "add", "kv5", "--adapter", "jsonl", "--launch", kLaunch, "--nodes", "5", "--connect", "round-robin"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  r = Cli({"target", "add", "kv", "--adapter", "jsonl", "--launch", kLaunch});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(absl::StrContains(r.out, "nodes")) << r.out;
  r = Cli({"target", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "launch, 3 nodes, all connections to node 1: /usr/bin/server")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "launch, 5 nodes, round-robin: /usr/bin/server")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "launch: /usr/bin/server")) << r.out;
  r = Cli({"target", "list", "--json"});
  // Round-robin targets have no connectNode: only kv3's is there.
  EXPECT_TRUE(absl::StrContains(r.out, "\"nodes\":3,")) << r.out;
  ASSERT_NE(r.out.find("\"connectNode\":1}"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"connectNode\""), r.out.rfind("\"connectNode\":1}")) << r.out;

  r = Cli({"target", "add", "kvf", "--adapter", "jsonl", "--launch", kLaunch, "--nodes", "3", "--nemesis",
           "pause,partition", "--fault-duration", "250"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out,
                                ", 3 nodes, round-robin, nemesis pause,partition (a fault every ~1000 ms for "
                                "250 ms), ready tcp"))
      << r.out;
  r = Cli({"target", "add", "kvg", "--adapter", "jsonl", "--launch", kLaunch, "--nemesis", "partition"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "a partition needs a cluster of at least 2 nodes")) << r.err;
  r = Cli({"target", "add", "kvh", "--adapter", "jsonl", "--launch", kLaunch, "--nemesis", "kill", "--fault-interval",
           "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--fault-interval must be between 1 and 3600000 ms")) << r.err;

  r = Cli({"target", "add", "k0", "--adapter", "jsonl", "--launch", kLaunch, "--nodes", "17"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--nodes must be between 1 and 16")) << r.err;
  r = Cli({"target", "add", "k1", "--adapter", "jsonl", "--launch", kLaunch, "--connect", "first"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--connect must be round-robin or a node's number, not 'first'")) << r.err;
  r = Cli({"target", "add", "k2", "--adapter", "jsonl", "--launch", kLaunch, "--nodes", "3", "--connect", "3"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "INVALID_ARGUMENT: connect_node 3 is not a node")) << r.err;
  r = Cli({"target", "add", "k3", "--adapter", "jsonl", "--address", "127.0.0.1:7000", "--nodes", "2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "nodes and connect_node need a launch command")) << r.err;
}

}  // namespace
}  // namespace dualswarm::coord
