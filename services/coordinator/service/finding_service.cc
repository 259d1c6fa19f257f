// FindingService (proto/dualswarm/v1/finding.proto): failing jobs'
// counterexamples grouped by signature, listed and read with their smallest
// counterexamples.
#include "services/coordinator/service/grpc_services.h"

#include "dualswarm/v1/finding.grpc.pb.h"
#include "services/coordinator/proto_convert.h"
#include "services/coordinator/service/handler_util.h"
#include "services/coordinator/service/state.h"

namespace dualswarm::coord {
namespace {

class FindingService final : public ServiceWithState<v1::FindingService::Service> {
 public:
  using ServiceWithState::ServiceWithState;

  grpc::Status List(grpc::ServerContext* ctx, const v1::ListFindingsRequest* req,
                    v1::ListFindingsResponse* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    if (auto st = CheckPageSize(req->page_size()); !st.ok()) return st;
    if (req->target_id() < 0 || req->run_id() < 0) return Invalid("ids must not be negative");
    return ReplyWithPage(state_->store()->ListFindings(req->spec_hash(), req->target_id(), req->run_id(),
                                                       PageOf(req->page_size(), req->page_token())),
                         FindingToProto, resp->mutable_findings(), resp->mutable_next_page_token());
  }

  grpc::Status Get(grpc::ServerContext* ctx, const v1::GetFindingRequest* req, v1::Finding* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    if (auto st = CheckId("id", req->id()); !st.ok()) return st;
    if (req->max_counterexamples() < 0 || req->max_counterexamples() > 100)
      return Invalid("max_counterexamples must be between 0 and 100");
    if (auto st = ReplyWith(state_->store()->GetFinding(req->id()), FindingToProto, resp); !st.ok()) return st;
    auto cxs = state_->store()->ListCounterexamples(req->id(), req->max_counterexamples());
    if (!cxs.ok()) return ToGrpc(cxs.status());
    for (const auto& c : *cxs) CounterexampleToProto(c, resp->add_counterexamples());
    return grpc::Status::OK;
  }
};

}  // namespace

std::unique_ptr<grpc::Service> MakeFindingService(ServiceState* state) {
  return std::make_unique<FindingService>(state);
}

}  // namespace dualswarm::coord
