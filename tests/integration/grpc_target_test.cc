// grpc targets carry their services' protobuf descriptor set: the store
// keeps the bytes as given (NULs and all), refuses a grpc target without a
// set or with one that does not build, a set over 1 MiB and a set on a
// target of another adapter, each with a message that says so; listings
// leave the bytes out but give their size. Then through the coordinator
// binary: TargetService round-trips the set, a leased job carries it to the
// worker, and `dualswarm target add --descriptor-set FILE` sends it.
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <grpcpp/grpcpp.h>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "dualswarm/v1/target.grpc.pb.h"
#include "services/coordinator/store/limits.h"
#include "tests/common/processes.h"
#include "tests/integration/pg_fixture.h"
#include "tests/integration/target_fixture.h"

namespace dualswarm::coord {
namespace {

namespace pb = ::google::protobuf;
using testing::ExpectRefused;
using testing::PgTest;

// `file` and everything it imports, imports first: what protoc
// --include_imports writes.
void AddWithImports(const pb::FileDescriptor* file, absl::flat_hash_set<std::string>* seen,
                    pb::FileDescriptorSet* set) {
  if (!seen->insert(file->name()).second) return;
  for (int i = 0; i < file->dependency_count(); ++i) AddWithImports(file->dependency(i), seen, set);
  file->CopyTo(set->add_file());
}

// A real descriptor set: the coordinator's own TargetService (it imports
// google/protobuf/timestamp.proto).
std::string TargetServiceDescriptorSet() {
  pb::FileDescriptorSet set;
  absl::flat_hash_set<std::string> seen;
  AddWithImports(v1::Target::descriptor()->file(), &seen, &set);
  return set.SerializeAsString();
}

TargetRow GrpcTarget(const std::string& name, const std::string& descriptor_set) {
  TargetRow t;
  t.name = name;
  t.adapter = "grpc";
  t.launch = "/usr/bin/server --port {port}";
  t.descriptor_set = descriptor_set;
  return t;
}

class GrpcTargetStoreTest : public PgTest {};

TEST_F(GrpcTargetStoreTest, AGrpcTargetKeepsItsDescriptorSetByteForByte) {
  const std::string set = TargetServiceDescriptorSet();
  ASSERT_NE(set.find('\0'), std::string::npos) << "a set with NUL bytes tests that they survive";
  auto created = store_->CreateTarget(GrpcTarget("coordinator-targets", set));
  DS_ASSERT_OK(created);
  EXPECT_EQ(created->descriptor_set, set);
  EXPECT_EQ(created->descriptor_set_size, static_cast<int64_t>(set.size()));

  auto by_id = store_->GetTarget(created->id);
  DS_ASSERT_OK(by_id);
  EXPECT_EQ(by_id->descriptor_set, set);
  auto by_name = store_->GetTargetByName("coordinator-targets");
  DS_ASSERT_OK(by_name);
  EXPECT_EQ(by_name->descriptor_set, set);
  EXPECT_EQ(by_name->descriptor_set_size, static_cast<int64_t>(set.size()));

  // Listings give the size only: a page of 1 MiB sets would not fit a reply.
  TargetRow http;
  http.name = "web";
  http.adapter = "http";
  http.address = "127.0.0.1:8080";
  DS_ASSERT_OK(store_->CreateTarget(http));
  auto listed = store_->ListTargets(Page{});
  DS_ASSERT_OK(listed);
  ASSERT_EQ(listed->items.size(), 2u);
  EXPECT_EQ(listed->items[0].name, "coordinator-targets");
  EXPECT_TRUE(listed->items[0].descriptor_set.empty());
  EXPECT_EQ(listed->items[0].descriptor_set_size, static_cast<int64_t>(set.size()));
  EXPECT_EQ(listed->items[1].descriptor_set_size, 0);
}

TEST_F(GrpcTargetStoreTest, ADescriptorSetIsRequiredForGrpcValidAndOnlyForGrpc) {
  ExpectRefused(store_.get(), GrpcTarget("none", ""), "a grpc target needs a descriptor set");
  ExpectRefused(store_.get(), GrpcTarget("garbage", "not a descriptor set"),
                "bad descriptor set: the descriptor set is not a google.protobuf.FileDescriptorSet");

  // A set whose import is missing parses but does not build.
  pb::FileDescriptorSet partial;
  v1::Target::descriptor()->file()->CopyTo(partial.add_file());
  ExpectRefused(store_.get(), GrpcTarget("partial", partial.SerializeAsString()), "does not build");

  // Over the limit: refused before it is parsed, the limit named.
  std::string big = TargetServiceDescriptorSet();
  big.resize(kMaxTargetDescriptorSetBytes + 1, '\0');
  ExpectRefused(store_.get(), GrpcTarget("big", big), "descriptor set exceeds 1 MiB");

  TargetRow kv = GrpcTarget("kv", TargetServiceDescriptorSet());
  kv.adapter = "jsonl";
  ExpectRefused(store_.get(), kv, "a descriptor set is for grpc targets only");

  auto listed = store_->ListTargets(Page{});
  DS_ASSERT_OK(listed);
  EXPECT_TRUE(listed->items.empty()) << "a refused target was stored";
}

// The same through the coordinator binary, its worker protocol and the CLI.
using GrpcTargetCoordinatorTest = testing::TargetCoordinatorTest;

TEST_F(GrpcTargetCoordinatorTest, TheSetRoundTripsAndTravelsWithLeasedJobs) {
  auto channel = coordinator_->channel();
  auto targets = v1::TargetService::NewStub(channel);
  const std::string set = TargetServiceDescriptorSet();
  v1::CreateTargetRequest treq;
  treq.mutable_target()->set_name("g");
  treq.mutable_target()->set_adapter("grpc");
  treq.mutable_target()->set_launch("/usr/bin/server --port {port}");
  treq.mutable_target()->set_descriptor_set(set);
  v1::Target created;
  grpc::Status st = targets->Create(Ctx(admin_).get(), treq, &created);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(created.descriptor_set(), set);
  EXPECT_EQ(created.descriptor_set_size(), static_cast<int64_t>(set.size()));
  v1::GetTargetRequest get;
  get.set_name("g");
  v1::Target got;
  ASSERT_TRUE(targets->Get(Ctx(admin_).get(), get, &got).ok());
  EXPECT_EQ(got.descriptor_set(), set);
  v1::ListTargetsResponse listed;
  ASSERT_TRUE(targets->List(Ctx(admin_).get(), v1::ListTargetsRequest(), &listed).ok());
  ASSERT_EQ(listed.targets_size(), 1);
  EXPECT_TRUE(listed.targets(0).descriptor_set().empty());
  EXPECT_EQ(listed.targets(0).descriptor_set_size(), static_cast<int64_t>(set.size()));

  treq.mutable_target()->set_name("g2");
  treq.mutable_target()->clear_descriptor_set();
  st = targets->Create(Ctx(admin_).get(), treq, &created);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(st.error_message(), "a grpc target needs a descriptor set")) << st.error_message();

  // A job of the target reaches a worker with the set.
  v1::LeasedJob job;
  ASSERT_NO_FATAL_FAILURE(LeaseOneJob(got.id(), "etcd_kv.dspec", "grpc", &job));
  EXPECT_EQ(job.target().descriptor_set(), set);
}

TEST_F(GrpcTargetCoordinatorTest, TargetAddSendsTheFileAndListShowsItsSize) {
  const std::string set = TargetServiceDescriptorSet();
  const std::string file = tmp_ + "/targets.pb";
  std::ofstream(file, std::ios::binary) << set;
  const std::string launch = "/usr/bin/server --port {port}";
  auto r = Cli({"target", "add", "g", "--adapter", "grpc", "--launch", launch, "--descriptor-set", file});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, absl::StrCat("grpc (descriptor set ", set.size(), " bytes)"))) << r.out;
  r = Cli({"target", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, absl::StrCat("descriptor set ", set.size(), " bytes"))) << r.out;

  r = Cli({"target", "add", "g2", "--adapter", "grpc", "--launch", launch});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "the grpc adapter needs --descriptor-set FILE")) << r.err;
  r = Cli({"target", "add", "kv", "--adapter", "jsonl", "--launch", launch, "--descriptor-set", file});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--descriptor-set is for the grpc adapter only")) << r.err;
  const std::string garbage = tmp_ + "/garbage.pb";
  std::ofstream(garbage, std::ios::binary) << "not a descriptor set";
  r = Cli({"target", "add", "g3", "--adapter", "grpc", "--launch", launch, "--descriptor-set", garbage});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "bad descriptor set")) << r.err;
}

}  // namespace
}  // namespace dualswarm::coord
