#include "services/coordinator/service/target_service.h"

#include "services/coordinator/proto_convert.h"
#include "services/coordinator/service/handler_util.h"

namespace dualswarm::coord {

grpc::Status TargetServiceImpl::Create(grpc::ServerContext* ctx, const v1::CreateTargetRequest* req, v1::Target* resp) {
  if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
  return ReplyWith(state_->store()->CreateTarget(TargetFromProto(req->target())), TargetToProto, resp);
}

grpc::Status TargetServiceImpl::Get(grpc::ServerContext* ctx, const v1::GetTargetRequest* req, v1::Target* resp) {
  if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
  return ReplyWithIdOrName(state_->store(), &Store::GetTarget, &Store::GetTargetByName, req->id(), req->name(),
                           TargetToProto, resp);
}

grpc::Status TargetServiceImpl::List(grpc::ServerContext* ctx, const v1::ListTargetsRequest* req,
                                     v1::ListTargetsResponse* resp) {
  if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
  if (auto st = CheckPageSize(req->page_size()); !st.ok()) return st;
  return ReplyWithPage(state_->store()->ListTargets(PageOf(req->page_size(), req->page_token())), TargetToProto,
                       resp->mutable_targets(), resp->mutable_next_page_token());
}

}  // namespace dualswarm::coord
