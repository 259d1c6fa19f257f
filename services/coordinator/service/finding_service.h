// FindingService (proto/dualswarm/v1/finding.proto): failing jobs'
// counterexamples grouped by signature, listed and read with their smallest
// counterexamples.
#ifndef DUALSWARM_SERVICES_COORDINATOR_SERVICE_FINDING_SERVICE_H_
#define DUALSWARM_SERVICES_COORDINATOR_SERVICE_FINDING_SERVICE_H_

#include "dualswarm/v1/finding.grpc.pb.h"
#include "services/coordinator/service/state.h"

namespace dualswarm::coord {

class FindingServiceImpl final : public v1::FindingService::Service {
 public:
  explicit FindingServiceImpl(ServiceState* state) : state_(state) {}

  grpc::Status List(grpc::ServerContext* ctx, const v1::ListFindingsRequest* req,
                    v1::ListFindingsResponse* resp) override;
  grpc::Status Get(grpc::ServerContext* ctx, const v1::GetFindingRequest* req, v1::Finding* resp) override;

 private:
  ServiceState* state_;
};

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_SERVICE_FINDING_SERVICE_H_
