// TargetService (proto/dualswarm/v1/target.proto): the systems under test
// runs point at. Only admins register targets (a target says what a worker
// executes); submitters may read them.
#include "services/coordinator/service/grpc_services.h"

#include "dualswarm/v1/target.grpc.pb.h"
#include "services/coordinator/proto_convert.h"
#include "services/coordinator/service/handler_util.h"
#include "services/coordinator/service/state.h"

namespace dualswarm::coord {
namespace {

class TargetService final : public ServiceWithState<v1::TargetService::Service> {
 public:
  using ServiceWithState::ServiceWithState;

  grpc::Status Create(grpc::ServerContext* ctx, const v1::CreateTargetRequest* req, v1::Target* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    return ReplyWith(state_->store()->CreateTarget(TargetFromProto(req->target())), TargetToProto, resp);
  }

  grpc::Status Get(grpc::ServerContext* ctx, const v1::GetTargetRequest* req, v1::Target* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    return ReplyWithIdOrName(state_->store(), &Store::GetTarget, &Store::GetTargetByName, req->id(), req->name(),
                             TargetToProto, resp);
  }

  grpc::Status List(grpc::ServerContext* ctx, const v1::ListTargetsRequest* req,
                    v1::ListTargetsResponse* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    if (auto st = CheckPageSize(req->page_size()); !st.ok()) return st;
    return ReplyWithPage(state_->store()->ListTargets(PageOf(req->page_size(), req->page_token())), TargetToProto,
                         resp->mutable_targets(), resp->mutable_next_page_token());
  }
};

}  // namespace

std::unique_ptr<grpc::Service> MakeTargetService(ServiceState* state) { return std::make_unique<TargetService>(state); }

}  // namespace dualswarm::coord
