// The coordinator's gRPC services, one per service of proto/dualswarm/v1/
// (each defined in service/<name>_service.cc, whose top comment says what
// it serves and who may call it), made on the ServiceState they all share.
// CoordinatorServices (services.h) makes them and hands them to the server.
#ifndef DUALSWARM_SERVICES_COORDINATOR_SERVICE_GRPC_SERVICES_H_
#define DUALSWARM_SERVICES_COORDINATOR_SERVICE_GRPC_SERVICES_H_

#include <memory>

#include <grpcpp/impl/service_type.h>

#include "services/coordinator/service/state.h"

namespace dualswarm::coord {

std::unique_ptr<grpc::Service> MakeSpecService(ServiceState* state);
std::unique_ptr<grpc::Service> MakeTargetService(ServiceState* state);
std::unique_ptr<grpc::Service> MakeRunService(ServiceState* state);
std::unique_ptr<grpc::Service> MakeFindingService(ServiceState* state);
std::unique_ptr<grpc::Service> MakeWorkerService(ServiceState* state);
std::unique_ptr<grpc::Service> MakeCampaignService(ServiceState* state);

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_SERVICE_GRPC_SERVICES_H_
