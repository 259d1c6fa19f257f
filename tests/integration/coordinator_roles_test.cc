// The coordinator's role table and auth gate (services/coordinator/service/
// auth.h) without a database: every RPC of every service has a row, a method
// without one is refused to everybody (deny by default), and the
// interceptor's verdict reaches the handler of a real in-process server — or
// the handler refuses when no interceptor decided.
#include <memory>
#include <string>

#include <google/protobuf/descriptor.h>
#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "dualswarm/v1/campaign.pb.h"
#include "dualswarm/v1/finding.pb.h"
#include "dualswarm/v1/run.pb.h"
#include "dualswarm/v1/spec.grpc.pb.h"
#include "dualswarm/v1/target.pb.h"
#include "dualswarm/v1/worker.pb.h"
#include "gtest/gtest.h"
#include "services/coordinator/service/auth.h"

namespace dualswarm::coord {
namespace {

namespace v1 = ::dualswarm::v1;

TEST(RoleTableTest, EveryServedMethodHasARow) {
  // Every service of every API file (a message of each file pulls it in).
  int methods = 0;
  for (const google::protobuf::FileDescriptor* file :
       {v1::Spec::descriptor()->file(), v1::Target::descriptor()->file(), v1::Run::descriptor()->file(),
        v1::Finding::descriptor()->file(), v1::Campaign::descriptor()->file(), v1::LeasedJob::descriptor()->file()}) {
    for (int s = 0; s < file->service_count(); ++s) {
      const google::protobuf::ServiceDescriptor* service = file->service(s);
      for (int i = 0; i < service->method_count(); ++i, ++methods) {
        std::string method = absl::StrCat("/", service->full_name(), "/", service->method(i)->name());
        EXPECT_TRUE(InRoleTable(method)) << method << " has no row in the role table";
      }
    }
  }
  EXPECT_EQ(methods, 28);
}

TEST(RoleTableTest, AMethodWithoutARowIsRefusedToEveryone) {
  for (const char* role : {"admin", "submitter", "worker"}) {
    absl::Status st = CheckRole("/dualswarm.v1.SpecService/Delete", Caller{role, "x"});
    EXPECT_TRUE(absl::IsPermissionDenied(st)) << role << ": " << st;
    EXPECT_FALSE(InRoleTable("/dualswarm.v1.SpecService/Delete"));
  }
  EXPECT_TRUE(absl::IsPermissionDenied(CheckRole("", Caller{"admin", "x"})));
}

TEST(RoleTableTest, RolesAsDocumented) {
  const std::string create_target = "/dualswarm.v1.TargetService/Create";
  EXPECT_TRUE(CheckRole(create_target, Caller{"admin", "a"}).ok());
  absl::Status st = CheckRole(create_target, Caller{"submitter", "s"});
  EXPECT_TRUE(absl::IsPermissionDenied(st));
  EXPECT_EQ(st.message(), "role \"submitter\" may not call this method");
  EXPECT_TRUE(CheckRole("/dualswarm.v1.RunService/Submit", Caller{"submitter", "s"}).ok());
  EXPECT_TRUE(absl::IsPermissionDenied(CheckRole("/dualswarm.v1.RunService/Submit", Caller{"worker", "w"})));
  EXPECT_TRUE(CheckRole("/dualswarm.v1.WorkerService/LeaseJobs", Caller{"worker", "w"}).ok());
  EXPECT_TRUE(absl::IsPermissionDenied(CheckRole("/dualswarm.v1.WorkerService/LeaseJobs", Caller{"submitter", "s"})));
}

// SpecService.Get that only reports the verdict: OK with the caller's name
// in the spec's name field.
class VerdictEcho final : public v1::SpecService::Service {
 public:
  explicit VerdictEcho(AuthGate* gate) : gate_(gate) {}
  grpc::Status Get(grpc::ServerContext* ctx, const v1::GetSpecRequest*, v1::Spec* resp) override {
    Caller caller;
    if (auto st = gate_->Admit(ctx, &caller); !st.ok()) return st;
    resp->set_name(absl::StrCat(caller.role, "/", caller.name));
    return grpc::Status::OK;
  }

 private:
  AuthGate* gate_;
};

grpc::Status CallGet(grpc::Server* server, const std::string& authorization, v1::Spec* out) {
  auto stub = v1::SpecService::NewStub(server->InProcessChannel(grpc::ChannelArguments()));
  grpc::ClientContext ctx;
  if (!authorization.empty()) ctx.AddMetadata("authorization", authorization);
  return stub->Get(&ctx, v1::GetSpecRequest(), out);
}

std::unique_ptr<grpc::Server> Serve(VerdictEcho* service, AuthGate* gate) {
  grpc::ServerBuilder builder;
  builder.RegisterService(service);
  if (gate != nullptr) {
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
    interceptors.push_back(gate->Interceptor());
    builder.experimental().SetInterceptorCreators(std::move(interceptors));
  }
  return builder.BuildAndStart();
}

TEST(AuthGateTest, TheInterceptorsVerdictReachesTheHandler) {
  AuthGate gate(/*store=*/nullptr, /*require_auth=*/true, 1000);  // tokens never reach the store below
  VerdictEcho service(&gate);
  auto server = Serve(&service, &gate);
  ASSERT_NE(server, nullptr);
  v1::Spec out;
  grpc::Status st = CallGet(server.get(), "", &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED) << st.error_message();
  EXPECT_EQ(st.error_message(), "missing bearer token (metadata \"authorization: Bearer TOKEN\")");
  st = CallGet(server.get(), "Basic YWRtaW46YWRtaW4=", &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED) << st.error_message();
  EXPECT_EQ(st.error_message(), "malformed authorization metadata");
  server->Shutdown();
}

TEST(AuthGateTest, AuthOffMakesEveryCallerAnAnonymousAdmin) {
  AuthGate gate(nullptr, /*require_auth=*/false, 1000);
  VerdictEcho service(&gate);
  auto server = Serve(&service, &gate);
  ASSERT_NE(server, nullptr);
  v1::Spec out;
  grpc::Status st = CallGet(server.get(), "", &out);
  EXPECT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(out.name(), "admin/anonymous");
  server->Shutdown();
}

TEST(AuthGateTest, WithoutTheInterceptorEveryCallIsRefused) {
  AuthGate gate(nullptr, /*require_auth=*/false, 1000);
  VerdictEcho service(&gate);
  auto server = Serve(&service, nullptr);
  ASSERT_NE(server, nullptr);
  v1::Spec out;
  grpc::Status st = CallGet(server.get(), "", &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INTERNAL) << st.error_message();
  server->Shutdown();
}

}  // namespace
}  // namespace dualswarm::coord
