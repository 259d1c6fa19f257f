// The grpc adapter end to end: Debian's etcd (one node, on a free loopback
// port, data in the job's directory) must pass specs/etcd_kv.dspec through
// `dualswarm test --adapter grpc --descriptor-set etcd_kv.pb` (the
// descriptor set protoc makes of specs/etcd_kv.proto) at 4 connections.
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "engine/harness/executor.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"
#include "tests/common/job_runs.h"
#include "tests/common/processes.h"
#include "tests/common/shipped_spec.h"
#include "util/file_tail.h"
#include "workers/adapters/grpc_catalog.h"
#include "workers/runner/runner.h"

namespace dualswarm::workers {
namespace {

// One node; its peer URL is on its second loopback port ({peer_port},
// docs/clusters.md: a single server is a cluster of one). Not a unix
// socket: etcd names one relative to its working directory, which jobs
// running side by side share.
const char kEtcdLaunch[] =
    "/usr/bin/etcd --name ds --data-dir {dir}/data --listen-client-urls http://127.0.0.1:{port} "
    "--advertise-client-urls http://127.0.0.1:{port} --listen-peer-urls http://127.0.0.1:{peer_port} "
    "--initial-advertise-peer-urls http://127.0.0.1:{peer_port} --initial-cluster ds=http://127.0.0.1:{peer_port} "
    "--log-level error --logger zap";

std::string EtcdDescriptorSet() {
  auto bytes = util::ReadFileTail(DS_ETCD_DESCRIPTOR_SET, kMaxDescriptorSetBytes);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.ok() ? *bytes : "";
}

std::vector<std::string> EtcdTestArgs(int seed, int steps) {
  std::vector<std::string> argv = {DUALSWARM_CLI,      "test",
                                   "--spec",           std::string(DUALSWARM_SOURCE_DIR) + "/specs/etcd_kv.dspec",
                                   "--descriptor-set", DS_ETCD_DESCRIPTOR_SET,
                                   "--launch",         kEtcdLaunch,
                                   "--seed",           absl::StrCat(seed),
                                   "--steps",          absl::StrCat(steps),
                                   "--connections",    "4",
                                   "--no-shrink"};
  if (seed % 2 == 1) argv.push_back("--swarm");
  return argv;
}

// etcd documents every reply the spec expects (docs/real-servers.md): a
// finding here is a spec bug or a departure to be documented. Through the
// CLI, as a user runs it (the adapter from the spec's `use grpc`); every
// other seed with a random feature mask. Seeds 1-10 and 11-20 are two
// tests so that each stays within a minute.
void EtcdPassesSeeds(int from, int to) {
  ASSERT_EQ(::access("/usr/bin/etcd", X_OK), 0) << "etcd-server is installed by scripts/setup.sh";
  for (int seed = from; seed <= to; ++seed) {
    auto r = testing::RunCommand(EtcdTestArgs(seed, 2000));
    ASSERT_EQ(r.exit_code, 0) << "seed " << seed << ":\n" << r.out << r.err;
    EXPECT_NE(r.out.find("PASSED: 2000 requests on 4 connections"), std::string::npos) << r.out << r.err;
  }
}

TEST(RealServers, EtcdPassesSeeds1To10Of2000StepsAt4Connections) { EtcdPassesSeeds(1, 10); }
TEST(RealServers, EtcdPassesSeeds11To20Of2000StepsAt4Connections) { EtcdPassesSeeds(11, 20); }

struct WrongSpec {
  const char* what;  // the documented behaviour it gets wrong
  const char* right;
  const char* wrong;
};

// The runs above can fail: each wrong spec is one line of the shipped spec
// changed, and etcd shows the documented behaviour within 2,000 requests
// on every seed tried.
TEST(RealServers, EtcdRejectsSpecsThatAreWrongAboutIt) {
  ASSERT_EQ(::access("/usr/bin/etcd", X_OK), 0) << "etcd-server is installed by scripts/setup.sh";
  auto source = util::ReadFileTail(std::string(DUALSWARM_SOURCE_DIR) + "/specs/etcd_kv.dspec", 1 << 20);
  ASSERT_TRUE(source.ok()) << source.status();
  const WrongSpec wrong[] = {
      {"a new cluster's revision is 1", "var rev: int = 1;", "var rev: int = 0;"},
      {"version counts the puts since the key was created", "version: old.version + 1 },", "version: 1 },"},
      {"later puts keep create_revision", "create_revision: old.create_revision,", "create_revision: rev,"},
      {"a VALUE comparison on an absent key fails", "none => false,", "none => true,"},
      {"DeleteRange counts what it deleted", "deleted: if existed { 1 } else { 0 }", "deleted: 1"},
  };
  for (const WrongSpec& w : wrong) {
    ASSERT_NE(source->find(w.right), std::string::npos) << w.what << ": the shipped spec changed; update this test";
    auto spec = lang::LoadSpec("etcd_kv-wrong.dspec", absl::StrReplaceAll(*source, {{w.right, w.wrong}}));
    ASSERT_TRUE(spec.ok()) << w.what << ": " << spec.status();
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      JobOptions o = testing::JobOptionsFor(kEtcdLaunch, "grpc", seed, 2000);
      o.adapter_config.descriptor_set = EtcdDescriptorSet();
      auto r = RunJob(*spec, o);
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->outcome, Outcome::kSafety) << w.what << ", seed " << seed << ": " << testing::DescribeJobResult(*r);
    }
  }
}

std::string RefEtcd(int mutant) { return absl::StrCat(DS_REF_ETCD, " --port {port} --dir {dir} --mutant ", mutant); }

JobOptions EtcdOptions(const std::string& launch, uint64_t seed) {
  JobOptions o = testing::JobOptionsFor(launch, "grpc", seed, 2000);
  o.adapter_config.descriptor_set = EtcdDescriptorSet();
  return o;
}

TEST(ReferenceServers, CorrectEtcdAcceptedFor20Seeds) {
  auto spec = Shipped("etcd_kv.dspec");
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    JobOptions o = EtcdOptions(RefEtcd(0), seed);
    if (seed % 2 == 1) o.exec.mask = harness::FeatureMask::Random(seed, spec->ast.num_choice_sites);
    auto r = RunJob(spec, o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->outcome, Outcome::kPassed) << "seed " << seed << ": " << testing::DescribeJobResult(*r);
    ASSERT_EQ(r->received, 2000u);
  }
}

// Each mutant (tests/suts/MUTANTS.md) is a safety finding within 2,000
// steps for every one of 5 seeds (they are found in tens of requests; the
// lost update of mutant 4 needs two connections to race).
TEST(ReferenceServers, EveryEtcdMutantIsFound) {
  auto spec = Shipped("etcd_kv.dspec");
  for (int mutant = 1; mutant <= 5; ++mutant) {
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      auto r = RunJob(spec, EtcdOptions(RefEtcd(mutant), seed));
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->outcome, Outcome::kSafety)
          << "mutant " << mutant << ", seed " << seed << ": " << testing::DescribeJobResult(*r);
    }
  }
}

// A finding through the CLI is shrunk (every rerun gets the descriptor
// set) and replays: the race of mutant 4 comes down to a few requests.
TEST(ReferenceServers, EtcdLostUpdateIsShrunkByTheCli) {
  auto r = testing::RunCommand(
      {DUALSWARM_CLI, "test", "--spec", std::string(DUALSWARM_SOURCE_DIR) + "/specs/etcd_kv.dspec", "--descriptor-set",
       DS_ETCD_DESCRIPTOR_SET, "--launch", RefEtcd(4), "--seed", "1", "--steps", "2000", "--shrink-time", "20"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("<== REJECTED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("etcdserverpb.KV/Txn"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("before shrinking"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("shrinking failed"), std::string::npos) << r.out << r.err;
}

// The adapter needs its descriptor set, and only it takes one.
TEST(GrpcAdapter, DescriptorSetIsRequiredAndOnlyForGrpc) {
  std::string spec = std::string(DUALSWARM_SOURCE_DIR) + "/specs/etcd_kv.dspec";
  auto missing = testing::RunCommand({DUALSWARM_CLI, "test", "--spec", spec, "--target", "127.0.0.1:1"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("the grpc adapter needs --descriptor-set FILE"), std::string::npos) << missing.err;
  auto other =
      testing::RunCommand({DUALSWARM_CLI, "test", "--spec", std::string(DUALSWARM_SOURCE_DIR) + "/specs/kv.dspec",
                           "--descriptor-set", DS_ETCD_DESCRIPTOR_SET, "--target", "127.0.0.1:1"});
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("--descriptor-set is for the grpc adapter only"), std::string::npos) << other.err;
}

// A server that answers gRPC calls with bytes that are no HTTP/2 at all
// (tests/suts/garbage_server.cc, modes 0 and 1) is a finding that says so,
// never a crash (gRPC keeps the bytes to itself, so they are not quoted).
TEST(GrpcAdapter, GarbageIsAFindingNeverACrash) {
  for (int mode = 0; mode <= 1; ++mode) {
    JobOptions o =
        testing::JobOptionsFor(absl::StrCat(DS_GARBAGE_SERVER, " --port {port} --mutant ", mode), "grpc", 1, 20);
    o.adapter_config.descriptor_set = EtcdDescriptorSet();
    auto r = RunJob(Shipped("etcd_kv.dspec"), o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->outcome, Outcome::kSafety) << "mode " << mode << ": " << testing::DescribeJobResult(*r);
    EXPECT_NE(r->reason.find("does not speak HTTP/2"), std::string::npos) << r->reason;
  }
}

// Nothing listening: as with the TCP adapters' failed connect, the SUT is
// gone (sut-crash), not a run that passes with nothing answered.
TEST(GrpcAdapter, UnreachableServerIsASutCrash) {
  JobOptions o = testing::JobOptionsFor("", "grpc", 1, 20);
  o.launch.clear();
  o.target = "127.0.0.1:1";
  o.adapter_config.descriptor_set = EtcdDescriptorSet();
  auto r = RunJob(Shipped("etcd_kv.dspec"), o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, Outcome::kSutCrash) << testing::DescribeJobResult(*r);
  EXPECT_NE(r->reason.find("cannot connect to ipv4:127.0.0.1:1"), std::string::npos) << r->reason;
}

}  // namespace
}  // namespace dualswarm::workers
