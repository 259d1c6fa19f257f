// SpecService (proto/dualswarm/v1/spec.proto): specs uploaded, read and
// validated. An upload is checked (size, no NUL, the file name on one line)
// and must load before it is stored; versions are content-addressed.
#ifndef DUALSWARM_SERVICES_COORDINATOR_SERVICE_SPEC_SERVICE_H_
#define DUALSWARM_SERVICES_COORDINATOR_SERVICE_SPEC_SERVICE_H_

#include "dualswarm/v1/spec.grpc.pb.h"
#include "services/coordinator/service/state.h"

namespace dualswarm::coord {

class SpecServiceImpl final : public v1::SpecService::Service {
 public:
  explicit SpecServiceImpl(ServiceState* state) : state_(state) {}

  grpc::Status Create(grpc::ServerContext* ctx, const v1::CreateSpecRequest* req,
                      v1::CreateSpecResponse* resp) override;
  grpc::Status Get(grpc::ServerContext* ctx, const v1::GetSpecRequest* req, v1::Spec* resp) override;
  grpc::Status List(grpc::ServerContext* ctx, const v1::ListSpecsRequest* req, v1::ListSpecsResponse* resp) override;
  grpc::Status Validate(grpc::ServerContext* ctx, const v1::ValidateSpecRequest* req,
                        v1::ValidateSpecResponse* resp) override;

 private:
  ServiceState* state_;
};

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_SERVICE_SPEC_SERVICE_H_
