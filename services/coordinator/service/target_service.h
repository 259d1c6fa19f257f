// TargetService (proto/dualswarm/v1/target.proto): the systems under test
// runs point at. Only admins register targets (a target says what a worker
// executes); submitters may read them.
#ifndef DUALSWARM_SERVICES_COORDINATOR_SERVICE_TARGET_SERVICE_H_
#define DUALSWARM_SERVICES_COORDINATOR_SERVICE_TARGET_SERVICE_H_

#include "dualswarm/v1/target.grpc.pb.h"
#include "services/coordinator/service/state.h"

namespace dualswarm::coord {

class TargetServiceImpl final : public v1::TargetService::Service {
 public:
  explicit TargetServiceImpl(ServiceState* state) : state_(state) {}

  grpc::Status Create(grpc::ServerContext* ctx, const v1::CreateTargetRequest* req, v1::Target* resp) override;
  grpc::Status Get(grpc::ServerContext* ctx, const v1::GetTargetRequest* req, v1::Target* resp) override;
  grpc::Status List(grpc::ServerContext* ctx, const v1::ListTargetsRequest* req,
                    v1::ListTargetsResponse* resp) override;

 private:
  ServiceState* state_;
};

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_SERVICE_TARGET_SERVICE_H_
