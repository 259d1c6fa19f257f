// Intermediary targets: a launched target may have the tester play N origin
// servers (origins), whose ports its launch command names. The store keeps
// the count and refuses one outside 0..16, on an address target, or with a
// launch that does not name {origin_port}. A run pairs a spec with an
// origin role only with a target that has origins, and any other spec only
// with one that has none. Through the coordinator binary: the count
// round-trips, travels with a leased job, `dualswarm target add --origins N`
// sends it, and a mismatched run is refused with a message saying why.
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/strings/match.h"
#include "dualswarm/v1/run.grpc.pb.h"
#include "dualswarm/v1/spec.grpc.pb.h"
#include "dualswarm/v1/target.grpc.pb.h"
#include "dualswarm/v1/worker.grpc.pb.h"
#include "tests/integration/pg_fixture.h"
#include "tests/integration/target_fixture.h"

namespace dualswarm::coord {
namespace {

using testing::ExpectRefused;
using testing::PgTest;

const char kProxyLaunch[] = "/usr/bin/proxy --port {port} --origin-port {origin_port}";

TargetRow Proxy(const std::string& name, int origins) {
  TargetRow t;
  t.name = name;
  t.adapter = "http";
  t.launch = kProxyLaunch;
  t.origins = origins;
  return t;
}

class OriginTargetStoreTest : public PgTest {};

TEST_F(OriginTargetStoreTest, OriginsRoundTripAndBadOnesAreRefused) {
  DS_ASSERT_OK(store_->CreateTarget(Proxy("proxy", 2)));
  auto got = store_->GetTargetByName("proxy");
  DS_ASSERT_OK(got);
  EXPECT_EQ(got->origins, 2);
  DS_ASSERT_OK(store_->CreateTarget(Proxy("plain", 0)));

  ExpectRefused(store_.get(), Proxy("many", 17), "origins must be between 0 and 16");
  ExpectRefused(store_.get(), Proxy("negative", -1), "origins must be between 0 and 16");
  TargetRow unnamed = Proxy("unnamed", 1);
  unnamed.launch = "/usr/bin/proxy --port {port}";
  ExpectRefused(store_.get(), unnamed, "must name them in its launch command: {origin_port}");
  TargetRow address = Proxy("address", 1);
  address.launch.clear();
  address.address = "127.0.0.1:3128";
  ExpectRefused(store_.get(), address, "origins need a launch command");
  TargetRow resp = Proxy("resp", 1);
  resp.adapter = "resp";
  ExpectRefused(store_.get(), resp, "origins need the http or jsonl adapter");
}

TEST_F(OriginTargetStoreTest, ARunPairsAnOriginRoleWithOrigins) {
  auto proxy_spec = store_->PutSpec("http_proxy", "http_proxy.dspec", "spec http_proxy; // v1", 0, nullptr,
                                    std::vector<std::string>{"request"}, true);
  DS_ASSERT_OK(proxy_spec);
  auto kv_spec =
      store_->PutSpec("kv", "kv.dspec", "spec kv; // v1", 0, nullptr, std::vector<std::string>{"request"}, false);
  DS_ASSERT_OK(kv_spec);
  auto old_spec = store_->PutSpec("old", "old.dspec", "spec old; // v1", 0, nullptr);  // role unknown
  DS_ASSERT_OK(old_spec);
  auto with = store_->CreateTarget(Proxy("with", 1));
  DS_ASSERT_OK(with);
  TargetRow plain_row = Proxy("without", 0);
  auto without = store_->CreateTarget(plain_row);
  DS_ASSERT_OK(without);
  auto run = [&](const SpecRow& spec, const TargetRow& target) {
    RunTemplate t;
    t.spec_hash = spec.hash;
    t.target_id = target.id;
    return store_->SubmitRun(t, "admin");
  };
  DS_ASSERT_OK(run(*proxy_spec, *with));
  DS_ASSERT_OK(run(*kv_spec, *without));
  auto missing = run(*proxy_spec, *without);
  ASSERT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "has an origin role (an intermediary), but target"))
      << missing.status();
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "target add --origins N")) << missing.status();
  auto extra = run(*kv_spec, *with);
  ASSERT_EQ(extra.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      absl::StrContains(extra.status().message(), "plays 1 origin server(s), but spec \"kv\" has no origin role"))
      << extra.status();
  // A version stored before the schema knew roles is not checked.
  DS_ASSERT_OK(run(*old_spec, *with));
  // A campaign is checked when it is created, not only when it fires.
  CampaignRow c;
  c.name = "nightly-proxy";
  c.cron = "0 3 * * *";
  c.tmpl.spec_hash = proxy_spec->hash;
  c.tmpl.target_id = without->id;
  auto campaign = store_->CreateCampaign(c, 0);
  ASSERT_EQ(campaign.status().code(), absl::StatusCode::kInvalidArgument) << campaign.status();
  EXPECT_TRUE(absl::StrContains(campaign.status().message(), "has no origins")) << campaign.status();
}

using OriginTargetCoordinatorTest = testing::TargetCoordinatorTest;

TEST_F(OriginTargetCoordinatorTest, OriginsTravelWithLeasedJobsAndTheCliSendsThem) {
  auto added = Cli({"target", "add", "proxy", "--adapter", "http", "--launch", kProxyLaunch, "--origins", "1"});
  ASSERT_EQ(added.exit_code, 0) << added.out << added.err;
  EXPECT_TRUE(absl::StrContains(added.out, ", 1 origin endpoint")) << added.out;
  auto refused =
      Cli({"target", "add", "bad", "--adapter", "http", "--launch", "/usr/bin/proxy --port {port}", "--origins", "1"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(refused.err, "{origin_port}")) << refused.out << refused.err;
  auto listed = Cli({"target", "list"});
  EXPECT_TRUE(absl::StrContains(listed.out, "1 origin endpoint")) << listed.out;

  v1::ListTargetsResponse targets;
  ASSERT_TRUE(v1::TargetService::NewStub(coordinator_->channel())
                  ->List(Ctx(admin_).get(), v1::ListTargetsRequest(), &targets)
                  .ok());
  ASSERT_EQ(targets.targets_size(), 1);
  EXPECT_EQ(targets.targets(0).origins(), 1);
  v1::LeasedJob job;
  ASSERT_NO_FATAL_FAILURE(LeaseOneJob(targets.targets(0).id(), "http_proxy.dspec", "http", &job));
  EXPECT_EQ(job.target().origins(), 1);
}

}  // namespace
}  // namespace dualswarm::coord
